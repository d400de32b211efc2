import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { cloudType, embeddedCloud } from '../../src/cloudsim/index.ts';
import { ManualClock, type ApiObject } from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { startCloud, TestIdentity, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string };
const V = { 'openstack-api-version': 'compute 2.79' };

async function imageId(h: CloudHarness): Promise<string> {
  return (await h.call<{ images: Obj[] }>('GET', '/image/v2/images?name=fedora-coreos-38')).body.images[0]!
    .id;
}

test('after a restart on the same SQLite file, a building server still becomes ACTIVE and a load balancer ACTIVE', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cloudsim-restart-'));
  const path = join(dir, 'cloud.sqlite');
  try {
    const first = await startCloud({ clock: new ManualClock(), latencyMs: 5000, storePath: path });
    const net = (
      await first.call<{ network: Obj }>('POST', '/network/v2.0/networks', {
        body: { network: { name: 'n' } },
      })
    ).body.network;
    const subnet = (
      await first.call<{ subnet: Obj }>('POST', '/network/v2.0/subnets', {
        body: { subnet: { network_id: net.id, cidr: '10.5.0.0/24', ip_version: 4 } },
      })
    ).body.subnet;
    const server = await first.call<{ server: Obj }>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: {
        server: {
          name: 'survivor',
          flavorRef: '2',
          imageRef: await imageId(first),
          networks: [{ uuid: net.id }],
        },
      },
    });
    const lb = await first.call<{ loadbalancer: Obj }>('POST', '/load-balancer/v2/lbaas/loadbalancers', {
      body: { loadbalancer: { vip_subnet_id: subnet.id } },
    });
    assert.equal(server.status, 202);
    await first.close();

    // a new process: new store instance over the same file, a clock at the same instant
    const store = new SqliteStore({ path });
    const clock = new ManualClock();
    const second = await startCloud({ clock, latencyMs: 5000, store });
    try {
      const stored = async (kind: 'Server' | 'LoadBalancer', id: string) => {
        const rows = await store.list<ApiObject>(cloudType(kind));
        return rows.items.find((o) => o.metadata.name === id)!.spec;
      };
      assert.equal((await stored('Server', server.body.server.id)).status, 'BUILD');
      await clock.advance(5000);
      // read the store directly: the resumed timers did it, not a read
      assert.equal((await stored('Server', server.body.server.id)).status, 'ACTIVE');
      assert.equal((await stored('LoadBalancer', lb.body.loadbalancer.id)).provisioning_status, 'ACTIVE');
      const shown = await second.call<{ server: Obj }>(
        'GET',
        `/compute/v2.1/servers/${server.body.server.id}`,
      );
      assert.equal(shown.body.server.status, 'ACTIVE');
      // the address allocator knows what is taken after the restart
      const port = await second.call<{ port: { fixed_ips: { ip_address: string }[] } }>(
        'POST',
        '/network/v2.0/ports',
        { body: { port: { network_id: net.id } } },
      );
      const taken = new Set(['10.5.0.2', '10.5.0.3']);
      assert.ok(!taken.has(port.body.port.fixed_ips[0]!.ip_address));
    } finally {
      await second.close();
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rows stored without the index labels (an older version) are found by name and guard their security group after a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cloudsim-reindex-'));
  const path = join(dir, 'cloud.sqlite');
  try {
    const first = await startCloud({ storePath: path });
    const made = async (path: string, key: string, body: unknown) => {
      const r = await first.call<Record<string, Obj>>('POST', path, { body: { [key]: body } });
      assert.ok(r.status < 300, `${path}: ${r.status} ${r.text}`);
      return r.body[key]!;
    };
    const net = await made('/network/v2.0/networks', 'network', { name: 'legacy-net' });
    await made('/network/v2.0/subnets', 'subnet', { network_id: net.id, cidr: '10.9.0.0/24', ip_version: 4 });
    const sg = await made('/network/v2.0/security-groups', 'security_group', { name: 'legacy-sg' });
    await made('/network/v2.0/ports', 'port', { network_id: net.id, security_groups: [sg.id] });
    const lb = await made('/load-balancer/v2/lbaas/loadbalancers', 'loadbalancer', {
      name: 'legacy-lb',
      vip_network_id: net.id,
    });
    await first.close();

    // what an older version stored: only the labels it knew
    const old = new SqliteStore({ path });
    const known = new Set(['external', 'network_id', 'device_id', 'owner', 'security_group_id', 'port_id']);
    // every row of these kinds now misses an index label, but a port in no security group
    let unlabelled = 0;
    for (const kind of ['Network', 'Port', 'LoadBalancer', 'SecurityGroupRule'] as const) {
      for (const o of (await old.list<ApiObject>(cloudType(kind))).items) {
        const groups = (o.spec as { security_groups?: string[] }).security_groups;
        if (kind !== 'Port' || (groups ?? []).length > 0) unlabelled++;
        const labels = Object.fromEntries(
          Object.entries(o.metadata.labels ?? {}).filter(([k]) => known.has(k)),
        );
        await old.update({ ...o, metadata: { ...o.metadata, labels } });
      }
    }
    await old.close();

    // the relabelling is logged through the logger of the server the cloud runs in
    const lines: string[] = [];
    const logged = Fastify({ logger: { level: 'info', stream: { write: (l: string) => lines.push(l) } } });
    const relabelStore = new SqliteStore({ path });
    const relabelling = embeddedCloud({
      store: relabelStore,
      identity: new TestIdentity(),
      clock: new ManualClock(),
      latencyMs: 0,
    });
    await logged.register(relabelling.plugin, { prefix: '/cloud' });
    await logged.ready();
    const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => 'relabelled' in l);
    assert.ok(unlabelled >= 6, `network, public network, port, load balancer, rules: ${unlabelled}`);
    assert.deepEqual([line?.component, line?.relabelled], ['embedded-cloud', unlabelled]);
    await relabelling.close();
    await logged.close();
    await relabelStore.close();

    const second = await startCloud({ storePath: path });
    try {
      const nets = await second.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?name=legacy-net');
      assert.deepEqual(
        nets.body.networks.map((n) => n.id),
        [net.id],
      );
      const lbs = await second.call<{ loadbalancers: Obj[] }>(
        'GET',
        '/load-balancer/v2/lbaas/loadbalancers?name=legacy-lb',
      );
      assert.deepEqual(
        lbs.body.loadbalancers.map((x) => x.id),
        [lb.id],
      );
      const inUse = await second.call<{ NeutronError: { type: string } }>(
        'DELETE',
        `/network/v2.0/security-groups/${sg.id}`,
      );
      assert.equal(inUse.status, 409);
      assert.equal(inUse.body.NeutronError.type, 'SecurityGroupInUse');
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the inventory lists every resource of a project, and a full teardown leaves only the default security group', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 100 });
  const p = h.identity.projectA;
  try {
    const call = async <T = Obj>(method: string, path: string, key: string, body?: unknown) => {
      const r = await h.call<Record<string, T>>(method, path, body === undefined ? {} : { body, headers: V });
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
      return r.body[key]!;
    };
    const pub = (await h.call<{ networks: Obj[] }>('GET', '/network/v2.0/networks?name=public')).body
      .networks[0]!;
    const net = await call('POST', '/network/v2.0/networks', 'network', { network: { name: 'k8s' } });
    const subnet = await call('POST', '/network/v2.0/subnets', 'subnet', {
      subnet: { network_id: net.id, cidr: '10.8.0.0/24', ip_version: 4 },
    });
    const router = await call('POST', '/network/v2.0/routers', 'router', {
      router: { name: 'r', external_gateway_info: { network_id: pub.id } },
    });
    await h.call('PUT', `/network/v2.0/routers/${router.id}/add_router_interface`, {
      body: { subnet_id: subnet.id },
    });
    const sg = await call('POST', '/network/v2.0/security-groups', 'security_group', {
      security_group: { name: 'k8s-worker' },
    });
    await h.call('POST', '/compute/v2.1/os-keypairs', { body: { keypair: { name: 'kp' } } });
    const server = await call('POST', '/compute/v2.1/servers', 'server', {
      server: {
        name: 'node',
        flavorRef: '2',
        imageRef: await imageId(h),
        networks: [{ uuid: net.id }],
        security_groups: [{ name: 'k8s-worker' }],
        key_name: 'kp',
      },
    });
    const lb = await call('POST', '/load-balancer/v2/lbaas/loadbalancers', 'loadbalancer', {
      loadbalancer: { vip_subnet_id: subnet.id },
    });
    const volume = await call('POST', `/volume/v3/${p}/volumes`, 'volume', { volume: { size: 1 } });
    await clock.advance(100);
    const ports = (await h.call<{ ports: Obj[] }>('GET', `/network/v2.0/ports?device_id=${server.id}`)).body
      .ports;
    const fip = await call('POST', '/network/v2.0/floatingips', 'floatingip', {
      floatingip: { floating_network_id: pub.id, port_id: ports[0]!.id },
    });

    const inv = await h.call<{
      projects: Record<string, Record<string, { id: string; name: string; status?: string }[]>>;
      total: number;
    }>('GET', `/_inventory?project_id=${p}`, { token: 'admin' });
    const mine = inv.body.projects[p]!;
    assert.deepEqual(Object.keys(inv.body.projects), [p]);
    assert.deepEqual(
      mine.Server!.map((s) => [s.id, s.status]),
      [[server.id, 'ACTIVE']],
    );
    assert.equal(mine.LoadBalancer![0]!.status, 'ACTIVE');
    assert.deepEqual(
      mine.FloatingIp!.map((f) => f.id),
      [fip.id],
    );
    assert.equal(mine.Volume![0]!.id, volume.id);
    assert.equal(mine.Router!.length, 1);
    assert.equal(mine.Port!.length, 4, 'server port, router interface, router gateway, VIP port');
    assert.equal((await h.call('GET', '/_inventory', { token: 'alice' })).status, 403);

    // tear down in the order a careful client does
    await h.call('DELETE', `/network/v2.0/floatingips/${fip.id}`);
    await h.call('DELETE', `/load-balancer/v2/lbaas/loadbalancers/${lb.id}?cascade=true`);
    await h.call('DELETE', `/compute/v2.1/servers/${server.id}`);
    await h.call('DELETE', `/volume/v3/${p}/volumes/${volume.id}`);
    await clock.advance(100);
    await h.call('PUT', `/network/v2.0/routers/${router.id}/remove_router_interface`, {
      body: { subnet_id: subnet.id },
    });
    assert.equal((await h.call('DELETE', `/network/v2.0/routers/${router.id}`)).status, 204);
    assert.equal((await h.call('DELETE', `/network/v2.0/networks/${net.id}`)).status, 204);
    assert.equal((await h.call('DELETE', `/network/v2.0/security-groups/${sg.id}`)).status, 204);

    const after = await h.cloud.inventory(p);
    assert.deepEqual(Object.keys(after.projects[p] ?? {}).sort(), ['SecurityGroup', 'SecurityGroupRule']);
    assert.deepEqual(
      after.projects[p]!.SecurityGroup!.map((s) => s.name),
      ['default'],
    );
    // and nothing of the project leaked into the external network either
    const all = await h.cloud.inventory();
    assert.deepEqual(all.projects[h.identity.adminProject]!.Port, undefined);
  } finally {
    await h.close();
  }
});

test('calls without a valid token get 401 in keystonemiddleware shape; version documents need none', async () => {
  const h = await startCloud();
  try {
    const none = await h.call('GET', '/compute/v2.1/servers', { token: null });
    assert.equal(none.status, 401);
    assert.deepEqual(none.body, {
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    });
    assert.match(none.headers.get('www-authenticate') ?? '', /^Keystone uri=/);
    assert.equal((await h.call('GET', '/network/v2.0/networks', { token: 'nobody' })).status, 401);
    const glance = await h.call('GET', '/image/v2/images', { token: null });
    assert.equal(glance.status, 401);
    assert.match(glance.headers.get('content-type') ?? '', /^text\/html/);
    for (const path of [
      '/compute/',
      '/compute/v2.1',
      '/network/',
      '/load-balancer/',
      '/volume/v3',
      '/image/',
    ]) {
      const r = await h.call('GET', path, { token: null });
      assert.ok(r.status === 200 || r.status === 300, `${path}: ${r.status}`);
    }
  } finally {
    await h.close();
  }
});
