import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { startCloud, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string };
const V = { 'openstack-api-version': 'compute 2.79' };

async function routedPort(h: CloudHarness) {
  const net = (
    await h.call<{ network: Obj }>('POST', '/network/v2.0/networks', { body: { network: { name: 'n' } } })
  ).body.network;
  const subnet = (
    await h.call<{ subnet: Obj }>('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: net.id, cidr: '10.4.0.0/24', ip_version: 4 } },
    })
  ).body.subnet;
  const pub = (await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?name=public')).body
    .networks[0]!;
  const router = (
    await h.call<{ router: Obj }>('POST', '/network/v2.0/routers', {
      body: { router: { name: 'r', external_gateway_info: { network_id: pub.id } } },
    })
  ).body.router;
  await h.call('PUT', `/network/v2.0/routers/${router.id}/add_router_interface`, {
    body: { subnet_id: subnet.id },
  });
  const port = (
    await h.call<{ port: Obj }>('POST', '/network/v2.0/ports', { body: { port: { network_id: net.id } } })
  ).body.port;
  const fip = (
    await h.call<{ floatingip: Obj }>('POST', '/network/v2.0/floatingips', {
      body: { floatingip: { floating_network_id: pub.id } },
    })
  ).body.floatingip;
  return { net, port, fip };
}

test('an injected "Resource not found" fails the next floating-IP association only', async () => {
  const h = await startCloud();
  try {
    const { port, fip } = await routedPort(h);
    const rule = await h.call<{ fault: { id: string } }>('POST', '/_faults', {
      token: 'admin',
      body: {
        kind: 'fail',
        operation: 'network.floatingips.update',
        count: 1,
        failure: { type: 'http', status: 404, message: 'Resource not found' },
      },
    });
    assert.equal(rule.status, 201);
    const first = await h.call('PUT', `/network/v2.0/floatingips/${fip.id}`, {
      body: { floatingip: { port_id: port.id } },
    });
    assert.equal(first.status, 404);
    assert.deepEqual(first.body, {
      NeutronError: { type: 'HTTPNotFound', message: 'Resource not found', detail: '' },
    });
    const second = await h.call<{ floatingip: Obj }>('PUT', `/network/v2.0/floatingips/${fip.id}`, {
      body: { floatingip: { port_id: port.id } },
    });
    assert.equal(second.status, 200);
    assert.equal(second.body.floatingip.port_id, port.id);
    assert.deepEqual(
      (await h.call<{ faults: unknown[] }>('GET', '/_faults', { token: 'admin' })).body.faults,
      [],
    );
  } finally {
    await h.close();
  }
});

test('an injected scheduling failure ends the server in ERROR with "No valid host was found" and frees its port', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const { net } = await routedPort(h);
    h.cloud.faults.failNext('compute.servers.create', 1, { type: 'error-state' });
    const img = (await h.call<{ images: Obj[] }>('GET', '/image/v2/images?name=fedora-coreos-38')).body
      .images[0]!.id;
    const created = await h.call<{ server: Obj }>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: { server: { name: 'doomed', flavorRef: '2', imageRef: img, networks: [{ uuid: net.id }] } },
    });
    assert.equal(created.status, 202);
    await clock.advance(1000);
    const s = await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${created.body.server.id}`, {
      headers: V,
    });
    assert.equal(s.body.server.status, 'ERROR');
    const fault = s.body.server.fault as { code: number; message: string; details?: string };
    assert.equal(fault.code, 500);
    assert.equal(fault.message, 'No valid host was found. ');
    assert.equal(fault.details, undefined);
    const asAdmin = await h.call<{ server: { fault: { details: string } } }>(
      'GET',
      `/compute/v2.1/servers/${created.body.server.id}`,
      { token: 'admin' },
    );
    assert.match(asAdmin.body.server.fault.details, /NoValidHost/);
    const ports = await h.call<{ ports: unknown[] }>(
      'GET',
      `/network/v2.0/ports?device_id=${created.body.server.id}`,
    );
    assert.deepEqual(ports.body.ports, []);
    // the next create is not affected
    const ok = await h.call<{ server: Obj }>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: { server: { name: 'fine', flavorRef: '2', imageRef: img, networks: [{ uuid: net.id }] } },
    });
    await clock.advance(1000);
    assert.equal(
      (await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${ok.body.server.id}`)).body.server.status,
      'ACTIVE',
    );
  } finally {
    await h.close();
  }
});

