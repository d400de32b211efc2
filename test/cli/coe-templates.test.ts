import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixture, type CoeFixture } from './fixture.ts';

let f: CoeFixture;
before(async () => {
  f = await startFixture();
});
after(() => f.close());

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

test('template list shows the operator templates as uuid/name/tags columns', async () => {
  const r = await f.coe(['cluster', 'template', 'list']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[1]!, /^\| uuid +\| name +\| tags +\|$/);
  assert.ok(lines.some((l) => /\| k8s-v1\.32 +\|/.test(l)));
});

test('template create prints the accepted line and the Field/Value table with "-" for nulls', async () => {
  const r = await f.coe([
    'cluster',
    'template',
    'create',
    'k8s-custom',
    '--coe',
    'kubernetes',
    '--image',
    'ubuntu-22.04-kube',
    '--external-network',
    'public',
    '--master-flavor',
    'm1.medium',
    '--docker-volume-size',
    '10',
    '--network-driver',
    'calico',
    '--labels',
    'kube_tag=v1.32.5,container_runtime=containerd',
    '--master-lb-enabled',
    '--tags',
    'a,b',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], 'Request to create cluster template k8s-custom accepted');
  assert.match(lines[1]!, /^\+-{23}\+-+\+$/);
  assert.match(lines[2]!, /^\| Field {17}\| Value +\|$/);
  const row = (name: string) =>
    lines
      .find((l) => l.startsWith(`| ${name} `))
      ?.split('|')[2]
      ?.trim();
  assert.equal(row('name'), 'k8s-custom');
  assert.equal(row('labels'), "{'kube_tag': 'v1.32.5', 'container_runtime': 'containerd'}");
  assert.equal(row('master_lb_enabled'), 'True');
  assert.equal(row('docker_volume_size'), '10');
  assert.equal(row('dns_nameserver'), '8.8.8.8');
  assert.equal(row('flavor_id'), 'm1.medium');
  assert.equal(row('keypair_id'), '-');
  assert.equal(row('tags'), 'a,b');
  assert.match(row('uuid') ?? '', UUID);
});

test('template show -f json round-trips the server object, nulls as null', async () => {
  const r = await f.coe(['cluster', 'template', 'show', 'k8s-custom', '-f', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const t = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.equal(t.name, 'k8s-custom');
  assert.equal(t.keypair_id, null);
  assert.deepEqual(t.labels, { kube_tag: 'v1.32.5', container_runtime: 'containerd' });
  assert.equal(Object.keys(t).length, 32);
  const byUuid = await f.coe(['cluster', 'template', 'show', t.uuid as string, '-f', 'json']);
  assert.deepEqual(JSON.parse(byUuid.stdout), t);
});

test('template create with -f json keeps stdout pure JSON and the notice on stderr', async () => {
  const r = await f.coe([
    'cluster',
    'template',
    'create',
    'k8s-json',
    '--coe',
    'kubernetes',
    '--image',
    'ubuntu-22.04-kube',
    '--external-network',
    'public',
    '-f',
    'json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { name: string }).name, 'k8s-json');
  assert.match(r.stderr, /^Request to create cluster template k8s-json accepted\n$/);
});

test('template update sends labels as Magnum expects and prints the updated template', async () => {
  const r = await f.coe([
    'cluster',
    'template',
    'update',
    'k8s-custom',
    'replace',
    'labels=kube_tag=v1.33.1',
    'docker_volume_size=20',
    '-f',
    'json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const t = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.deepEqual(t.labels, { kube_tag: 'v1.33.1' });
  assert.equal(t.docker_volume_size, 20);
  const removed = await f.coe([
    'cluster',
    'template',
    'update',
    'k8s-custom',
    'remove',
    'docker_volume_size',
    '-c',
    'docker_volume_size',
    '-f',
    'value',
  ]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout, '-\n');
});

test('template list --fields adds columns, --limit pages through next links', async () => {
  const r = await f.coe([
    'cluster',
    'template',
    'list',
    '--fields',
    'coe,public',
    '-f',
    'json',
    '--sort-key',
    'name',
    '--sort-dir',
    'asc',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as Record<string, unknown>[];
  assert.deepEqual(Object.keys(rows[0]!), ['uuid', 'name', 'tags', 'coe', 'public']);
  assert.deepEqual(
    rows.map((x) => x.name),
    [...rows.map((x) => x.name as string)].sort(),
  );
  const limited = await f.coe([
    'cluster',
    'template',
    'list',
    '--limit',
    '3',
    '--sort-key',
    'name',
    '-f',
    'value',
    '-c',
    'name',
  ]);
  assert.equal(limited.code, 0, limited.stderr);
  assert.deepEqual(
    limited.stdout.trimEnd().split('\n'),
    rows.slice(0, 3).map((x) => x.name),
  );
  const two = await f.coe(['cluster', 'template', 'list', '--limit', '2', '-f', 'value', '-c', 'name']);
  assert.equal(two.stdout.trimEnd().split('\n').length, 2);
});

test('template delete reports each template; a failed one exits 1 but the others are still deleted', async () => {
  await f.coe([
    'cluster',
    'template',
    'create',
    'tmp-1',
    '--coe',
    'kubernetes',
    '--image',
    'ubuntu-22.04-kube',
    '--external-network',
    'public',
  ]);
  await f.coe([
    'cluster',
    'template',
    'create',
    'tmp-2',
    '--coe',
    'kubernetes',
    '--image',
    'ubuntu-22.04-kube',
    '--external-network',
    'public',
  ]);
  const r = await f.coe(['cluster', 'template', 'delete', 'tmp-1', 'nope', 'tmp-2']);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    'Request to delete cluster template tmp-1 has been accepted.\nRequest to delete cluster template tmp-2 has been accepted.\n',
  );
  const lines = r.stderr.trimEnd().split('\n');
  assert.match(
    lines[0]!,
    /^coe: Delete for cluster template nope failed: ClusterTemplate nope could not be found \(HTTP 404\) \(Request-ID: req-[0-9a-f-]+\)$/,
  );
  assert.equal(lines[1], 'coe: 1 of 3 requests failed');
  const gone = await f.coe(['cluster', 'template', 'show', 'tmp-1']);
  assert.equal(gone.code, 1);
});

test('an unknown template is one error line with status and request id, exit 1', async () => {
  const r = await f.coe(['cluster', 'template', 'show', 'missing']);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(
    r.stderr,
    /^coe: ClusterTemplate missing could not be found \(HTTP 404\) \(Request-ID: req-[0-9a-f-]{36}\)\n$/,
  );
});

test('a template update the server refuses shows its reason', async () => {
  const r = await f.coe(['cluster', 'template', 'update', 'k8s-custom', 'replace', 'uuid=x']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: .*'\/uuid' is an internal attribute and can not be updated.*\(HTTP 400\)/);
});
