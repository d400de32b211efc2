import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import {
  CloudError,
  Session,
  type CloudConfig,
  type RetryEvent,
  type SessionOptions,
} from '../../src/cloud/index.ts';
import { keystone, routes, startFixture, type FixtureServer, type Handler } from './http-fixture.ts';

function passwordConfig(server: FixtureServer, extra: Partial<CloudConfig> = {}): CloudConfig {
  return {
    authType: 'password',
    auth: {
      auth_url: `${server.url}/identity/v3`,
      username: 'demo',
      password: 'secret',
      project_name: 'demo',
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    ...extra,
  };
}

// Each test has a deadline: a retry that waits on the manual clock by mistake must fail, not hang.

/** A session on a manual clock whose retries can be awaited one by one. */
function harness(config: CloudConfig, options: SessionOptions = {}) {
  const clock = new ManualClock();
  const retries: RetryEvent[] = [];
  let waiting: ((e: RetryEvent) => void) | undefined;
  const session = new Session(config, {
    clock,
    random: () => 0.5,
    onRetry: (e) => {
      retries.push(e);
      waiting?.(e);
      waiting = undefined;
    },
    ...options,
  });
  const nextRetry = () =>
    retries.length > 0 && waiting === undefined && retries.length > consumed
      ? Promise.resolve(retries[consumed++]!)
      : new Promise<RetryEvent>((resolve) => {
          waiting = (e) => {
            consumed++;
            resolve(e);
          };
        });
  let consumed = 0;
  return { clock, session, retries, nextRetry };
}

const service =
  (path: string, reply: ReturnType<Handler>): Handler =>
  (req) =>
    req.path === path ? reply : undefined;

void test(
  'password auth sends the Keystone v3 body and uses the token on service calls',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture();
    t.after(() => server.close());
    server.handle(
      routes(
        keystone({ services: { compute: '{base}/compute/v2.1' } }),
        service('/compute/v2.1/flavors', { status: 200, body: { flavors: [] } }),
      ),
    );
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());

    const res = await session.request<{ flavors: unknown[] }>('compute', 'GET', '/flavors');
    assert.deepEqual(res.body, { flavors: [] });
    const [auth] = server.tokenRequests();
    assert.equal(auth!.path, '/identity/v3/auth/tokens');
    assert.deepEqual(JSON.parse(auth!.body), {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'secret' } },
        },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    });
    assert.equal(server.serviceRequests()[0]!.headers['x-auth-token'], 'tok-1');
    assert.equal(await session.projectId(), 'id-of-demo');
    assert.equal(await session.userId(), 'u-1');
  },
);

void test('an unversioned auth_url gets /v3 appended', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(keystone());
  t.after(() => server.close());
  const config = passwordConfig(server);
  config.auth.auth_url = `${server.url}/identity/`;
  const { session } = harness(config);
  t.after(() => session.close());
  assert.equal(await session.token(), 'tok-1');
  assert.equal(server.tokenRequests()[0]!.path, '/identity/v3/auth/tokens');
});

void test('one token serves many calls, also when they start together', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(
    routes(
      keystone({ services: { network: '{base}/net' } }),
      service('/net/v2.0/networks', { status: 200, body: { networks: [] } }),
    ),
  );
  t.after(() => server.close());
  const { session } = harness(passwordConfig(server));
  t.after(() => session.close());
  await Promise.all([1, 2, 3].map(() => session.request('network', 'GET', '/v2.0/networks')));
  await session.request('network', 'GET', '/v2.0/networks');
  assert.equal(server.tokenRequests().length, 1);
  assert.equal(server.serviceRequests().length, 4);
});

void test('re-authenticates shortly before the token expires', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(
    routes(
      keystone({ ttlSeconds: 3600, services: { image: '{base}/image' } }),
      service('/image/v2/images', { status: 200, body: { images: [] } }),
    ),
  );
  t.after(() => server.close());
  const { session, clock } = harness(passwordConfig(server));
  t.after(() => session.close());
  await session.request('image', 'GET', '/v2/images');
  await clock.advance(50 * 60_000);
  await session.request('image', 'GET', '/v2/images');
  assert.equal(server.tokenRequests().length, 1, 'still valid for 10 minutes: reused');
  await clock.advance(9 * 60_000);
  await session.request('image', 'GET', '/v2/images');
  assert.equal(server.tokenRequests().length, 2, 'one minute left: renewed first');
  assert.equal(server.serviceRequests()[2]!.headers['x-auth-token'], 'tok-2');
});

