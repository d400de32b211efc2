import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixture, sessionFor, type CoeFixture } from './fixture.ts';

let f: CoeFixture;
let demoProject: string;
before(async () => {
  f = await startFixture();
  const session = sessionFor(f, 'magnetar-demo');
  try {
    demoProject = (await session.projectId())!;
  } finally {
    session.close();
  }
  const r = await f.coe([
    'cluster',
    'create',
    '--cluster-template',
    'k8s-v1.32',
    '--master-count',
    '3',
    '--master-flavor',
    'm1.medium',
    '--node-count',
    '2',
    '--flavor',
    'm1.medium',
    '--keypair',
    'my-keypair',
    'prod',
  ]);
  assert.equal(r.code, 0, r.stderr);
  await f.completeAll();
});
after(() => f.close());

const admin = { cloud: 'magnetar-admin' };

test('stats list counts the clusters and nodes of a project as Property/Value rows', async () => {
  const r = await f.coe(['stats', 'list', demoProject], admin);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      '+----------+-------+',
      '| Property | Value |',
      '+----------+-------+',
      '| clusters | 1     |',
      '| nodes    | 5     |',
      '+----------+-------+',
      '',
    ].join('\n'),
  );
  const json = await f.coe(['stats', 'list', demoProject, '-f', 'json'], admin);
  assert.deepEqual(JSON.parse(json.stdout), { clusters: 1, nodes: 5 });
});

test('a member reading another project stats is refused with the policy reason', async () => {
  const r = await f.coe(['stats', 'list', 'someone-else'], { cloud: 'magnetar-demo' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: Policy doesn't allow stats:get_all to be performed.*\(HTTP 403\)/);
});

test('service list needs an admin; an admin gets the service columns', async () => {
  const denied = await f.coe(['service', 'list'], { cloud: 'magnetar-demo' });
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /\(HTTP 403\)/);
  const r = await f.coe(['service', 'list', '-f', 'json'], admin);
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as Record<string, unknown>[];
  assert.ok(Array.isArray(rows));
  for (const row of rows)
    assert.deepEqual(Object.keys(row), [
      'id',
      'host',
      'binary',
      'state',
      'disabled',
      'disabled_reason',
      'created_at',
      'updated_at',
    ]);
});

test('quotas create, show, update and delete print what the server answered', async () => {
  const ident = ['--project-id', demoProject, '--resource', 'Cluster'];
  const created = await f.coe(['quotas', 'create', ...ident, '--hard-limit', '10'], admin);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^\+-+\+-+\+\n\| Property +\| Value +\|\n/);
  assert.match(created.stdout, /\| hard_limit +\| 10 +\|/);
  assert.match(created.stdout, /\| updated_at +\| - +\|/);

  const shown = JSON.parse((await f.coe(['quotas', 'show', ...ident, '-f', 'json'], admin)).stdout) as Record<
    string,
    unknown
  >;
  assert.equal(shown.hard_limit, 10);
  assert.equal(shown.project_id, demoProject);

  const updated = await f.coe(['quotas', 'update', ...ident, '--hard-limit', '20', '-f', 'json'], admin);
  assert.equal(updated.code, 0, updated.stderr);
  assert.equal((JSON.parse(updated.stdout) as { hard_limit: number }).hard_limit, 20);

  const listed = await f.coe(['quotas', 'list', '--all-tenants', '-f', 'value'], admin);
  assert.equal(listed.stdout, `${demoProject} Cluster 20\n`);

  const deleted = await f.coe(['quotas', 'delete', ...ident], admin);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(
    deleted.stdout,
    `Request to delete quota for project id ${demoProject} and resource Cluster has been accepted.\n`,
  );
});

test('failing quota commands keep the openstack wording but exit 1', async () => {
  const ident = ['--project-id', demoProject, '--resource', 'Cluster'];
  assert.equal((await f.coe(['quotas', 'create', ...ident], admin)).code, 0);
  const dup = await f.coe(['quotas', 'create', ...ident], admin);
  assert.equal(dup.code, 1);
  assert.match(
    dup.stderr,
    new RegExp(
      `^coe: Create quota for project_id ${demoProject} resource Cluster failed: Quota for project ${demoProject} already exists for resource Cluster.*\\(HTTP 409\\)`,
    ),
  );
  await f.coe(['quotas', 'delete', ...ident], admin);
  const missing = await f.coe(['quotas', 'delete', ...ident], admin);
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    new RegExp(
      `^coe: Quota delete failed for project id ${demoProject} and resource Cluster: .*\\(HTTP 404\\)`,
    ),
  );
  const update = await f.coe(
    ['quotas', 'update', '--project-id', demoProject, '--resource', 'Nope', '--hard-limit', '3'],
    admin,
  );
  assert.equal(update.code, 1);
  assert.match(update.stderr, /^coe: Update quota for project_id .* resource Nope failed: /);
});

test('an empty quota list prints the header only, like the openstack client', async () => {
  const r = await f.coe(['quotas', 'list'], admin);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      '+------------+----------+------------+',
      '| project_id | resource | hard_limit |',
      '+------------+----------+------------+',
      '+------------+----------+------------+',
      '',
    ].join('\n'),
  );
});

test('--os-cloud on the command line wins over OS_CLOUD', async () => {
  // The environment selects the demo member, who may not list services; the flag selects the admin.
  const r = await f.coe(['service', 'list', '--os-cloud', 'magnetar-admin', '-f', 'json'], {
    cloud: 'magnetar-demo',
  });
  assert.equal(r.code, 0, r.stderr);
});

test('--os-endpoint with --os-token talks to Magnum without the catalog', async () => {
  const session = sessionFor(f, 'magnetar-demo-sa');
  let token: string;
  try {
    token = await session.token();
  } finally {
    session.close();
  }
  const r = await f.coe(
    [
      'cluster',
      'list',
      '-f',
      'value',
      '-c',
      'name',
      '--os-endpoint',
      `${f.magnetar.url}/v1`,
      '--os-token',
      token,
    ],
    {
      env: { OS_CLOUD: '', OS_CLIENT_CONFIG_FILE: '' },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'prod\n');
  const bad = await f.coe(
    ['cluster', 'list', '--os-endpoint', `${f.magnetar.url}/v1`, '--os-token', 'not-a-token'],
    {
      env: { OS_CLOUD: '', OS_CLIENT_CONFIG_FILE: '' },
    },
  );
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^coe: .*\(HTTP 401\)/);
});

test('a wrong password is one line with HTTP 401', async () => {
  const r = await f.coe(['cluster', 'list', '--os-password', 'wrong']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: .*\(HTTP 401\)( \(Request-ID: req-[0-9a-f-]+\))?\n$/);
});

test('a region the catalog lacks names the service and region', async () => {
  const r = await f.coe(['cluster', 'list', '--os-region-name', 'RegionTwo']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: .*container-infra.*RegionTwo.*not found\n$/);
});
