import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KeystoneIdentity } from '../../src/identity/index.ts';
import {
  call,
  login,
  projectScope,
  startIdentityServer,
  type IdentityServer,
  type KRef,
  type KUser,
} from './helpers.ts';

/** Magnetar's own identity server plays the external Keystone. */
let keystone: IdentityServer;
let external: KeystoneIdentity;

before(async () => {
  keystone = await startIdentityServer({ identity: { tokenTtlSeconds: 3600 } });
  external = new KeystoneIdentity({
    keystoneUrl: `${keystone.url}/identity`,
    service: {
      method: 'password',
      username: 'admin',
      password: keystone.creds.admin.password,
      projectName: 'admin',
    },
    baseUrl: () => 'http://magnetar.test',
    clock: keystone.clock,
    cacheSeconds: 30,
  });
});
after(async () => {
  await external.close();
  await keystone.close();
});

void test('a token from the external Keystone validates into the same AuthContext, service-account flag included', async () => {
  const t = await login(keystone, keystone.creds['demo-sa']);
  const ctx = await external.validate(t.token);
  const local = await keystone.identity.validate(t.token);
  assert.equal(ctx.userId, local.userId);
  assert.equal(ctx.userName, 'demo-sa');
  assert.equal(ctx.projectId, local.projectId);
  assert.equal(ctx.projectName, 'demo');
  assert.deepEqual(ctx.roles, ['member', 'reader']);
  assert.equal(ctx.isServiceAccount, true);
  assert.equal(ctx.isAdmin, false);
  const demo = await external.validate((await login(keystone, keystone.creds.demo)).token);
  assert.equal(demo.isServiceAccount, false);
});

void test('invalid tokens are refused with 401 semantics', async () => {
  await assert.rejects(
    external.validate('garbage'),
    (err: Error & { status?: number }) => err.status === 401,
  );
  await assert.rejects(external.validate(''), (err: Error & { status?: number }) => err.status === 401);
});

void test('a revoked token keeps working from the cache for at most cacheSeconds, then is refused', async () => {
  const t = await login(keystone, keystone.creds.demo);
  assert.equal((await external.validate(t.token)).userName, 'demo');
  const del = await call(`${keystone.v3}/auth/tokens`, 'DELETE', {
    token: t.token,
    headers: { 'x-subject-token': t.token },
  });
  assert.equal(del.status, 204);
  assert.equal((await external.validate(t.token)).userName, 'demo', 'still cached');
  await keystone.clock.advance(30_000);
  await assert.rejects(external.validate(t.token), /invalid, expired or revoked/);
});

void test('projects are read from the external Keystone', async () => {
  const list = await external.listProjects();
  assert.deepEqual(list.map((p) => p.name).sort(), ['admin', 'demo']);
  const demo = list.find((p) => p.name === 'demo')!;
  assert.deepEqual(await external.getProject(demo.id), demo);
  assert.equal(await external.getProject('0123456789abcdef0123456789abcdef'), undefined);
});

void test('the service token is renewed when it expires, and service tokens for a project need a role there', async () => {
  // Past the service token's lifetime: the next call logs in again by itself.
  await keystone.clock.advance(3_600_000);
  const t = await login(keystone, keystone.creds.demo);
  assert.equal((await external.validate(t.token)).userName, 'demo');

  const demoId = (await external.listProjects()).find((p) => p.name === 'demo')!.id;
  await assert.rejects(external.issueServiceToken(demoId), /cannot log in/);
  const admin = (await login(keystone, keystone.creds.admin, projectScope('admin'))).token;
  const adminUser = (
    await call<{ users: KUser[] }>(`${keystone.v3}/users?name=admin`, 'GET', { token: admin })
  ).body.users[0]!;
  const member = (await call<{ roles: KRef[] }>(`${keystone.v3}/roles?name=member`, 'GET', { token: admin }))
    .body.roles[0]!;
  await call(`${keystone.v3}/projects/${demoId}/users/${adminUser.id}/roles/${member.id}`, 'PUT', {
    token: admin,
  });
  const st = await external.issueServiceToken(demoId);
  const ctx = await keystone.identity.validate(st.token);
  assert.equal(ctx.projectId, demoId);
  assert.equal((await external.issueServiceToken(demoId)).token, st.token, 'reused');
});

void test('registered services are recorded for the operator, not published', () => {
  external.registerService({
    type: 'container-infra',
    name: 'magnum',
    urlForProject: () => 'http://magnetar.test/v1',
  });
  assert.deepEqual(
    external.registrations.map((r) => r.type),
    ['container-infra'],
  );
  assert.equal(external.mode, 'keystone');
});
