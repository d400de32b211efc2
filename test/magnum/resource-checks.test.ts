import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parse as parseYaml } from 'yaml';
import { buildServer } from '../../src/api/index.ts';
import { magnumRoutes } from '../../src/api/magnum/index.ts';
import { testConfig } from '../../src/cli/load-config.ts';
import { createCloudLookup, type ClosableCloudLookup } from '../../src/cloud/index.ts';
import { defaultPolicy, systemClock } from '../../src/domain/index.ts';
import { KeystoneIdentity, keystoneServiceAuth } from '../../src/identity/index.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';

/**
 * Magnum's checks of the OpenStack resources a template or cluster names, against Magnetar's
 * embedded cloud over HTTP (the cloud's fake), through the cloud library's CloudLookup. The
 * façade under test is mounted on its own server with that look-up; identity is Magnetar's,
 * reached over HTTP as an external Keystone.
 */

interface CloudEntry {
  auth: Record<string, string>;
}

let m: Magnetar;
let app: FastifyInstance;
let url: string;
let lookup: ClosableCloudLookup;
let identity: KeystoneIdentity;
let dataDir: string;
let token: string;
let catalog: { type: string; endpoints: { interface: string; url: string }[] }[];

async function login(c: CloudEntry) {
  const res = await fetch(`${m.url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: { name: c.auth.username, password: c.auth.password, domain: { name: 'Default' } },
          },
        },
        scope: { project: { name: c.auth.project_name, domain: { name: 'Default' } } },
      },
    }),
  });
  assert.equal(res.status, 201);
  const body = (await res.json()) as { token: { catalog: typeof catalog } };
  return { token: res.headers.get('x-subject-token')!, catalog: body.token.catalog };
}

function endpoint(type: string): string {
  return catalog.find((s) => s.type === type)!.endpoints.find((e) => e.interface === 'public')!.url;
}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      'x-auth-token': token,
      'openstack-api-version': 'container-infra latest',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  const detail = (json as { errors?: { detail: string }[] } | undefined)?.errors?.[0]?.detail ?? '';
  return { status: res.status, body: json, detail };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'magnetar-magnum-rc-'));
  m = await startMagnetar({ config: testConfig({ dataDir }), controllers: false, logger: false });
  const clouds = (
    parseYaml(readFileSync(join(dataDir, 'clouds.yaml'), 'utf8')) as { clouds: Record<string, CloudEntry> }
  ).clouds;
  identity = new KeystoneIdentity({
    keystoneUrl: `${m.url}/identity/v3`,
    service: keystoneServiceAuth('password', clouds['magnetar-admin']!.auth),
    baseUrl: () => url,
    clock: systemClock,
  });
  lookup = createCloudLookup({ authUrl: `${m.url}/identity/v3` });
  app = await buildServer({
    config: testConfig(),
    plugins: [
      {
        name: 'magnum',
        prefix: '',
        plugin: magnumRoutes({
          store: m.store,
          identity,
          clock: systemClock,
          policy: defaultPolicy,
          baseUrl: () => url,
          cloud: lookup,
        }),
      },
    ],
    logger: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  ({ token, catalog } = await login(clouds['magnetar-demo-sa']!));
  // the guide's prerequisite: the service account's keypair
  const kp = await fetch(`${endpoint('compute')}/os-keypairs`, {
    method: 'POST',
    headers: { 'x-auth-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ keypair: { name: 'my-keypair' } }),
  });
  assert.ok(kp.status === 200 || kp.status === 201, `keypair: ${kp.status}`);
});

after(async () => {
  await app?.close();
  lookup?.close();
  await identity?.close();
  await m?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const template = (extra: Record<string, unknown> = {}) => ({
  name: 'checked',
  coe: 'kubernetes',
  image_id: 'fedora-coreos-38',
  keypair_id: 'my-keypair',
  external_network_id: 'public',
  flavor_id: 'm1.medium',
  master_flavor_id: 'm1.medium',
  network_driver: 'calico',
  labels: { kube_tag: 'v1.32.5' },
  ...extra,
});

void test('a template naming existing resources is created and takes cluster_distro from the image', async () => {
  const r = await call('POST', '/v1/clustertemplates', template());
  assert.equal(r.status, 201, r.detail);
  assert.equal(r.body!.cluster_distro, 'fedora-coreos');
});

void test('unknown images, flavors, keypairs and networks are refused with Magnum statuses and messages', async () => {
  const cases: [Record<string, unknown>, number, RegExp][] = [
    [{ image_id: 'no-such-image' }, 400, /^Image no-such-image could not be found/],
    [{ flavor_id: 'm9.huge' }, 400, /^Unable to find flavor m9\.huge/],
    [{ master_flavor_id: 'm9.huge' }, 400, /^Unable to find flavor m9\.huge/],
    [{ keypair_id: 'not-mine' }, 404, /^Unable to find keypair not-mine/],
    [{ external_network_id: 'nowhere' }, 400, /^Unable to find external network nowhere/],
    [{ fixed_network: 'nowhere' }, 400, /^Unable to find fixed network nowhere/],
    [{ fixed_subnet: 'nowhere' }, 400, /^Unable to find fixed subnet nowhere/],
  ];
  for (const [extra, status, re] of cases) {
    const r = await call('POST', '/v1/clustertemplates', template({ name: 'bad', ...extra }));
    assert.equal(r.status, status, JSON.stringify(extra));
    assert.match(r.detail, re);
  }
});

void test('an image without os_distro is a 400; a name shared by two images is a 409', async () => {
  const glance = endpoint('image');
  for (const name of ['plain-image', 'twin-image', 'twin-image']) {
    const res = await fetch(`${glance}/v2/images`, {
      method: 'POST',
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({
        name,
        disk_format: 'qcow2',
        container_format: 'bare',
        ...(name === 'twin-image' ? { os_distro: 'ubuntu' } : {}),
      }),
    });
    assert.ok(res.status === 201 || res.status === 200, `image ${name}: ${res.status} ${await res.text()}`);
  }
  const plain = await call('POST', '/v1/clustertemplates', template({ name: 'p', image_id: 'plain-image' }));
  assert.equal(plain.status, 400);
  assert.match(plain.detail, /^Image plain-image doesn't contain os_distro field/);
  const twin = await call('POST', '/v1/clustertemplates', template({ name: 't', image_id: 'twin-image' }));
  assert.equal(twin.status, 409);
  assert.match(twin.detail, /Multiple images exist with same name twin-image/);
});

void test('cluster create checks the cluster values over the template ones: a keypair of the caller, flavors', async () => {
  const base = {
    cluster_template_id: 'checked',
    master_count: 1,
    node_count: 1,
    master_flavor_id: 'm1.medium',
    flavor_id: 'm1.large',
  };
  const ok = await call('POST', '/v1/clusters', { ...base, name: 'ok', keypair: 'my-keypair' });
  assert.equal(ok.status, 202, ok.detail);
  const nokey = await call('POST', '/v1/clusters', { ...base, name: 'nokey', keypair: 'someone-elses' });
  assert.equal(nokey.status, 404);
  assert.match(nokey.detail, /^Unable to find keypair someone-elses/);
  const noflavor = await call('POST', '/v1/clusters', {
    ...base,
    name: 'noflavor',
    keypair: 'my-keypair',
    flavor_id: 'm9.huge',
  });
  assert.equal(noflavor.status, 400);
  assert.match(noflavor.detail, /^Unable to find flavor m9\.huge/);
});

void test('cluster create looks a flavor up once when masters and workers share it', async () => {
  const flavorLookups: string[] = [];
  const count = (req: { url?: string }) => {
    if (req.url && /\/flavors(\/|\?|$)/.test(req.url)) flavorLookups.push(req.url);
  };
  m.app.server.on('request', count);
  try {
    const res = await call('POST', '/v1/clusters', {
      cluster_template_id: 'checked',
      name: 'one-flavor',
      master_count: 1,
      node_count: 1,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'my-keypair',
    });
    assert.equal(res.status, 202, res.detail);
    assert.equal(flavorLookups.length, 1, flavorLookups.join(', '));
  } finally {
    m.app.server.off('request', count);
  }
});

void test('nodegroup create checks a given flavor and image', async () => {
  const c = await call('GET', '/v1/clusters/ok');
  const uuid = String(c.body!.uuid);
  // test setup: what the driver records once the control plane answers
  const { MagnumTypes } = await import('../../src/domain/index.ts');
  const obj = await m.store.getByUid(MagnumTypes.Cluster, uuid);
  await m.store.updateStatus({ ...obj!, status: { ...obj!.status, apiAddress: 'https://192.0.2.10:6443' } });
  const bad = await call('POST', `/v1/clusters/${uuid}/nodegroups`, {
    name: 'gpu',
    node_count: 1,
    flavor_id: 'm9.huge',
  });
  assert.equal(bad.status, 400);
  assert.match(bad.detail, /^Unable to find flavor m9\.huge/);
  const good = await call('POST', `/v1/clusters/${uuid}/nodegroups`, {
    name: 'big',
    node_count: 1,
    flavor_id: 'm1.large',
    labels: { availability_zone: 'nova' },
  });
  assert.equal(good.status, 202, good.detail);
});
