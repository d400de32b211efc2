import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { ManualClock } from '../../src/domain/index.ts';
import { LocalIdentity } from '../../src/identity/index.ts';
import { startMagnetar } from '../../src/main.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { call, FAST_SCRYPT, passwordAuth, projectScope, type KToken } from './helpers.ts';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'magnetar-identity-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface CloudEntry {
  auth: {
    auth_url: string;
    username: string;
    password: string;
    project_name: string;
    user_domain_name: string;
    project_domain_name: string;
  };
  region_name: string;
  interface: string;
  identity_api_version: number;
}

function readClouds(dir: string): Record<string, CloudEntry> {
  return (parseYaml(readFileSync(join(dir, 'clouds.yaml'), 'utf8')) as { clouds: Record<string, CloudEntry> })
    .clouds;
}

async function open(
  path: string,
  base = 'http://127.0.0.1:9511',
): Promise<{ identity: LocalIdentity; store: SqliteStore }> {
  const store = new SqliteStore({ path });
  const identity = await LocalIdentity.open({
    store,
    clock: new ManualClock(),
    baseUrl: () => base,
    scryptCost: FAST_SCRYPT,
  });
  return { identity, store };
}

void test('bootstrap creates the initial users once; a restart over the same store creates nothing and keeps the passwords', async () => {
  const dir = tempDir();
  const db = join(dir, 'magnetar.sqlite');
  const first = await open(db);
  const r1 = await first.identity.bootstrap();
  assert.equal(r1.firstStart, true);
  assert.deepEqual(r1.credentials.map((c) => c.cloud).sort(), [
    'magnetar-admin',
    'magnetar-demo',
    'magnetar-demo-sa',
  ]);
  const users1 = (await first.store.list('User.identity.magnetar.io')).items
    .map((u) => u.metadata.name)
    .sort();
  assert.equal(users1.length, 4);
  await first.identity.close();
  await first.store.close();

  const second = await open(db);
  const r2 = await second.identity.bootstrap();
  assert.deepEqual(r2, { firstStart: false, credentials: [] });
  const users2 = (await second.store.list('User.identity.magnetar.io')).items
    .map((u) => u.metadata.name)
    .sort();
  assert.deepEqual(users2, users1);
  assert.equal(await second.store.count('Project.identity.magnetar.io'), 2);
  assert.equal(await second.store.count('Role.identity.magnetar.io'), 3);
  // The first start's password still works after the restart, and the service account is flagged.
  const sa = r1.credentials.find((c) => c.username === 'demo-sa')!;
  const token = await second.identity.authenticate({
    identity: {
      method: 'password',
      user: { name: 'demo-sa', domain: { name: 'Default' } },
      password: sa.password,
    },
    scope: { type: 'project', project: { name: 'demo', domain: { name: 'Default' } } },
  });
  assert.equal(token.user.spec.serviceAccount, true);
  await second.identity.close();
  await second.store.close();
});

