import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';

/**
 * The real `openstack` client (python-openstackclient) against Magnetar's identity, configured
 * only by the clouds.yaml Magnetar writes. Skips when the client is missing, unless
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1, where a missing client fails.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const installed = spawnSync('openstack', ['--version'], { encoding: 'utf8' }).status === 0;
const skip = installed
  ? false
  : required
    ? false
    : 'the openstack CLI is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let m: Magnetar;
let dataDir: string;
let demoProjectId = '';

/** Run `openstack` with only the given OS_* settings (none inherited from the caller's shell). */
function openstack(args: string[], env: Record<string, string>): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
  return new Promise((resolve) => {
    execFile('openstack', args, { env: { ...clean, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function asCloud(cloud: string): Record<string, string> {
  return { OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml'), OS_CLOUD: cloud };
}

/** Run, insist on success with a clean stderr (no discovery warnings), parse `-f json` output. */
async function json<T>(args: string[], env: Record<string, string>): Promise<T> {
  const r = await openstack([...args, '-f', 'json'], env);
  assert.equal(r.code, 0, `openstack ${args.join(' ')} failed: ${r.stderr}`);
  assert.doesNotMatch(
    r.stderr,
    /discover|warn|error/i,
    `openstack ${args.join(' ')} wrote to stderr: ${r.stderr}`,
  );
  return JSON.parse(r.stdout) as T;
}

void describe('openstack CLI against the identity service', { skip, timeout: 15 * 60_000 }, () => {
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'magnetar-identity-cli-'));
    m = await startMagnetar({ config: testConfig({ dataDir }), controllers: false, logger: false });
  });
  after(async () => {
    await m?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  void test('the openstack CLI is installed', () => {
    assert.ok(installed, 'openstack is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
  });

  void test('token issue works with the generated clouds.yaml as-is, for the service account', async () => {
    const t = await json<{ id: string; project_id: string; user_id: string; expires: string }>(
      ['token', 'issue'],
      asCloud('magnetar-demo-sa'),
    );
    assert.ok(t.id && t.project_id && t.user_id && t.expires);
    const res = await fetch(`${m.url}/identity/v3/auth/tokens`, {
      headers: { 'x-auth-token': t.id, 'x-subject-token': t.id },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { token: { user: { name: string }; project: { name: string } } };
    assert.equal(body.token.user.name, 'demo-sa');
    assert.equal(body.token.project.name, 'demo');
  });

  void test('project list (admin) shows the bootstrap projects', async () => {
    const projects = await json<{ ID: string; Name: string }[]>(
      ['project', 'list'],
      asCloud('magnetar-admin'),
    );
    assert.deepEqual(projects.map((p) => p.Name).sort(), ['admin', 'demo']);
    demoProjectId = projects.find((p) => p.Name === 'demo')!.ID;
  });

  void test('user create, list, show and delete', async () => {
    const admin = asCloud('magnetar-admin');
    const created = await json<{ id: string; name: string; default_project_id: string; enabled: boolean }>(
      ['user', 'create', '--password', 'cli-user-pw-1', '--project', 'demo', 'cli-user'],
      admin,
    );
    assert.equal(created.name, 'cli-user');
    assert.equal(created.enabled, true);
    const list = await json<{ ID: string; Name: string }[]>(['user', 'list'], admin);
    assert.ok(list.some((u) => u.ID === created.id && u.Name === 'cli-user'));
    const shown = await json<{ id: string; default_project_id: string }>(['user', 'show', 'cli-user'], admin);
    assert.equal(shown.id, created.id);
    assert.equal(shown.default_project_id, demoProjectId);
    const del = await openstack(['user', 'delete', 'cli-user'], admin);
    assert.equal(del.code, 0, del.stderr);
    const after = await json<{ Name: string }[]>(['user', 'list'], admin);
    assert.ok(!after.some((u) => u.Name === 'cli-user'));
  });

  void test('role assignment list --names shows the bootstrap grants', async () => {
    const rows = await json<{ Role: string; User: string; Project: string; System: string }[]>(
      ['role', 'assignment', 'list', '--names'],
      asCloud('magnetar-admin'),
    );
    const seen = rows.map((r) => `${r.Role} ${r.User} ${r.Project || r.System}`);
    assert.ok(seen.includes('member demo-sa@Default demo@Default'), seen.join('\n'));
    assert.ok(seen.includes('admin admin@Default admin@Default'), seen.join('\n'));
    assert.ok(seen.includes('admin admin@Default all'), seen.join('\n'));
  });

  void test('an application credential is created and then used to authenticate (v3applicationcredential)', async () => {
    const cred = await json<{ id: string; secret: string; project_id: string; roles: string }>(
      ['application', 'credential', 'create', 'cli-cred'],
      asCloud('magnetar-demo-sa'),
    );
    assert.ok(cred.secret);
    assert.match(cred.roles, /member/);
    const t = await json<{ id: string; project_id: string }>(['token', 'issue'], {
      OS_AUTH_TYPE: 'v3applicationcredential',
      OS_AUTH_URL: `${m.url}/identity/v3`,
      OS_IDENTITY_API_VERSION: '3',
      OS_APPLICATION_CREDENTIAL_ID: cred.id,
      OS_APPLICATION_CREDENTIAL_SECRET: cred.secret,
    });
    assert.equal(t.project_id, cred.project_id);
  });

  void test('catalog list and endpoint list show the identity service', async () => {
    const catalog = await json<
      { Name: string; Type: string; Endpoints: { interface: string; url: string; region: string }[] }[]
    >(['catalog', 'list'], asCloud('magnetar-demo'));
    const identity = catalog.find((c) => c.Type === 'identity');
    assert.ok(identity, JSON.stringify(catalog));
    assert.deepEqual(
      identity.Endpoints.map((e) => `${e.interface} ${e.region} ${e.url}`).sort(),
      ['admin', 'internal', 'public'].map((i) => `${i} RegionOne ${m.url}/identity/v3`),
    );
    const endpoints = await json<
      { 'Service Type': string; Interface: string; URL: string; Region: string }[]
    >(['endpoint', 'list'], asCloud('magnetar-admin'));
    const pub = endpoints.find((e) => e['Service Type'] === 'identity' && e.Interface === 'public');
    assert.ok(pub, JSON.stringify(endpoints));
    assert.equal(pub.URL, `${m.url}/identity/v3`);
    assert.equal(pub.Region, 'RegionOne');
  });

  void test('a wrong password fails with a clear 401 and exit code 1', async () => {
    const r = await openstack(['token', 'issue'], {
      OS_AUTH_URL: `${m.url}/identity/v3`,
      OS_USERNAME: 'demo',
      OS_PASSWORD: 'definitely-wrong',
      OS_PROJECT_NAME: 'demo',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_IDENTITY_API_VERSION: '3',
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HTTP 401/);
  });
});