void test(
  'a 401 from a service triggers exactly one re-authentication and a repeat',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture();
    t.after(() => server.close());
    const ks = keystone({ services: { compute: '{base}/compute' } });
    server.handle(
      routes(ks, (req) => {
        if (req.path !== '/compute/servers') return undefined;
        return req.headers['x-auth-token'] === 'tok-1'
          ? { status: 401, body: { error: { code: 401, message: 'revoked' } } }
          : { status: 200, body: { servers: [] } };
      }),
    );
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());
    const res = await session.request('compute', 'POST', '/servers', { body: {} });
    assert.equal(res.status, 200);
    assert.equal(server.tokenRequests().length, 2);
    assert.deepEqual(
      server.serviceRequests().map((r) => r.headers['x-auth-token']),
      ['tok-1', 'tok-2'],
    );
  },
);

void test(
  'a 401 that persists after re-authentication is an unauthorized error, not a loop',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(
        keystone({ services: { compute: '{base}/compute' } }),
        service('/compute/servers', {
          status: 401,
          body: {
            error: {
              code: 401,
              title: 'Unauthorized',
              message: 'The request you have made requires authentication.',
            },
          },
        }),
      ),
    );
    t.after(() => server.close());
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());
    await assert.rejects(session.request('compute', 'GET', '/servers'), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.kind, 'unauthorized');
      assert.equal(err.transient, false);
      assert.equal(err.cloudMessage, 'The request you have made requires authentication.');
      return true;
    });
    assert.equal(server.tokenRequests().length, 2);
    assert.equal(server.serviceRequests().length, 2);
  },
);

void test(
  'Keystone refusing the credentials gives an unauthorized error with its message',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      keystone({
        refuse: {
          status: 401,
          body: {
            error: { code: 401, title: 'Unauthorized', message: 'The account is locked for user: u-1.' },
          },
        },
      }),
    );
    t.after(() => server.close());
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());
    await assert.rejects(session.request('compute', 'GET', '/servers'), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.kind, 'unauthorized');
      assert.equal(err.service, 'identity');
      assert.equal(err.cloudMessage, 'The account is locked for user: u-1.');
      return true;
    });
    assert.equal(server.tokenRequests().length, 1);
  },
);

void test(
  'a GET answered 503 is retried after a backoff wait and then succeeds',
  { timeout: 30_000 },
  async (t) => {
    let calls = 0;
    const server = await startFixture(
      routes(keystone({ services: { network: '{base}/net' } }), (req) => {
        if (req.path !== '/net/v2.0/ports') return undefined;
        calls++;
        return calls === 1
          ? { status: 503, text: 'Service Unavailable' }
          : { status: 200, body: { ports: [{ id: 'p1' }] } };
      }),
    );
    t.after(() => server.close());
    const { session, clock, nextRetry } = harness(passwordConfig(server));
    t.after(() => session.close());
    const pending = session.request<{ ports: unknown[] }>('network', 'GET', '/v2.0/ports');
    const retry = await nextRetry();
    assert.equal(retry.attempt, 1);
    assert.equal(retry.error.status, 503);
    assert.equal(retry.delayMs, 250, 'full jitter: half (random 0.5) of the 500 ms first step');
    await clock.advance(249);
    assert.equal(calls, 1, 'no repeat before the wait is over');
    await clock.advance(1);
    const res = await pending;
    assert.deepEqual(res.body, { ports: [{ id: 'p1' }] });
    assert.equal(calls, 2);
  },
);

void test(
  'backoff doubles per attempt, is capped, and gives up after maxRetries',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(
        keystone({ services: { network: '{base}/net' } }),
        service('/net/x', { status: 502, text: 'Bad Gateway' }),
      ),
    );
    t.after(() => server.close());
    const { session, clock, nextRetry } = harness(passwordConfig(server), {
      maxRetries: 4,
      retryBaseMs: 1000,
      retryMaxDelayMs: 3000,
      random: () => 0.999,
    });
    t.after(() => session.close());
    const pending = session.request('network', 'GET', '/x').then(
      () => assert.fail('should fail'),
      (err: unknown) => err,
    );
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await nextRetry();
      delays.push(r.delayMs);
      await clock.advance(r.delayMs);
    }
    const err = await pending;
    assert.deepEqual(delays, [999, 1998, 2997, 2997]);
    assert.ok(err instanceof CloudError);
    assert.equal(err.kind, 'transient');
    assert.equal(err.status, 502);
    assert.equal(server.serviceRequests().length, 5);
  },
);

