import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { coe, tempDir } from './helpers.ts';

const tmp = tempDir();
after(() => tmp.remove());
const isolated = { env: { HOME: tmp.dir }, cwd: tmp.dir };

function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  return lines[0]!;
}

test('--version prints the package version', async () => {
  const r = await coe(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^coe \d+\.\d+\.\d+\n$/);
});

test('--help lists the command groups, connection options and exit codes', async () => {
  const r = await coe(['--help']);
  assert.equal(r.code, 0);
  for (const word of [
    'cluster',
    'nodegroup',
    'ca',
    'quotas',
    'service',
    'stats',
    '--os-cloud',
    '--os-auth-url',
    'Exit codes',
  ]) {
    assert.ok(r.stdout.includes(word), `help mentions ${word}`);
  }
  assert.equal(r.stderr, '');
});

test('coe help cluster lists the cluster commands', async () => {
  const r = await coe(['help', 'cluster']);
  assert.equal(r.code, 0);
  for (const sub of [
    'create',
    'list',
    'show',
    'update',
    'delete',
    'resize',
    'upgrade',
    'config',
    'template',
  ]) {
    assert.match(r.stdout, new RegExp(`^  ${sub}\\b`, 'm'));
  }
});

test('every command of openstack coe exists with its --help', async () => {
  const commands = [
    'cluster template list',
    'cluster template show',
    'cluster template create',
    'cluster template update',
    'cluster template delete',
    'cluster create',
    'cluster list',
    'cluster show',
    'cluster update',
    'cluster delete',
    'cluster resize',
    'cluster upgrade',
    'cluster config',
    'nodegroup create',
    'nodegroup list',
    'nodegroup show',
    'nodegroup update',
    'nodegroup delete',
    'service list',
    'quotas create',
    'quotas list',
    'quotas show',
    'quotas update',
    'quotas delete',
    'stats list',
    'ca show',
    'ca sign',
    'ca rotate',
  ];
  for (const c of commands) {
    const r = await coe([...c.split(' '), '--help']);
    assert.equal(r.code, 0, c);
    assert.match(r.stdout, new RegExp(`^Usage: coe ${c} `), c);
  }
});

test('asynchronous commands offer --wait, and delete help says failures exit non-zero', async () => {
  for (const c of [
    'cluster create',
    'cluster update',
    'cluster resize',
    'cluster upgrade',
    'cluster delete',
    'nodegroup create',
    'nodegroup update',
    'nodegroup delete',
    'ca rotate',
  ]) {
    assert.match((await coe([...c.split(' '), '--help'])).stdout, /--wait/, c);
  }
  assert.match(
    (await coe(['cluster', 'template', 'delete', '--help'])).stdout,
    /exits 1 if any delete fails/,
  );
  assert.match((await coe(['help', 'quotas'])).stdout, /failures exit 1, unlike the openstack client/);
});

test('no arguments prints the help on stderr and exits 2', async () => {
  const r = await coe([]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^Usage: coe/);
});

test('a group without a subcommand prints its help and exits 2', async () => {
  const r = await coe(['cluster', 'template']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Usage: coe cluster template/);
});

test('a missing argument is one line naming it, exit 2', async () => {
  const r = await coe(['cluster', 'show']);
  assert.equal(r.code, 2);
  assert.equal(oneLine(r.stderr), "coe: missing required argument 'cluster'; see 'coe cluster show --help'");
});

test('a mistyped command suggests the right one, exit 2', async () => {
  const r = await coe(['cluster', 'lsit']);
  assert.equal(r.code, 2);
  assert.equal(
    oneLine(r.stderr),
    "coe: unknown command 'lsit' (did you mean list?); see 'coe cluster --help'",
  );
});

test('a non-integer count is a usage error', async () => {
  const r = await coe(['cluster', 'create', 'c', '--cluster-template', 't', '--node-count', 'three']);
  assert.equal(r.code, 2);
  assert.match(
    oneLine(r.stderr),
    /--node-count.*'three' is invalid\. Expected an integer; see 'coe cluster create --help'/,
  );
});

test('an unknown output format is a usage error', async () => {
  const r = await coe(['cluster', 'list', '-f', 'xml']);
  assert.equal(r.code, 2);
  assert.match(oneLine(r.stderr), /'xml' is invalid\. Allowed choices are table, json, yaml, value/);
});

test('an unknown update operation is a usage error', async () => {
  const r = await coe(['cluster', 'update', 'c', 'set', 'node_count=3']);
  assert.equal(r.code, 2);
  assert.match(
    oneLine(r.stderr),
    /'set' is invalid for argument 'op'\. Allowed choices are add, replace, remove/,
  );
});

test('several masters without a load balancer are refused before any configuration is read', async () => {
  const r = await coe(
    ['cluster', 'create', 'c', '--cluster-template', 't', '--master-count', '3', '--master-lb-disabled'],
    isolated,
  );
  assert.equal(r.code, 2);
  assert.match(oneLine(r.stderr), /Master node count can only be one if master loadbalancer is disabled/);
});

test('a malformed --labels value is a usage error', async () => {
  const r = await coe(['nodegroup', 'create', 'c', 'ng', '--labels', 'a=1,b=2,zone'], isolated);
  assert.equal(r.code, 2);
  assert.match(oneLine(r.stderr), /labels must be a list of KEY=VALUE not zone/);
});

test('without any cloud configuration the error names the settings to provide, exit 1', async () => {
  const r = await coe(['cluster', 'list'], isolated);
  assert.equal(r.code, 1);
  assert.match(
    oneLine(r.stderr),
    /^coe: no cloud selected: set OS_CLOUD .*OS_AUTH_URL.*OS_ENDPOINT with OS_TOKEN/,
  );
});

test('--os-cloud naming a cloud that clouds.yaml lacks is an error naming it', async () => {
  const dir = tempDir();
  try {
    writeFileSync(
      join(dir.dir, 'clouds.yaml'),
      'clouds:\n  magnetar:\n    auth_type: none\n    endpoint: http://127.0.0.1:9/v1\n',
    );
    const r = await coe(['cluster', 'list', '--os-cloud', 'elsewhere'], {
      env: { HOME: dir.dir },
      cwd: dir.dir,
    });
    assert.equal(r.code, 1);
    assert.match(oneLine(r.stderr), /elsewhere/);
  } finally {
    dir.remove();
  }
});

test('ca sign with a missing CSR file fails before any request', async () => {
  const r = await coe(['ca', 'sign', 'c', 'nope.csr'], isolated);
  assert.equal(r.code, 1);
  assert.match(oneLine(r.stderr), /A CSR must be provided: nope\.csr is not a readable file/);
});

test('--labels takes one value: the arguments after it stay positional', async () => {
  for (const args of [
    ['nodegroup', 'create', '--labels', 'availability_zone=AZ-2', 'prod', 'ng'],
    ['cluster', 'create', '--cluster-template', 't', '--labels', 'a=1', 'prod'],
    [
      'cluster',
      'template',
      'create',
      '--coe',
      'kubernetes',
      '--image',
      'i',
      '--external-network',
      'public',
      '--labels',
      'a=1',
      'tpl',
    ],
  ]) {
    const r = await coe(args, isolated);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /no cloud selected/, 'parsing succeeded and went on to read the configuration');
  }
});
