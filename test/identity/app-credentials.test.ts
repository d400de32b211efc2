import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  call,
  isKeystoneError,
  login,
  startIdentityServer,
  type IdentityServer,
  type KAppCred,
  type KToken,
} from './helpers.ts';

let s: IdentityServer;
let sa: { token: string; userId: string; projectId: string };

before(async () => {
  s = await startIdentityServer();
  const t = await login(s, s.creds['demo-sa']);
  sa = { token: t.token, userId: t.body.token.user.id, projectId: t.body.token.project!.id };
});
after(() => s.close());

type CredReply = { application_credential: KAppCred };
type TokenReply = { token: KToken };

async function create(body: Record<string, unknown>, token = sa.token, userId = sa.userId) {
  return call<CredReply>(`${s.v3}/users/${userId}/application_credentials`, 'POST', {
    token,
    body: { application_credential: body },
  });
}

function byId(id: string, secret: string) {
  return {
    auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
  };
}

async function stillValid(token: string): Promise<boolean> {
  const r = await call(`${s.v3}/auth/catalog`, 'GET', { token });
  if (r.status === 200) return true;
  assert.ok(isKeystoneError(r, 401), r.text);
  return false;
}

void test('a created credential shows its secret once and authenticates by id into its project', async () => {
  const c = await create({ name: 'ci' });
  assert.equal(c.status, 201, c.text);
  const cred = c.body.application_credential;
  assert.ok(cred.secret && cred.secret.length >= 40);
  assert.equal(cred.project_id, sa.projectId);
  assert.equal(cred.unrestricted, false);
  assert.deepEqual(
    cred.roles.map((r) => r.name),
    ['member', 'reader'],
  );
  const shown = await call<CredReply>(
    `${s.v3}/users/${sa.userId}/application_credentials/${cred.id}`,
    'GET',
    { token: sa.token },
  );
  assert.equal(shown.body.application_credential.secret, undefined);
  const listed = await call<{ application_credentials: KAppCred[] }>(
    `${s.v3}/users/${sa.userId}/application_credentials?name=ci`,
    'GET',
    {
      token: sa.token,
    },
  );
  assert.deepEqual(
    listed.body.application_credentials.map((x) => [x.id, x.secret]),
    [[cred.id, undefined]],
  );

  const auth = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', { body: byId(cred.id, cred.secret) });
  assert.equal(auth.status, 201, auth.text);
  const t = auth.body.token;
  assert.deepEqual(t.methods, ['application_credential']);
  assert.equal(t.project!.id, sa.projectId);
  assert.deepEqual(t.application_credential, { id: cred.id, name: 'ci', restricted: true });
  const ctx = await s.identity.validate(auth.headers.get('x-subject-token')!);
  assert.equal(ctx.isServiceAccount, true, 'the service-account flag follows the user');
});

void test('a credential also authenticates by name with its user, and a wrong secret is 401', async () => {
  const c = await create({ name: 'by-name', secret: 'my-own-secret-value' });
  assert.equal(c.body.application_credential.secret, 'my-own-secret-value');
  const ok = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            name: 'by-name',
            secret: 'my-own-secret-value',
            user: { name: 'demo-sa', domain: { name: 'Default' } },
          },
        },
      },
    },
  });
  assert.equal(ok.status, 201, ok.text);
  const bad = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: byId(c.body.application_credential.id, 'wrong'),
  });
  assert.ok(isKeystoneError(bad, 401), bad.text);
  const unknown = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: byId('0123456789abcdef0123456789abcdef', 'wrong'),
  });
  assert.ok(isKeystoneError(unknown, 401), unknown.text);
});

void test("roles are limited to a subset of the creator's roles", async () => {
  const reader = await create({ name: 'read-only', roles: [{ name: 'reader' }] });
  assert.equal(reader.status, 201, reader.text);
  const tok = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: byId(reader.body.application_credential.id, reader.body.application_credential.secret!),
  });
  const ctx = await s.identity.validate(tok.headers.get('x-subject-token')!);
  assert.deepEqual(ctx.roles, ['reader']);
  const tooMuch = await create({ name: 'greedy', roles: [{ name: 'admin' }] });
  assert.ok(isKeystoneError(tooMuch, 403), tooMuch.text);
  const unknownRole = await create({ name: 'odd', roles: [{ name: 'no-such-role' }] });
  assert.ok(isKeystoneError(unknownRole, 404), unknownRole.text);
});

