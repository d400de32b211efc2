import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  call,
  isKeystoneError,
  login,
  passwordAuth,
  projectScope,
  startIdentityServer,
  type IdentityServer,
  type KRef,
  type KToken,
} from './helpers.ts';

type TokenReply = { token: KToken };
type Versions = { versions: { values: { id: string; status: string; links: { href: string }[] }[] } };
type Version = { version: { id: string; links: { rel: string; href: string }[] } };

let s: IdentityServer;
before(async () => {
  s = await startIdentityServer();
});
after(() => s.close());

void describe('version discovery', () => {
  void test('GET /identity answers 300 with the v3 version and its self link, without a token', async () => {
    const r = await call<Versions>(`${s.url}/identity`, 'GET');
    assert.equal(r.status, 300);
    const v = r.body.versions.values[0]!;
    assert.equal(v.id, 'v3.14');
    assert.equal(v.status, 'stable');
    assert.equal(v.links[0]!.href, `${s.url}/identity/v3/`);
  });

  void test('GET /identity/v3 answers 200 with the version document, also with a trailing slash', async () => {
    for (const path of ['/identity/v3', '/identity/v3/']) {
      const r = await call<Version>(`${s.url}${path}`, 'GET');
      assert.equal(r.status, 200);
      assert.equal(r.body.version.id, 'v3.14');
      assert.equal(r.body.version.links[0]!.rel, 'self');
      assert.equal(r.body.version.links[0]!.href, `${s.url}/identity/v3/`);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    }
  });

  void test('unknown identity paths answer 404 in Keystone shape', async () => {
    const r = await call(`${s.v3}/nothing-here`, 'GET');
    assert.ok(isKeystoneError(r, 404), r.text);
  });
});

void describe('password authentication', () => {
  void test('a user named with its domain name gets a project-scoped token with roles and catalog (201, X-Subject-Token)', async () => {
    const c = s.creds['demo-sa'];
    const r = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username }, c.password, projectScope('demo')),
    });
    assert.equal(r.status, 201, r.text);
    assert.ok(r.headers.get('x-subject-token'));
    const t = r.body.token;
    assert.deepEqual(t.methods, ['password']);
    assert.equal(t.user.name, 'demo-sa');
    assert.deepEqual(t.user.domain, { id: 'default', name: 'Default' });
    assert.equal(t.project!.name, 'demo');
    assert.deepEqual(t.project!.domain, { id: 'default', name: 'Default' });
    assert.deepEqual(
      t.roles!.map((x) => x.name),
      ['member', 'reader'],
    );
    assert.equal(t.audit_ids.length, 1);
    assert.match(t.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(t.issued_at, /Z$/);
    const identity = t.catalog!.find((x) => x.type === 'identity');
    assert.ok(identity);
    const pub = identity.endpoints.find((e) => e.interface === 'public')!;
    assert.equal(pub.url, `${s.url}/identity/v3`);
    assert.equal(pub.region, 'RegionOne');
    assert.equal(pub.region_id, 'RegionOne');
  });

  void test('users and projects can be named by domain id, and by their own ids', async () => {
    const c = s.creds.demo;
    const byDomainId = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username, domain: { id: 'default' } }, c.password, {
        project: { name: 'demo', domain: { id: 'default' } },
      }),
    });
    assert.equal(byDomainId.status, 201, byDomainId.text);
    const userId = byDomainId.body.token.user.id;
    const projectId = byDomainId.body.token.project!.id;
    const byIds = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ id: userId }, c.password, { project: { id: projectId } }),
    });
    assert.equal(byIds.status, 201, byIds.text);
    assert.equal(byIds.body.token.project!.id, projectId);
  });

  void test('without a scope the token is scoped to the default project; "unscoped" gives no roles and no catalog', async () => {
    const c = s.creds.demo;
    const dflt = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username }, c.password),
    });
    assert.equal(dflt.status, 201);
    assert.equal(dflt.body.token.project!.name, 'demo');
    const unscoped = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username }, c.password, 'unscoped'),
    });
    assert.equal(unscoped.status, 201);
    assert.equal(unscoped.body.token.project, undefined);
    assert.equal(unscoped.body.token.roles, undefined);
    assert.equal(unscoped.body.token.catalog, undefined);
  });

  void test('the admin can get a system-scoped token; a member cannot', async () => {
    const a = s.creds.admin;
    const sys = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: a.username }, a.password, { system: { all: true } }),
    });
    assert.equal(sys.status, 201, sys.text);
    assert.deepEqual(sys.body.token.system, { all: true });
    assert.ok(sys.body.token.roles!.some((r) => r.name === 'admin'));
    const d = s.creds.demo;
    const denied = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: d.username }, d.password, { system: { all: true } }),
    });
    assert.ok(isKeystoneError(denied, 401), denied.text);
  });

  void test('a domain-scoped token needs a role on the domain', async () => {
    const a = await login(s, s.creds.admin, projectScope('admin'));
    const demo = await login(s, s.creds.demo);
    const scope = { domain: { name: 'Default' } };
    const before = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: 'demo' }, s.creds.demo.password, scope),
    });
    assert.ok(isKeystoneError(before, 401));
    const reader = (await call<{ roles: KRef[] }>(`${s.v3}/roles?name=reader`, 'GET', { token: a.token }))
      .body.roles[0]!.id;
    const put = await call(
      `${s.v3}/domains/default/users/${demo.body.token.user.id}/roles/${reader}`,
      'PUT',
      { token: a.token },
    );
    assert.equal(put.status, 204, put.text);
    const after = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: 'demo' }, s.creds.demo.password, scope),
    });
    assert.equal(after.status, 201, after.text);
    assert.deepEqual(after.body.token.domain, { id: 'default', name: 'Default' });
    assert.deepEqual(
      after.body.token.roles!.map((r) => r.name),
      ['reader'],
    );
    await call(`${s.v3}/domains/default/users/${demo.body.token.user.id}/roles/${reader}`, 'DELETE', {
      token: a.token,
    });
  });

  void test('a wrong password, an unknown user and an unknown domain all answer 401 in Keystone shape', async () => {
    const c = s.creds.demo;
    const cases = [
      passwordAuth({ name: c.username }, 'wrong-password', projectScope('demo')),
      passwordAuth({ name: 'nobody' }, c.password, projectScope('demo')),
      passwordAuth({ name: c.username, domain: { name: 'NoSuchDomain' } }, c.password, projectScope('demo')),
    ];
    for (const body of cases) {
      const r = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', { body });
      assert.ok(isKeystoneError(r, 401), r.text);
      assert.equal(r.headers.get('x-subject-token'), null);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Keystone uri=/);
    }
  });

  void test('a project the user has no role on, or that does not exist, is refused with 401', async () => {
    const c = s.creds.demo;
    for (const scope of [
      projectScope('admin'),
      projectScope('no-such-project'),
      { project: { id: 'ffffffffffffffffffffffffffffffff' } },
    ]) {
      const r = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
        body: passwordAuth({ name: c.username }, c.password, scope),
      });
      assert.ok(isKeystoneError(r, 401), r.text);
    }
  });
});