test('a 5xx rate answers service calls with the service error shape until cleared', async () => {
  const h = await startCloud();
  try {
    h.cloud.faults.errorRate(1, { operation: 'compute.*', status: 503 });
    const r = await h.call('GET', '/compute/v2.1/servers');
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, {
      serviceUnavailable: {
        code: 503,
        message: 'The server is currently unavailable. Please try again at a later time.',
      },
    });
    assert.equal((await h.call('GET', '/network/v2.0/networks')).status, 200);
    h.cloud.faults.clear();
    h.cloud.faults.errorRate(0.5, { operation: 'network.networks.list', seed: 42 });
    let failed = 0;
    for (let i = 0; i < 40; i++) if ((await h.call('GET', '/network/v2.0/networks')).status === 503) failed++;
    assert.ok(failed > 8 && failed < 32, `${failed} of 40 failed`);
    assert.equal((await h.call('DELETE', '/_faults', { token: 'admin' })).status, 204);
    assert.equal((await h.call('GET', '/network/v2.0/networks')).status, 200);
  } finally {
    await h.close();
  }
});

test('an injected quota failure answers with the service own quota error', async () => {
  const h = await startCloud();
  try {
    h.cloud.faults.failNext('network.floatingips.create', 1, { type: 'quota' });
    const pub = (await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?name=public')).body
      .networks[0]!;
    const r = await h.call('POST', '/network/v2.0/floatingips', {
      body: { floatingip: { floating_network_id: pub.id } },
    });
    assert.equal(r.status, 409);
    assert.deepEqual(r.body, {
      NeutronError: {
        type: 'OverQuota',
        message: "Quota exceeded for resources: ['floatingip'].",
        detail: '',
      },
    });
    h.cloud.faults.failNext('compute.servers.create', 1, { type: 'quota', resource: 'cores' });
    const s = await h.call<{ forbidden: { message: string } }>('POST', '/compute/v2.1/servers', {
      body: { server: { name: 'x', flavorRef: '2' } },
    });
    assert.equal(s.status, 403);
    assert.match(s.body.forbidden.message, /^Quota exceeded for cores/);
  } finally {
    await h.close();
  }
});

test('a slow call answers only after the injected delay has passed on the clock', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock });
  try {
    h.cloud.faults.slow(5000, { operation: 'compute.flavors.list', count: 1 });
    let done = false;
    const pending = h.call('GET', '/compute/v2.1/flavors').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    await clock.advance(4999);
    assert.equal(done, false);
    await clock.advance(1);
    assert.equal((await pending).status, 200);
    assert.equal(done, true);
  } finally {
    await h.close();
  }
});

test('fault rules are admin-only and must name a known operation', async () => {
  const h = await startCloud();
  try {
    const body = {
      kind: 'fail',
      operation: 'compute.servers.create',
      failure: { type: 'http', status: 500 },
    };
    assert.equal((await h.call('POST', '/_faults', { body })).status, 403);
    const typo = await h.call<{ error: { message: string } }>('POST', '/_faults', {
      token: 'admin',
      body: { ...body, operation: 'compute.server.create' },
    });
    assert.equal(typo.status, 400);
    assert.match(typo.body.error.message, /no operation matches "compute.server.create"/);
    const ops = await h.call<{ operations: string[] }>('GET', '/_faults/operations', { token: 'admin' });
    assert.ok(ops.body.operations.includes('network.floatingips.update'));
    assert.ok(ops.body.operations.includes('load-balancer.loadbalancers.create'));
  } finally {
    await h.close();
  }
});

test('the cloud counts the calls it answered by operation, failed ones too, for admins only', async () => {
  const h = await startCloud();
  try {
    const calls = async () =>
      (await h.call<{ total: number; calls: Record<string, number> }>('GET', '/_calls', { token: 'admin' }))
        .body;
    const before = await calls();
    await h.call('GET', '/network/v2.0/networks');
    await h.call('GET', '/network/v2.0/networks?name=public');
    h.cloud.faults.errorRate(1, { operation: 'compute.servers.list', status: 503 });
    assert.equal((await h.call('GET', '/compute/v2.1/servers')).status, 503);
    h.cloud.faults.clear();
    const after = await calls();
    assert.equal(after.total - before.total, 3);
    assert.equal(
      (after.calls['network.networks.list'] ?? 0) - (before.calls['network.networks.list'] ?? 0),
      2,
    );
    assert.equal((after.calls['compute.servers.list'] ?? 0) - (before.calls['compute.servers.list'] ?? 0), 1);
    assert.deepEqual(
      Object.values(after.calls),
      Object.values(after.calls).sort((a, b) => b - a),
      'most called first',
    );
    const tenant = await h.call<{ forbidden?: unknown }>('GET', '/_calls');
    assert.equal(tenant.status, 403);
  } finally {
    await h.close();
  }
});
