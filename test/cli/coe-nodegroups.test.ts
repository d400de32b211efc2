import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { driveClock, startFixture, type CoeFixture } from './fixture.ts';

let f: CoeFixture;
before(async () => {
  f = await startFixture();
  const r = await f.coe([
    'cluster',
    'create',
    '--cluster-template',
    'k8s-v1.32',
    '--master-count',
    '1',
    '--master-flavor',
    'm1.medium',
    '--node-count',
    '2',
    '--flavor',
    'm1.medium',
    '--keypair',
    'my-keypair',
    '--labels',
    'team=a',
    '--merge-labels',
    'prod',
  ]);
  assert.equal(r.code, 0, r.stderr);
  await f.completeAll();
});
after(() => f.close());

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

test('the default nodegroups are listed with the openstack columns', async () => {
  const r = await f.coe(['nodegroup', 'list', 'prod']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(
    lines[1]!,
    /^\| uuid +\| name +\| flavor_id \| image_id +\| node_count \| status +\| role +\|$/,
  );
  assert.match(r.stdout, /\| default-master \| m1\.medium \| .* \| +1 \| CREATE_COMPLETE \| master \|/);
  assert.match(r.stdout, /\| default-worker \| m1\.medium \| .* \| +2 \| CREATE_COMPLETE \| worker \|/);
});

test('nodegroup create in an availability zone prints the new uuid and shows the label', async () => {
  const r = await f.coe([
    'nodegroup',
    'create',
    '--node-count',
    '2',
    '--labels',
    'availability_zone=AZ-2',
    '--flavor',
    'm1.large',
    'prod',
    'worker-group-az2',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^Request to create nodegroup ${UUID.source} accepted\n$`));
  const show = JSON.parse(
    (await f.coe(['nodegroup', 'show', 'prod', 'worker-group-az2', '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  assert.deepEqual(show.labels, { availability_zone: 'AZ-2' });
  assert.equal(show.flavor_id, 'm1.large');
  assert.equal(show.node_count, 2);
  assert.equal(show.role, 'worker');
  assert.equal(show.is_default, false);
  assert.equal(show.uuid, UUID.exec(r.stdout)![0]);
  await f.completeAll();
});

test('nodegroup show prints the 20 openstack fields', async () => {
  const r = await f.coe(['nodegroup', 'show', 'prod', 'default-worker']);
  assert.equal(r.code, 0, r.stderr);
  const fields = r.stdout
    .split('\n')
    .filter((l) => /^\| \w/.test(l))
    .map((l) => l.split('|')[1]!.trim());
  assert.deepEqual(fields.slice(0, 4), ['Field', 'uuid', 'name', 'cluster_id']);
  assert.equal(fields.length, 21);
});

test('nodegroup list --role filters, --limit pages', async () => {
  const workers = await f.coe(['nodegroup', 'list', 'prod', '--role', 'worker', '-f', 'value', '-c', 'name']);
  assert.deepEqual(workers.stdout.trimEnd().split('\n').sort(), ['default-worker', 'worker-group-az2']);
  const one = await f.coe(['nodegroup', 'list', 'prod', '--limit', '1', '-f', 'json']);
  assert.equal((JSON.parse(one.stdout) as unknown[]).length, 1);
});

test('a duplicate nodegroup name is refused with the server reason', async () => {
  const r = await f.coe(['nodegroup', 'create', 'prod', 'worker-group-az2']);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^coe: A node group with name worker-group-az2 already exists in the cluster .*\(HTTP 409\)/,
  );
});

test('nodegroup update sets max_node_count, and --wait follows it', async () => {
  const clock = new ManualClock();
  const run = f.start(
    ['nodegroup', 'update', 'prod', 'worker-group-az2', 'replace', 'max_node_count=10', '--wait'],
    { clock },
  );
  await run.stderr.until(/nodegroup worker-group-az2: UPDATE_IN_PROGRESS/);
  assert.equal(run.stdout.text, 'Request to update nodegroup worker-group-az2 has been accepted.\n');
  await f.completeAll();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  const show = JSON.parse(
    (await f.coe(['nodegroup', 'show', 'prod', 'worker-group-az2', '-f', 'json'])).stdout,
  ) as Record<string, unknown>;
  assert.equal(show.max_node_count, 10);
});

test('nodegroup create --wait ends at CREATE_COMPLETE', async () => {
  const clock = new ManualClock();
  const run = f.start(['nodegroup', 'create', 'prod', 'ng-waited', '--wait', '--poll-interval', '2'], {
    clock,
  });
  await run.stderr.until(/nodegroup ng-waited: CREATE_IN_PROGRESS/);
  await f.completeAll();
  assert.equal(await driveClock(clock, run, 2000), 0, run.stderr.text);
  assert.match(run.stderr.text, /nodegroup ng-waited: CREATE_COMPLETE after/);
});

test('deleting a default nodegroup is refused', async () => {
  const r = await f.coe(['nodegroup', 'delete', 'prod', 'default-worker']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: Deleting a default nodegroup is not supported.*\(HTTP 400\)/);
});

test('nodegroup delete --wait ends when the nodegroup is gone', async () => {
  const clock = new ManualClock();
  const run = f.start(['nodegroup', 'delete', 'prod', 'ng-waited', '--wait'], { clock });
  await run.stderr.until(/nodegroup ng-waited: DELETE_IN_PROGRESS/);
  assert.equal(run.stdout.text, 'Request to delete nodegroup ng-waited has been accepted.\n');
  await f.finishDeletes();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  assert.match(run.stderr.text, /nodegroup ng-waited: deleted after/);
  assert.equal((await f.coe(['nodegroup', 'show', 'prod', 'ng-waited'])).code, 1);
});