void test('503 with Retry-After waits at least as long as asked', { timeout: 30_000 }, async (t) => {
  let calls = 0;
  const server = await startFixture(
    routes(keystone({ services: { compute: '{base}/c' } }), (req) => {
      if (req.path !== '/c/limits') return undefined;
      calls++;
      return calls === 1
        ? { status: 503, headers: { 'retry-after': '5' }, text: '' }
        : { status: 200, body: { limits: {} } };
    }),
  );
  t.after(() => server.close());
  const { session, clock, nextRetry } = harness(passwordConfig(server));
  t.after(() => session.close());
  const pending = session.request('compute', 'GET', '/limits');
  const retry = await nextRetry();
  assert.equal(retry.delayMs, 5000);
  await clock.advance(4999);
  assert.equal(calls, 1);
  await clock.advance(1);
  assert.equal((await pending).status, 200);
});

void test('429 Too Many Requests is retried like a transient failure', { timeout: 30_000 }, async (t) => {
  let calls = 0;
  const server = await startFixture(
    routes(keystone({ services: { compute: '{base}/c' } }), (req) => {
      if (req.path !== '/c/flavors') return undefined;
      calls++;
      return calls === 1
        ? { status: 429, headers: { 'retry-after': '1' }, body: { message: 'slow down' } }
        : { status: 200, body: { flavors: [] } };
    }),
  );
  t.after(() => server.close());
  const { session, clock, nextRetry } = harness(passwordConfig(server));
  t.after(() => session.close());
  const pending = session.request('compute', 'GET', '/flavors');
  await nextRetry();
  await clock.advance(1000);
  assert.equal((await pending).status, 200);
});

void test(
  'a POST answered 503 is not repeated unless the caller says it is safe',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(
        keystone({ services: { compute: '{base}/c' } }),
        service('/c/servers', { status: 503, body: { computeFault: { code: 503, message: 'try later' } } }),
      ),
    );
    t.after(() => server.close());
    const { session, clock, nextRetry } = harness(passwordConfig(server), { maxRetries: 1 });
    t.after(() => session.close());
    await assert.rejects(
      session.request('compute', 'POST', '/servers', { body: {} }),
      (err: unknown) => err instanceof CloudError && err.transient && err.cloudMessage === 'try later',
    );
    assert.equal(server.serviceRequests().length, 1);

    const pending = session
      .request('compute', 'POST', '/servers', { body: {}, retry: true })
      .catch((e: unknown) => e);
    const r = await nextRetry();
    await clock.advance(r.delayMs);
    assert.ok((await pending) instanceof CloudError);
    assert.equal(server.serviceRequests().length, 3);
  },
);

void test('4xx answers and 501 are never retried', { timeout: 30_000 }, async (t) => {
  const answers: Record<string, { status: number; body: unknown }> = {
    '/c/400': { status: 400, body: { badRequest: { code: 400, message: 'Invalid input' } } },
    '/c/404': { status: 404, body: { itemNotFound: { code: 404, message: 'gone' } } },
    '/c/409': { status: 409, body: { conflictingRequest: { code: 409, message: 'busy' } } },
    '/c/501': { status: 501, body: { notImplemented: { code: 501, message: 'nope' } } },
  };
  const server = await startFixture(
    routes(keystone({ services: { compute: '{base}/c' } }), (req) => answers[req.path]),
  );
  t.after(() => server.close());
  const { session, retries } = harness(passwordConfig(server));
  t.after(() => session.close());
  const kinds: string[] = [];
  for (const path of Object.keys(answers)) {
    const err = await session.request('compute', 'GET', path.slice(2)).catch((e: unknown) => e);
    assert.ok(err instanceof CloudError);
    assert.equal(err.transient, false);
    kinds.push(err.kind);
  }
  assert.deepEqual(kinds, ['bad-request', 'not-found', 'conflict', 'other']);
  assert.equal(retries.length, 0);
  assert.equal(server.serviceRequests().length, 4);
});

