import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  call,
  isKeystoneError,
  login,
  projectScope,
  startIdentityServer,
  type IdentityServer,
  type KProject,
  type KRef,
  type KUser,
} from './helpers.ts';

let s: IdentityServer;
let admin: string;

before(async () => {
  s = await startIdentityServer({ identity: { tokenTtlSeconds: 600 } });
});
// Virtual time moves in some tests: every test starts with a fresh admin token.
beforeEach(async () => {
  admin = (await login(s, s.creds.admin, projectScope('admin'))).token;
});
after(() => s.close());

async function newUser(
  name: string,
  project = 'demo',
  role = 'member',
): Promise<{ id: string; password: string; projectId: string }> {
  const projectId = (
    await call<{ projects: KProject[] }>(`${s.v3}/projects?name=${project}`, 'GET', { token: admin })
  ).body.projects[0]!.id;
  const password = `pw-${name}-123`;
  const u = await call<{ user: KUser }>(`${s.v3}/users`, 'POST', {
    token: admin,
    body: { user: { name, password, default_project_id: projectId } },
  });
  assert.equal(u.status, 201, u.text);
  const roleId = (await call<{ roles: KRef[] }>(`${s.v3}/roles?name=${role}`, 'GET', { token: admin })).body
    .roles[0]!.id;
  const put = await call(`${s.v3}/projects/${projectId}/users/${u.body.user.id}/roles/${roleId}`, 'PUT', {
    token: admin,
  });
  assert.equal(put.status, 204, put.text);
  return { id: u.body.user.id, password, projectId };
}

async function stillValid(token: string): Promise<boolean> {
  const r = await call(`${s.v3}/auth/catalog`, 'GET', { token });
  if (r.status === 200) return true;
  assert.ok(isKeystoneError(r, 401), r.text);
  return false;
}

void test('a token stops working when it expires (virtual time)', async () => {
  const t = await login(s, s.creds.demo);
  await s.clock.advance(599_000);
  assert.equal(await stillValid(t.token), true);
  await s.clock.advance(1_000);
  assert.equal(await stillValid(t.token), false);
  await assert.rejects(s.identity.validate(t.token), /expired/);
});

void test("disabling a user stops that user's tokens at once; enabling them again restores them", async () => {
  const u = await newUser('carol');
  const t = await login(s, { username: 'carol', password: u.password });
  assert.equal(await stillValid(t.token), true);
  const off = await call(`${s.v3}/users/${u.id}`, 'PATCH', {
    token: admin,
    body: { user: { enabled: false } },
  });
  assert.equal(off.status, 200, off.text);
  assert.equal(await stillValid(t.token), false);
  const relogin = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: {
      auth: { identity: { methods: ['password'], password: { user: { id: u.id, password: u.password } } } },
    },
  });
  assert.ok(isKeystoneError(relogin, 401));
  await call(`${s.v3}/users/${u.id}`, 'PATCH', { token: admin, body: { user: { enabled: true } } });
  assert.equal(await stillValid(t.token), true);
});

void test("deleting a user stops that user's tokens at once", async () => {
  const u = await newUser('dave');
  const t = await login(s, { username: 'dave', password: u.password });
  const del = await call(`${s.v3}/users/${u.id}`, 'DELETE', { token: admin });
  assert.equal(del.status, 204, del.text);
  assert.equal(await stillValid(t.token), false);
  await assert.rejects(s.identity.validate(t.token), /no longer exists/);
});

void test('deleting a project stops the tokens scoped to it, and removes its role assignments', async () => {
  const p = await call<{ project: KProject }>(`${s.v3}/projects`, 'POST', {
    token: admin,
    body: { project: { name: 'doomed' } },
  });
  assert.equal(p.status, 201, p.text);
  const u = await newUser('erin', 'doomed');
  const t = await login(s, { username: 'erin', password: u.password, projectName: 'doomed' });
  assert.equal(await stillValid(t.token), true);
  const del = await call(`${s.v3}/projects/${p.body.project.id}`, 'DELETE', { token: admin });
  assert.equal(del.status, 204, del.text);
  assert.equal(await stillValid(t.token), false);
  const left = await call<{ role_assignments: unknown[] }>(
    `${s.v3}/role_assignments?user.id=${u.id}`,
    'GET',
    { token: admin },
  );
  assert.deepEqual(left.body.role_assignments, []);
});

void test('removing the last role on the project stops project-scoped tokens', async () => {
  const u = await newUser('frank');
  const t = await login(s, { username: 'frank', password: u.password });
  const member = (await call<{ roles: KRef[] }>(`${s.v3}/roles?name=member`, 'GET', { token: admin })).body
    .roles[0]!.id;
  const del = await call(`${s.v3}/projects/${u.projectId}/users/${u.id}/roles/${member}`, 'DELETE', {
    token: admin,
  });
  assert.equal(del.status, 204, del.text);
  assert.equal(await stillValid(t.token), false);
});

