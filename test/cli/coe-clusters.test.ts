import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { driveClock, startFixture, type CoeFixture } from './fixture.ts';

let f: CoeFixture;
before(async () => {
  f = await startFixture();
});
after(() => f.close());

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const GUIDE_CREATE = [
  'cluster',
  'create',
  '--cluster-template',
  'k8s-v1.32',
  '--master-count',
  '3',
  '--master-flavor',
  'm1.medium',
  '--node-count',
  '3',
  '--flavor',
  'm1.medium',
  '--keypair',
  'my-keypair',
];

async function createComplete(name: string, extra: string[] = []): Promise<string> {
  const r = await f.coe([...GUIDE_CREATE, ...extra, name]);
  assert.equal(r.code, 0, r.stderr);
  const uuid = UUID.exec(r.stdout)![0];
  await f.completeAll();
  return uuid;
}

test("the user guide's cluster create is accepted and prints the new uuid", async () => {
  const r = await f.coe([...GUIDE_CREATE, 'production-kubernetes']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^Request to create cluster ${UUID.source} accepted\n$`));
  const show = await f.coe(['cluster', 'show', 'production-kubernetes', '-f', 'json']);
  const c = JSON.parse(show.stdout) as Record<string, unknown>;
  assert.equal(c.status, 'CREATE_IN_PROGRESS');
  assert.equal(c.master_count, 3);
  assert.equal(c.node_count, 3);
  assert.equal(c.keypair, 'my-keypair');
  assert.equal(c.uuid, UUID.exec(r.stdout)![0]);
  await f.completeAll();
});

test('cluster list prints the openstack columns with right-aligned counts', async () => {
  const r = await f.coe(['cluster', 'list']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(
    lines[1]!,
    /^\| uuid +\| name +\| keypair +\| node_count \| master_count \| status +\| health_status \|$/,
  );
  assert.match(lines[3]!, /\| production-kubernetes \| my-keypair \| +3 \| +3 \| CREATE_COMPLETE +\|/);
});

test('cluster show prints the 33 fields in the openstack order; -c and -f value pick some', async () => {
  const r = await f.coe(['cluster', 'show', 'production-kubernetes']);
  assert.equal(r.code, 0, r.stderr);
  const fields = r.stdout
    .split('\n')
    .filter((l) => /^\| \w/.test(l))
    .map((l) => l.split('|')[1]!.trim());
  assert.equal(fields[0], 'Field');
  assert.deepEqual(fields.slice(1, 5), ['status', 'health_status', 'cluster_template_id', 'node_addresses']);
  assert.equal(fields.length, 34);
  const v = await f.coe([
    'cluster',
    'show',
    'production-kubernetes',
    '-f',
    'value',
    '-c',
    'status',
    '-c',
    'api_address',
  ]);
  assert.equal(v.stdout, 'CREATE_COMPLETE\nhttps://10.0.0.5:6443\n');
});

test('cluster list -f json round-trips and agrees with cluster show', async () => {
  const list = JSON.parse((await f.coe(['cluster', 'list', '-f', 'json'])).stdout) as Record<
    string,
    unknown
  >[];
  assert.equal(list.length, 1);
  const show = JSON.parse(
    (await f.coe(['cluster', 'show', list[0]!.uuid as string, '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  for (const k of ['uuid', 'name', 'keypair', 'node_count', 'master_count', 'status'])
    assert.deepEqual(list[0]![k], show[k], k);
});

test('cluster update replace node_count changes the default workers', async () => {
  const r = await f.coe(['cluster', 'update', 'production-kubernetes', 'replace', 'node_count=4']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Request to update cluster production-kubernetes has been accepted.\n');
  const c = JSON.parse(
    (await f.coe(['cluster', 'show', 'production-kubernetes', '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  assert.equal(c.node_count, 4);
  assert.equal(c.status, 'UPDATE_IN_PROGRESS');
  await f.completeAll();
});

test('cluster update of a read-only property fails with the server reason', async () => {
  const r = await f.coe(['cluster', 'update', 'production-kubernetes', 'replace', 'name=other']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: cannot change cluster property\(ies\) name.*\(HTTP 400\) \(Request-ID: req-/);
});

test('cluster resize of a named nodegroup is accepted and applied', async () => {
  const ng = await f.coe([
    'nodegroup',
    'create',
    '--node-count',
    '5',
    'production-kubernetes',
    'worker-group2',
  ]);
  assert.equal(ng.code, 0, ng.stderr);
  await f.completeAll();
  const r = await f.coe(['cluster', 'resize', '--nodegroup', 'worker-group2', 'production-kubernetes', '7']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Request to resize cluster production-kubernetes has been accepted.\n');
  const shown = await f.coe(['nodegroup', 'show', 'production-kubernetes', 'worker-group2', '-f', 'json']);
  assert.equal((JSON.parse(shown.stdout) as { node_count: number }).node_count, 7);
  await f.completeAll();
});

test('resizing past the node group limit is refused with the operator policy reason', async () => {
  const r = await f.coe(['cluster', 'resize', '--nodegroup', 'worker-group2', 'production-kubernetes', '11']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: .*\(HTTP 400\)/);
});

test('cluster upgrade moves the cluster to another template', async () => {
  const r = await f.coe([
    'cluster',
    'upgrade',
    'production-kubernetes',
    'k8s-v1.33',
    '--max-batch-size',
    '1',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Request to upgrade cluster production-kubernetes has been accepted.\n');
  const c = JSON.parse(
    (await f.coe(['cluster', 'show', 'production-kubernetes', '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  const t = JSON.parse(
    (await f.coe(['cluster', 'template', 'show', 'k8s-v1.33', '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  assert.equal(c.cluster_template_id, t.uuid);
  assert.equal(c.status, 'UPDATE_IN_PROGRESS');
  await f.completeAll();
});

test('an unknown cluster is one error line, exit 1', async () => {
  const r = await f.coe(['cluster', 'show', 'nope']);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^coe: Cluster nope could not be found \(HTTP 404\) \(Request-ID: req-[0-9a-f-]{36}\)\n$/,
  );
});

test('create --wait shows progress on stderr and exits 0 at CREATE_COMPLETE', async () => {
  const clock = new ManualClock();
  const run = f.start([...GUIDE_CREATE, 'waited', '--wait', '--poll-interval', '5'], { clock });
  await run.stderr.until(/waited: CREATE_IN_PROGRESS/);
  await clock.advance(5000);
  await f.completeAll();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  assert.match(run.stdout.text, new RegExp(`^Request to create cluster ${UUID.source} accepted\n$`));
  assert.match(run.stderr.text, /^\[0s\] cluster waited: CREATE_IN_PROGRESS\n/);
  assert.match(
    run.stderr.text,
    /\[\d+s\] cluster waited: CREATE_COMPLETE - Cluster is ready\ncluster waited: CREATE_COMPLETE after \d+s\n$/,
  );
});

test('create --wait exits 1 with the reason when the cluster fails', async () => {
  const clock = new ManualClock();
  const run = f.start([...GUIDE_CREATE, 'doomed', '--wait'], { clock });
  await run.stderr.until(/doomed: CREATE_IN_PROGRESS/);
  const uuid = UUID.exec(run.stdout.text)![0];
  await f.failCluster(uuid, 'Not enough quota for 3 servers of flavor m1.medium');
  assert.equal(await driveClock(clock, run, 5000), 1);
  assert.match(
    run.stderr.text,
    /coe: cluster doomed ended CREATE_FAILED after \d+s: Not enough quota for 3 servers of flavor m1.medium\n$/,
  );
});

test('create --wait gives up after --timeout minutes', async () => {
  const clock = new ManualClock();
  const run = f.start([...GUIDE_CREATE, 'slow', '--wait', '--timeout', '1', '--poll-interval', '20'], {
    clock,
  });
  assert.equal(await driveClock(clock, run, 20_000), 1);
  assert.match(
    run.stderr.text,
    /coe: gave up waiting for cluster slow after 1m00s; last status CREATE_IN_PROGRESS\n$/,
  );
  await f.completeAll();
});

test('resize --wait follows the UPDATE to its end', async () => {
  const clock = new ManualClock();
  const run = f.start(['cluster', 'resize', 'waited', '2', '--wait'], { clock });
  await run.stderr.until(/cluster waited: UPDATE_IN_PROGRESS/);
  await f.completeAll();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  assert.match(run.stderr.text, /cluster waited: UPDATE_COMPLETE after/);
});

test('delete --wait ends when the cluster is gone; several names are each reported', async () => {
  await createComplete('gone-1');
  await createComplete('gone-2');
  const clock = new ManualClock();
  const run = f.start(['cluster', 'delete', 'gone-1', 'gone-2', '--wait'], { clock });
  await run.stderr.until(/cluster gone-1: DELETE_IN_PROGRESS/);
  assert.equal(
    run.stdout.text,
    'Request to delete cluster gone-1 has been accepted.\nRequest to delete cluster gone-2 has been accepted.\n',
  );
  await f.finishDeletes();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  assert.match(run.stderr.text, /cluster gone-1: deleted after/);
  assert.match(run.stderr.text, /cluster gone-2: deleted after/);
  assert.equal((await f.coe(['cluster', 'show', 'gone-1'])).code, 1);
});

test('delete of several clusters goes on past a failure and exits 1', async () => {
  await createComplete('gone-3');
  const r = await f.coe(['cluster', 'delete', 'nope', 'gone-3']);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, 'Request to delete cluster gone-3 has been accepted.\n');
  assert.match(
    r.stderr,
    /^coe: Delete for cluster nope failed: Cluster nope could not be found \(HTTP 404\)/,
  );
  await f.finishDeletes();
});