void test(
  'a call that gets no answer times out after timeoutMs instead of hanging',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(keystone({ services: { compute: '{base}/c' } }), service('/c/servers/s1', 'hang')),
    );
    t.after(() => server.close());
    const { session, clock } = harness(passwordConfig(server), { maxRetries: 0, timeoutMs: 10_000 });
    t.after(() => session.close());
    const pending = session.request('compute', 'GET', '/servers/s1').catch((e: unknown) => e);
    await server.received(2);
    await clock.advance(9_999);
    assert.equal(server.serviceRequests().length, 1);
    await clock.advance(1);
    const err = await pending;
    assert.ok(err instanceof CloudError);
    assert.equal(err.kind, 'timeout');
    assert.equal(err.transient, true);
  },
);

void test(
  'the default deadline is 30 seconds and a timed-out GET is retried',
  { timeout: 30_000 },
  async (t) => {
    let calls = 0;
    const server = await startFixture(
      routes(keystone({ services: { compute: '{base}/c' } }), (req) => {
        if (req.path !== '/c/servers/s1') return undefined;
        calls++;
        return calls === 1 ? 'hang' : { status: 200, body: { server: { id: 's1' } } };
      }),
    );
    t.after(() => server.close());
    const { session, clock, nextRetry } = harness(passwordConfig(server));
    t.after(() => session.close());
    const pending = session.request('compute', 'GET', '/servers/s1');
    await server.received(2);
    await clock.advance(30_000);
    const r = await nextRetry();
    assert.equal(r.error.kind, 'timeout');
    await clock.advance(r.delayMs);
    assert.equal((await pending).status, 200);
  },
);

void test(
  'a connection reset is a network error, and a GET is retried after it',
  { timeout: 30_000 },
  async (t) => {
    let calls = 0;
    const server = await startFixture(
      routes(keystone({ services: { compute: '{base}/c' } }), (req) => {
        if (req.path !== '/c/flavors') return undefined;
        calls++;
        return calls === 1 ? 'reset' : { status: 200, body: { flavors: [] } };
      }),
    );
    t.after(() => server.close());
    const { session, clock, nextRetry } = harness(passwordConfig(server));
    t.after(() => session.close());
    const pending = session.request('compute', 'GET', '/flavors');
    const r = await nextRetry();
    assert.equal(r.error.kind, 'network');
    assert.equal(r.error.transient, true);
    await clock.advance(r.delayMs);
    assert.equal((await pending).status, 200);
  },
);

void test('a refused connection is a transient network error', { timeout: 30_000 }, async (t) => {
  const server = await startFixture();
  const url = server.url;
  await server.close();
  const session = new Session(
    { authType: 'admin_token', auth: { token: 't' }, endpointOverride: `${url}/c` },
    { maxRetries: 0 },
  );
  t.after(() => session.close());
  await assert.rejects(session.request('compute', 'POST', '/servers', { body: {} }), (err: unknown) => {
    assert.ok(err instanceof CloudError);
    assert.equal(err.kind, 'network');
    assert.equal(err.transient, true);
    assert.match(err.message, /ECONNREFUSED/);
    return true;
  });
});

void test(
  'admin_token sends the fixed token to the endpoint and never calls Keystone',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      service('/magnum/v1/clusters', { status: 200, body: { clusters: [] } }),
    );
    t.after(() => server.close());
    const session = new Session({
      authType: 'admin_token',
      auth: { token: 'ADMIN' },
      endpointOverride: `${server.url}/magnum/v1/`,
    });
    t.after(() => session.close());
    assert.equal(await session.endpoint('container-infra'), `${server.url}/magnum/v1`);
    await session.request('container-infra', 'GET', '/clusters');
    assert.equal(server.tokenRequests().length, 0);
    assert.equal(server.requests[0]!.headers['x-auth-token'], 'ADMIN');
  },
);

void test('auth type none sends no token at all', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(service('/v1/clusters', { status: 200, body: { clusters: [] } }));
  t.after(() => server.close());
  const session = new Session({ authType: 'none', auth: {}, endpointOverride: `${server.url}/v1` });
  t.after(() => session.close());
  await session.request('container-infra', 'GET', '/clusters');
  assert.equal(server.requests[0]!.headers['x-auth-token'], undefined);
});