void test('changing the password voids older tokens; the user logs in with the new password', async () => {
  const u = await newUser('gina');
  const t = await login(s, { username: 'gina', password: u.password });
  await s.clock.advance(1);
  const change = await call(`${s.v3}/users/${u.id}/password`, 'POST', {
    token: t.token,
    body: { user: { password: 'brand-new-pw', original_password: u.password } },
  });
  assert.equal(change.status, 204, change.text);
  assert.equal(await stillValid(t.token), false);
  const fresh = await login(s, { username: 'gina', password: 'brand-new-pw' });
  assert.equal(await stillValid(fresh.token), true);
  const wrongOriginal = await call(`${s.v3}/users/${u.id}/password`, 'POST', {
    token: fresh.token,
    body: { user: { password: 'x-y-z', original_password: 'not-it' } },
  });
  assert.ok(isKeystoneError(wrongOriginal, 401), wrongOriginal.text);
});

void test('validate() gives the façades the caller, the project and the roles with implied roles expanded', async () => {
  const a = await s.identity.validate((await login(s, s.creds.admin, projectScope('admin'))).token);
  assert.equal(a.userName, 'admin');
  assert.equal(a.projectName, 'admin');
  assert.deepEqual(a.roles, ['admin', 'member', 'reader']);
  assert.equal(a.isAdmin, true);
  assert.equal(a.isServiceAccount, false);
  assert.deepEqual(a.methods, ['password']);
  const d = await s.identity.validate((await login(s, s.creds.demo)).token);
  assert.deepEqual(d.roles, ['member', 'reader']);
  assert.equal(d.isAdmin, false);
  assert.equal(d.projectDomainId, 'default');
});

void test('the service-account flag of the user shows in the AuthContext and in user show', async () => {
  const sa = await s.identity.validate((await login(s, s.creds['demo-sa'])).token);
  assert.equal(sa.isServiceAccount, true);
  const demo = await s.identity.validate((await login(s, s.creds.demo)).token);
  assert.equal(demo.isServiceAccount, false);
  const show = await call<{ user: KUser }>(`${s.v3}/users/${sa.userId}`, 'GET', { token: admin });
  assert.equal(show.body.user.service_account, true);

  // Flagging a personal user turns their next request into a service account's, without a new token.
  const u = await newUser('henry');
  const t = await login(s, { username: 'henry', password: u.password });
  assert.equal((await s.identity.validate(t.token)).isServiceAccount, false);
  const set = await call<{ user: KUser }>(`${s.v3}/users/${u.id}`, 'PATCH', {
    token: admin,
    body: { user: { service_account: true } },
  });
  assert.equal(set.body.user.service_account, true);
  assert.equal((await s.identity.validate(t.token)).isServiceAccount, true);
});

void test('a reader-only user gets only reader; an admin grant implies member and reader', async () => {
  const u = await newUser('ivy', 'demo', 'reader');
  const t = await s.identity.validate((await login(s, { username: 'ivy', password: u.password })).token);
  assert.deepEqual(t.roles, ['reader']);
  const adminRole = (await call<{ roles: KRef[] }>(`${s.v3}/roles?name=admin`, 'GET', { token: admin })).body
    .roles[0]!.id;
  await call(`${s.v3}/projects/${u.projectId}/users/${u.id}/roles/${adminRole}`, 'PUT', { token: admin });
  const again = await s.identity.validate((await login(s, { username: 'ivy', password: u.password })).token);
  assert.deepEqual(again.roles, ['admin', 'member', 'reader']);
});

void test("Magnetar's service token acts in a tenant project and is refused once the project is gone", async () => {
  const p = await call<{ project: KProject }>(`${s.v3}/projects`, 'POST', {
    token: admin,
    body: { project: { name: 'tenant-x' } },
  });
  const st = await s.identity.issueServiceToken(p.body.project.id);
  const ctx = await s.identity.validate(st.token);
  assert.equal(ctx.userName, 'magnetar');
  assert.equal(ctx.projectId, p.body.project.id);
  assert.equal(ctx.isAdmin, true);
  assert.equal((await s.identity.issueServiceToken(p.body.project.id)).token, st.token, 'reused while fresh');
  // revoked (an operator's DELETE /v3/auth/tokens): the next one asked for is a new, valid token
  const del = await call(`${s.v3}/auth/tokens`, 'DELETE', {
    token: admin,
    headers: { 'x-subject-token': st.token },
  });
  assert.equal(del.status, 204, del.text);
  const renewed = await s.identity.issueServiceToken(p.body.project.id);
  assert.notEqual(renewed.token, st.token);
  assert.equal((await s.identity.validate(renewed.token)).projectId, p.body.project.id);
  await call(`${s.v3}/projects/${p.body.project.id}`, 'DELETE', { token: admin });
  await assert.rejects(s.identity.validate(renewed.token), /project no longer exists/);
  await assert.rejects(s.identity.issueServiceToken(p.body.project.id), /Could not find project/);
});