void test('an expiry in the past is refused; a credential stops authenticating, and its tokens stop working, when it expires', async () => {
  const past = await create({ name: 'stale', expires_at: new Date(s.clock.now() - 1000).toISOString() });
  assert.ok(isKeystoneError(past, 400), past.text);
  const expiresAt = new Date(s.clock.now() + 120_000).toISOString().replace('Z', '');
  const c = await create({ name: 'short-lived', expires_at: expiresAt });
  assert.equal(c.status, 201, c.text);
  const cred = c.body.application_credential;
  const tok = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', { body: byId(cred.id, cred.secret!) });
  assert.equal(tok.status, 201);
  assert.equal(
    Date.parse(tok.body.token.expires_at),
    Date.parse(`${expiresAt}Z`),
    'the token ends with the credential',
  );
  const token = tok.headers.get('x-subject-token')!;
  await s.clock.advance(119_000);
  assert.equal(await stillValid(token), true);
  await s.clock.advance(1_000);
  assert.equal(await stillValid(token), false);
  const again = await call(`${s.v3}/auth/tokens`, 'POST', { body: byId(cred.id, cred.secret!) });
  assert.ok(isKeystoneError(again, 401), again.text);
  // The creator's own token (1 h) outlives the credential.
  assert.equal(await stillValid(sa.token), true);
});

void test('deleting a credential stops its tokens at once', async () => {
  const c = await create({ name: 'to-delete' });
  const cred = c.body.application_credential;
  const tok = await call(`${s.v3}/auth/tokens`, 'POST', { body: byId(cred.id, cred.secret!) });
  const token = tok.headers.get('x-subject-token')!;
  assert.equal(await stillValid(token), true);
  const del = await call(`${s.v3}/users/${sa.userId}/application_credentials/${cred.id}`, 'DELETE', {
    token: sa.token,
  });
  assert.equal(del.status, 204, del.text);
  assert.equal(await stillValid(token), false);
  const gone = await call(`${s.v3}/users/${sa.userId}/application_credentials/${cred.id}`, 'GET', {
    token: sa.token,
  });
  assert.ok(isKeystoneError(gone, 404));
});

void test('restricted credentials cannot make credentials or be rescoped; unrestricted ones can make credentials', async () => {
  const restricted = (await create({ name: 'restricted' })).body.application_credential;
  const rTok = (
    await call(`${s.v3}/auth/tokens`, 'POST', { body: byId(restricted.id, restricted.secret!) })
  ).headers.get('x-subject-token')!;
  const denied = await create({ name: 'child' }, rTok);
  assert.ok(isKeystoneError(denied, 403), denied.text);
  const rescope = await call(`${s.v3}/auth/tokens`, 'POST', {
    body: {
      auth: {
        identity: { methods: ['token'], token: { id: rTok } },
        scope: { project: { id: sa.projectId } },
      },
    },
  });
  assert.ok(isKeystoneError(rescope, 403), rescope.text);

  const open = (await create({ name: 'unrestricted', unrestricted: true })).body.application_credential;
  assert.equal(open.unrestricted, true);
  const uTok = (await call(`${s.v3}/auth/tokens`, 'POST', { body: byId(open.id, open.secret!) })).headers.get(
    'x-subject-token',
  )!;
  const child = await create({ name: 'child' }, uTok);
  assert.equal(child.status, 201, child.text);
});

void test('credentials belong to their user: others cannot create, see or delete them; names are unique per user', async () => {
  const demo = await login(s, s.creds.demo);
  const forOther = await create({ name: 'sneaky' }, demo.token);
  assert.ok(isKeystoneError(forOther, 403), forOther.text);
  const mine = (await create({ name: 'private' })).body.application_credential;
  const peek = await call(`${s.v3}/users/${sa.userId}/application_credentials/${mine.id}`, 'GET', {
    token: demo.token,
  });
  assert.ok(isKeystoneError(peek, 403));
  const del = await call(`${s.v3}/users/${sa.userId}/application_credentials/${mine.id}`, 'DELETE', {
    token: demo.token,
  });
  assert.ok(isKeystoneError(del, 403));
  const dup = await create({ name: 'private' });
  assert.ok(isKeystoneError(dup, 409), dup.text);
  const noName = await create({});
  assert.ok(isKeystoneError(noName, 400), noName.text);
  const rules = await create({
    name: 'ruled',
    access_rules: [{ service: 'compute', method: 'GET', path: '/servers' }],
  });
  assert.ok(isKeystoneError(rules, 400), rules.text);
});