void test(
  'application credentials authenticate without a scope and cannot be re-scoped',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(keystone());
    t.after(() => server.close());
    const { session } = harness({
      authType: 'v3applicationcredential',
      auth: {
        auth_url: `${server.url}/v3`,
        application_credential_id: 'ac1',
        application_credential_secret: 's3',
      },
    });
    t.after(() => session.close());
    await session.token();
    assert.deepEqual(JSON.parse(server.tokenRequests()[0]!.body), {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { id: 'ac1', secret: 's3' },
        },
      },
    });
    assert.throws(() => session.forProject('other'), /bound to their own project/);
  },
);

void test('a token credential is exchanged for a project-scoped token', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(keystone());
  t.after(() => server.close());
  const { session } = harness({
    authType: 'v3token',
    auth: { auth_url: `${server.url}/v3`, token: 'outer', project_id: 'p9' },
  });
  t.after(() => session.close());
  assert.equal(await session.token(), 'tok-1');
  assert.deepEqual(JSON.parse(server.tokenRequests()[0]!.body), {
    auth: { identity: { methods: ['token'], token: { id: 'outer' } }, scope: { project: { id: 'p9' } } },
  });
});

void test(
  'forProject authenticates with the same credentials scoped to the other project',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(keystone({ services: { volume: '{base}/volume/v3/{project_id}' } }), (req) =>
        req.path.endsWith('/volumes/detail') ? { status: 200, body: { volumes: [] } } : undefined,
      ),
    );
    t.after(() => server.close());
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());
    const tenant = session.forProject('p-tenant');
    await session.request('block-storage', 'GET', '/volumes/detail');
    await tenant.request('block-storage', 'GET', '/volumes/detail');
    const scopes = server
      .tokenRequests()
      .map((r) => (JSON.parse(r.body) as { auth: { scope: unknown } }).auth.scope);
    assert.deepEqual(scopes, [
      { project: { name: 'demo', domain: { name: 'Default' } } },
      { project: { id: 'p-tenant' } },
    ]);
    assert.deepEqual(
      server.serviceRequests().map((r) => r.path),
      ['/volume/v3/id-of-demo/volumes/detail', '/volume/v3/p-tenant/volumes/detail'],
    );
    assert.equal(await tenant.projectId(), 'p-tenant');
  },
);

void test(
  'catalog look-up honours region and interface, and falls back from container-infra to container',
  { timeout: 30_000 },
  async (t) => {
    const ep = (iface: string, region: string, url: string) => ({
      interface: iface,
      region,
      region_id: region,
      url,
    });
    const server = await startFixture(
      keystone({
        catalog: [
          {
            type: 'compute',
            endpoints: [
              ep('public', 'RegionOne', 'http://one/compute'),
              ep('public', 'RegionTwo', 'http://two/compute'),
              ep('internal', 'RegionTwo', 'http://two-int/compute/'),
            ],
          },
          { type: 'container', endpoints: [ep('public', 'RegionTwo', 'http://two/magnum/v1')] },
          { type: 'volumev3', endpoints: [ep('public', 'RegionTwo', 'http://two/volume/v3/$(project_id)s')] },
        ],
      }),
    );
    t.after(() => server.close());
    const two = harness(passwordConfig(server, { regionName: 'RegionTwo' })).session;
    const internal = harness(
      passwordConfig(server, { regionName: 'RegionTwo', interface: 'internal' }),
    ).session;
    const three = harness(passwordConfig(server, { regionName: 'RegionThree' })).session;
    t.after(() => [two, internal, three].forEach((s) => s.close()));
    assert.equal(await two.endpoint('compute'), 'http://two/compute');
    assert.equal(await internal.endpoint('compute'), 'http://two-int/compute');
    assert.equal(await two.endpoint('container-infra'), 'http://two/magnum/v1');
    assert.equal(await two.endpoint('block-storage'), 'http://two/volume/v3/id-of-demo');
    await assert.rejects(three.endpoint('container-infra'), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(
        err.cloudMessage,
        'public endpoint for container-infra service in RegionThree region not found',
      );
      assert.notEqual(err.kind, 'not-found', 'a missing endpoint must not look like a deleted resource');
      return true;
    });
  },
);