void describe('token method (rescoping)', () => {
  void test('an unscoped token is exchanged for a project-scoped one that keeps the expiry and chains the audit ids', async () => {
    const c = s.creds.demo;
    const unscoped = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username }, c.password, 'unscoped'),
    });
    const tok = unscoped.headers.get('x-subject-token')!;
    await s.clock.advance(60_000);
    const r = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: { auth: { identity: { methods: ['token'], token: { id: tok } }, scope: projectScope('demo') } },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.token.methods, ['token', 'password']);
    assert.equal(r.body.token.project!.name, 'demo');
    assert.equal(r.body.token.expires_at, unscoped.body.token.expires_at);
    assert.equal(r.body.token.audit_ids[1], unscoped.body.token.audit_ids[0]);
  });

  void test('a garbage token cannot be rescoped', async () => {
    const r = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: {
        auth: { identity: { methods: ['token'], token: { id: 'not-a-token' } }, scope: projectScope('demo') },
      },
    });
    assert.ok(isKeystoneError(r, 401), r.text);
  });
});

void describe('validation and revocation over HTTP', () => {
  void test('GET and HEAD /v3/auth/tokens validate X-Subject-Token for its own user; other users get 403', async () => {
    const demo = await login(s, s.creds.demo);
    const get = await call<TokenReply>(`${s.v3}/auth/tokens`, 'GET', {
      token: demo.token,
      headers: { 'x-subject-token': demo.token },
    });
    assert.equal(get.status, 200, get.text);
    assert.equal(get.headers.get('x-subject-token'), demo.token);
    assert.equal(get.body.token.user.name, 'demo');
    const head = await call(`${s.v3}/auth/tokens`, 'HEAD', {
      token: demo.token,
      headers: { 'x-subject-token': demo.token },
    });
    assert.equal(head.status, 200);
    const sa = await login(s, s.creds['demo-sa']);
    const other = await call(`${s.v3}/auth/tokens`, 'GET', {
      token: sa.token,
      headers: { 'x-subject-token': demo.token },
    });
    assert.ok(isKeystoneError(other, 403), other.text);
    const admin = await login(s, s.creds.admin, projectScope('admin'));
    const byAdmin = await call<TokenReply>(`${s.v3}/auth/tokens?nocatalog`, 'GET', {
      token: admin.token,
      headers: { 'x-subject-token': demo.token },
    });
    assert.equal(byAdmin.status, 200);
    assert.equal(byAdmin.body.token.catalog, undefined);
  });

  void test('requests without X-Auth-Token, or with a tampered one, answer 401', async () => {
    const demo = await login(s, s.creds.demo);
    const none = await call(`${s.v3}/auth/catalog`, 'GET');
    assert.ok(isKeystoneError(none, 401));
    const tampered = demo.token.slice(0, -3) + (demo.token.endsWith('AAA') ? 'BBB' : 'AAA');
    const bad = await call(`${s.v3}/auth/catalog`, 'GET', { token: tampered });
    assert.ok(isKeystoneError(bad, 401));
  });

  void test('DELETE /v3/auth/tokens revokes the token at once, and the tokens rescoped from it', async () => {
    const c = s.creds.demo;
    const unscoped = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: passwordAuth({ name: c.username }, c.password, 'unscoped'),
    });
    const parent = unscoped.headers.get('x-subject-token')!;
    const child = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      body: {
        auth: { identity: { methods: ['token'], token: { id: parent } }, scope: projectScope('demo') },
      },
    });
    const childToken = child.headers.get('x-subject-token')!;
    const other = await login(s, s.creds.demo);
    const del = await call(`${s.v3}/auth/tokens`, 'DELETE', {
      token: other.token,
      headers: { 'x-subject-token': parent },
    });
    assert.equal(del.status, 204, del.text);
    const check = await call(`${s.v3}/auth/tokens`, 'GET', {
      token: other.token,
      headers: { 'x-subject-token': parent },
    });
    assert.ok(isKeystoneError(check, 404), check.text);
    await assert.rejects(s.identity.validate(childToken), /revoked/);
    // The token used to revoke is unaffected.
    assert.equal((await s.identity.validate(other.token)).userName, 'demo');
  });

  void test('GET /v3/auth/catalog, /v3/auth/projects and /v3/auth/domains describe the caller', async () => {
    const demo = await login(s, s.creds.demo);
    const cat = await call<{ catalog: { type: string }[] }>(`${s.v3}/auth/catalog`, 'GET', {
      token: demo.token,
    });
    assert.equal(cat.status, 200);
    assert.ok(cat.body.catalog.some((x) => x.type === 'identity'));
    const projects = await call<{ projects: KRef[] }>(`${s.v3}/auth/projects`, 'GET', { token: demo.token });
    assert.deepEqual(
      projects.body.projects.map((p) => p.name),
      ['demo'],
    );
    const domains = await call<{ domains: KRef[] }>(`${s.v3}/auth/domains`, 'GET', { token: demo.token });
    assert.equal(domains.status, 200);
    assert.deepEqual(domains.body.domains, []);
  });
});

