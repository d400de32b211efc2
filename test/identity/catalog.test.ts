import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  call,
  login,
  passwordAuth,
  projectScope,
  startIdentityServer,
  type IdentityServer,
  type KEndpoint,
  type KService,
  type KToken,
} from './helpers.ts';

let s: IdentityServer;
before(async () => {
  s = await startIdentityServer();
  s.identity.registerService({ type: 'container-infra', name: 'magnum', urlForProject: () => `${s.url}/v1` });
  s.identity.registerService({
    type: 'object-store',
    name: 'swift',
    urlForProject: (p) => `${s.url}/cloud/object-store/v1/AUTH_${p}`,
  });
});
after(() => s.close());

void test("a project-scoped token's catalog has every service on public, internal and admin, with project URLs filled in", async () => {
  const t = await login(s, s.creds['demo-sa']);
  const catalog = t.body.token.catalog!;
  const magnum = catalog.find((c) => c.type === 'container-infra')!;
  assert.equal(magnum.name, 'magnum');
  assert.deepEqual(magnum.endpoints.map((e) => e.interface).sort(), ['admin', 'internal', 'public']);
  for (const e of magnum.endpoints) {
    assert.equal(e.url, `${s.url}/v1`);
    assert.equal(e.region_id, 'RegionOne');
  }
  const swift = catalog.find((c) => c.type === 'object-store')!;
  assert.equal(swift.endpoints[0]!.url, `${s.url}/cloud/object-store/v1/AUTH_${t.body.token.project!.id}`);
});

void test('a system-scoped token lists only services whose URL does not depend on a project', async () => {
  const r = await call<{ token: KToken }>(`${s.v3}/auth/tokens`, 'POST', {
    body: passwordAuth({ name: 'admin' }, s.creds.admin.password, { system: { all: true } }),
  });
  const types = r.body.token.catalog!.map((c) => c.type).sort();
  assert.deepEqual(types, ['container-infra', 'identity']);
});

void test('services, endpoints and regions are listed with stable ids; endpoint URLs keep the project template', async () => {
  const admin = (await login(s, s.creds.admin, projectScope('admin'))).token;
  const services = await call<{ services: KService[] }>(`${s.v3}/services`, 'GET', { token: admin });
  assert.deepEqual(services.body.services.map((x) => x.type).sort(), [
    'container-infra',
    'identity',
    'object-store',
  ]);
  const endpoints = await call<{ endpoints: KEndpoint[] }>(`${s.v3}/endpoints?interface=public`, 'GET', {
    token: admin,
  });
  assert.equal(endpoints.body.endpoints.length, 3);
  const swiftService = services.body.services.find((x) => x.type === 'object-store')!;
  const swift = endpoints.body.endpoints.find((e) => e.service_id === swiftService.id)!;
  assert.equal(swift.url, `${s.url}/cloud/object-store/v1/AUTH_$(project_id)s`);
  const one = await call<{ endpoint: KEndpoint }>(`${s.v3}/endpoints/${swift.id}`, 'GET', { token: admin });
  assert.equal(one.body.endpoint.url, swift.url);
  const svc = await call<{ service: KService }>(`${s.v3}/services/${swiftService.id}`, 'GET', {
    token: admin,
  });
  assert.equal(svc.body.service.name, 'swift');
  const regions = await call<{ regions: { id: string }[] }>(`${s.v3}/regions`, 'GET', { token: admin });
  assert.deepEqual(
    regions.body.regions.map((x) => x.id),
    ['RegionOne'],
  );

  // Another server (another process, or a restart) shows the same ids.
  const other = await startIdentityServer();
  try {
    other.identity.registerService({
      type: 'object-store',
      name: 'swift',
      urlForProject: (p) => `${other.url}/x/${p}`,
    });
    const otherAdmin = (await login(other, other.creds.admin, projectScope('admin'))).token;
    const otherServices = await call<{ services: KService[] }>(
      `${other.v3}/services?type=object-store`,
      'GET',
      { token: otherAdmin },
    );
    assert.equal(otherServices.body.services[0]!.id, swiftService.id);
  } finally {
    await other.close();
  }
});

void test('GET /v3/auth/catalog returns the same catalog as the token', async () => {
  const t = await login(s, s.creds.demo);
  const r = await call<{ catalog: KService[] }>(`${s.v3}/auth/catalog`, 'GET', { token: t.token });
  assert.deepEqual(r.body.catalog, t.body.token.catalog);
});