void test(
  'per-service endpoint overrides win over the catalog and get the project id filled in',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(keystone({ services: { 'object-store': 'http://catalog/swift' } }));
    t.after(() => server.close());
    const { session } = harness(
      passwordConfig(server, {
        endpointOverrides: { 'object-store': 'http://override/v1/AUTH_{project_id}' },
      }),
    );
    t.after(() => session.close());
    assert.equal(await session.endpoint('object-store'), 'http://override/v1/AUTH_id-of-demo');
  },
);

void test(
  'query parameters, raw bodies and non-JSON answers pass through',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture((req) => {
      if (req.path === '/img/v2/images/i1/file') return { status: 204 };
      if (req.path === '/img/text')
        return { status: 200, headers: { 'content-type': 'text/plain' }, text: 'hello' };
      if (req.path === '/img/v2/images') return { status: 200, body: { images: [] } };
      return undefined;
    });
    t.after(() => server.close());
    const session = new Session({
      authType: 'admin_token',
      auth: { token: 'T' },
      endpointOverride: `${server.url}/img`,
    });
    t.after(() => session.close());
    await session.request('image', 'GET', '/v2/images', {
      query: { name: 'a b', limit: 2, skip: undefined, tag: ['x', 'y'] },
    });
    assert.equal(server.requests[0]!.query.toString(), 'name=a+b&limit=2&tag=x&tag=y');
    await session.request('image', 'PUT', '/v2/images/i1/file', {
      rawBody: Buffer.from('DATA'),
      expect: [204],
    });
    assert.equal(server.requests[1]!.headers['content-type'], 'application/octet-stream');
    assert.equal(server.requests[1]!.body, 'DATA');
    assert.equal((await session.request('image', 'GET', '/text')).body, 'hello');
    const buf = await session.request<Buffer>('image', 'GET', '/text', { responseType: 'buffer' });
    assert.ok(Buffer.isBuffer(buf.body));
  },
);

void test('the request id of a failed call is kept on the error', { timeout: 30_000 }, async (t) => {
  const server = await startFixture(
    service('/c/servers/x', {
      status: 404,
      headers: { 'x-openstack-request-id': 'req-42' },
      body: { itemNotFound: { code: 404, message: 'Instance x could not be found.' } },
    }),
  );
  t.after(() => server.close());
  const session = new Session({
    authType: 'admin_token',
    auth: { token: 'T' },
    endpointOverride: `${server.url}/c`,
  });
  t.after(() => session.close());
  const err = await session.request('compute', 'GET', '/servers/x').catch((e: unknown) => e);
  assert.ok(err instanceof CloudError);
  assert.equal(err.requestId, 'req-42');
  assert.equal(err.cloudCode, 'itemNotFound');
  assert.match(
    err.message,
    /compute GET \/c\/servers\/x: Instance x could not be found\. \(HTTP 404\) \[req-42\]/,
  );
});

void test(
  'forToken acts with a caller token: exchanged at Keystone for its project, or sent as is without Keystone',
  { timeout: 30_000 },
  async (t) => {
    const server = await startFixture(
      routes(
        keystone({ services: { compute: '{base}/c' } }),
        service('/c/os-keypairs/k', { status: 200, body: { keypair: {} } }),
      ),
    );
    t.after(() => server.close());
    const { session } = harness(passwordConfig(server));
    t.after(() => session.close());
    const caller = session.forToken('caller-token', 'p-caller');
    await caller.request('compute', 'GET', '/os-keypairs/k');
    const exchange = server.tokenRequests()[0]!;
    assert.deepEqual(JSON.parse(exchange.body), {
      auth: {
        identity: { methods: ['token'], token: { id: 'caller-token' } },
        scope: { project: { id: 'p-caller' } },
      },
    });
    assert.equal(server.serviceRequests()[0]!.headers['x-auth-token'], 'tok-1');

    const fixed = new Session({
      authType: 'admin_token',
      auth: { token: 'svc' },
      endpointOverride: `${server.url}/c`,
    });
    t.after(() => fixed.close());
    await fixed.forToken('caller-token').request('compute', 'GET', '/os-keypairs/k');
    assert.equal(server.serviceRequests()[1]!.headers['x-auth-token'], 'caller-token');
    assert.equal(server.tokenRequests().length, 1);
  },
);