void describe('malformed requests', () => {
  void test('bad JSON, missing fields and unsupported methods answer 400 in Keystone shape, never 500', async () => {
    const bodies: { raw?: string; body?: unknown }[] = [
      { raw: '{"auth": ' },
      { body: {} },
      { body: { auth: {} } },
      { body: { auth: { identity: { methods: [] } } } },
      { body: { auth: { identity: { methods: ['password'] } } } },
      {
        body: {
          auth: { identity: { methods: ['password'], password: { user: { name: 'demo', password: 'x' } } } },
        },
      },
      { body: { auth: { identity: { methods: ['totp'], totp: {} } } } },
      {
        body: { auth: { identity: { methods: ['password'], password: { user: { id: 'x', password: 1 } } } } },
      },
      {
        body: {
          auth: {
            identity: { methods: ['password'], password: { user: { id: 'x', password: 'y' } } },
            scope: { project: {} },
          },
        },
      },
      {
        body: {
          auth: {
            identity: { methods: ['password'], password: { user: { id: 'x', password: 'y' } } },
            scope: 'everything',
          },
        },
      },
      { body: [1, 2, 3] },
    ];
    for (const b of bodies) {
      const r = await call(
        `${s.v3}/auth/tokens`,
        'POST',
        b.raw !== undefined ? { rawBody: b.raw } : { body: b.body },
      );
      assert.ok(isKeystoneError(r, 400), `${JSON.stringify(b)} → ${r.status} ${r.text}`);
    }
    const empty = await call<TokenReply>(`${s.v3}/auth/tokens`, 'POST', {
      headers: { 'content-type': 'application/json' },
      rawBody: '',
    });
    assert.ok(isKeystoneError(empty, 400), empty.text);
  });
});