void test('clouds.yaml and the openrc files are written with mode 0600; a later start refreshes the URL, keeps passwords and other clouds', async () => {
  const dir = tempDir();
  const db = join(dir, 'magnetar.sqlite');
  const first = await open(db, 'http://127.0.0.1:1111');
  const boot = await first.identity.bootstrap();
  const files = first.identity.writeClientFiles({ dataDir: dir });
  assert.equal(files.openrc.length, 3);
  for (const f of [files.cloudsYaml, ...files.openrc]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
  const clouds = readClouds(dir);
  const sa = clouds['magnetar-demo-sa']!;
  assert.deepEqual(sa, {
    auth: {
      auth_url: 'http://127.0.0.1:1111/identity/v3',
      username: 'demo-sa',
      password: boot.credentials.find((c) => c.username === 'demo-sa')!.password,
      project_name: 'demo',
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    region_name: 'RegionOne',
    interface: 'public',
    identity_api_version: 3,
  });
  assert.equal(clouds['magnetar-admin']!.auth.project_name, 'admin');
  const openrc = readFileSync(join(dir, 'magnetar-demo-openrc.sh'), 'utf8');
  assert.match(openrc, /export OS_AUTH_URL='http:\/\/127\.0\.0\.1:1111\/identity\/v3'/);
  assert.match(openrc, /export OS_USERNAME='demo'/);
  assert.match(openrc, new RegExp(`export OS_PASSWORD='${clouds['magnetar-demo']!.auth.password}'`));
  await first.identity.close();
  await first.store.close();

  // Someone adds their own cloud to the file; then the server restarts on another port.
  const withOther =
    readFileSync(join(dir, 'clouds.yaml'), 'utf8') +
    '  elsewhere:\n    auth:\n      auth_url: http://example.test/v3\n';
  writeFileSync(join(dir, 'clouds.yaml'), withOther);
  const second = await open(db, 'http://127.0.0.1:2222');
  await second.identity.bootstrap();
  second.identity.writeClientFiles({ dataDir: dir });
  const after2 = readClouds(dir);
  assert.equal(after2['magnetar-demo-sa']!.auth.auth_url, 'http://127.0.0.1:2222/identity/v3');
  assert.equal(after2['magnetar-demo-sa']!.auth.password, sa.auth.password);
  assert.ok(after2.elsewhere, 'other entries are kept');
  assert.equal(statSync(join(dir, 'clouds.yaml')).mode & 0o777, 0o600);
  await second.identity.close();
  await second.store.close();
});

void test('the first-start passwords survive a start that fails before listening', async () => {
  const dir = tempDir();
  const db = join(dir, 'magnetar.sqlite');
  const first = await open(db, 'http://127.0.0.1:9511');
  const boot = await first.identity.bootstrap({ dataDir: dir });
  // No writeClientFiles: the process dies before it listens.
  await first.identity.close();
  await first.store.close();
  const early = readClouds(dir);
  assert.equal(early['magnetar-admin']!.auth.auth_url, 'http://127.0.0.1:9511/identity/v3');
  assert.equal(statSync(join(dir, 'clouds.yaml')).mode & 0o777, 0o600);

  const second = await open(db, 'http://127.0.0.1:4444');
  assert.equal((await second.identity.bootstrap({ dataDir: dir })).firstStart, false);
  second.identity.writeClientFiles({ dataDir: dir });
  const clouds = readClouds(dir);
  const admin = boot.credentials.find((c) => c.username === 'admin')!;
  assert.equal(clouds['magnetar-admin']!.auth.password, admin.password);
  assert.equal(clouds['magnetar-admin']!.auth.auth_url, 'http://127.0.0.1:4444/identity/v3');
  const t = await second.identity.authenticate({
    identity: {
      method: 'password',
      user: { name: 'admin', domain: { name: 'Default' } },
      password: admin.password,
    },
    scope: { type: 'system' },
  });
  assert.equal(t.system, true);
  await second.identity.close();
  await second.store.close();
});

void test('the first-start passwords are printed once to stdout, and not on later starts', async () => {
  const dir = tempDir();
  const root = resolve(import.meta.dirname, '..', '..');
  const script = `
    import { LocalIdentity } from ${JSON.stringify(join(root, 'src/identity/index.ts'))};
    import { SqliteStore } from ${JSON.stringify(join(root, 'src/store/index.ts'))};
    const store = new SqliteStore({ path: ${JSON.stringify(join(dir, 'm.sqlite'))} });
    const identity = await LocalIdentity.open({ store, baseUrl: () => 'http://127.0.0.1:3333', scryptCost: { N: 1024, r: 8, p: 1 } });
    await identity.bootstrap({ dataDir: ${JSON.stringify(dir)} });
    identity.writeClientFiles({ dataDir: ${JSON.stringify(dir)}, print: true });
    await identity.close();
    await store.close();
  `;
  const run = async () =>
    (
      await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: root,
      })
    ).stdout;
  const firstOut = await run();
  const clouds = readClouds(dir);
  assert.match(firstOut, /first start/);
  for (const name of ['magnetar-admin', 'magnetar-demo', 'magnetar-demo-sa'])
    assert.ok(firstOut.includes(clouds[name]!.auth.password), name);
  assert.match(firstOut, /OS_CLOUD=magnetar-demo-sa openstack token issue/);
  const secondOut = await run();
  assert.equal(secondOut, '');
});

void test('startMagnetar writes clouds.yaml with the port it listens on, and its entries log in', async () => {
  const dir = tempDir();
  const m = await startMagnetar({ config: testConfig({ dataDir: dir }), controllers: false, logger: false });
  try {
    const clouds = readClouds(dir);
    const sa = clouds['magnetar-demo-sa']!;
    assert.equal(sa.auth.auth_url, `${m.url}/identity/v3`);
    assert.equal(statSync(join(dir, 'clouds.yaml')).mode & 0o777, 0o600);
    const r = await call<{ token: KToken }>(`${sa.auth.auth_url}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: sa.auth.username }, sa.auth.password, projectScope(sa.auth.project_name)),
    });
    assert.equal(r.status, 201, r.text);
    const types = r.body.token.catalog!.map((c) => c.type);
    assert.ok(types.includes('identity'), types.join());
  } finally {
    await m.close();
  }
});
