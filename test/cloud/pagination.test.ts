import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CloudError, createCloudClients, Session } from '../../src/cloud/index.ts';
import { startFixture, type SeenRequest } from './http-fixture.ts';

/** Serve `items` in pages of `size` with marker pagination; `link` writes the next-page reference. */
function paged<T extends { id: string }>(items: T[], size: number, req: SeenRequest) {
  const marker = req.query.get('marker');
  const start = marker ? items.findIndex((i) => i.id === marker) + 1 : 0;
  const page = items.slice(start, start + size);
  const more = start + size < items.length;
  return { page, next: more ? page[page.length - 1]!.id : undefined };
}

async function cloud(t: { after: (fn: () => unknown) => void }, handler: Parameters<typeof startFixture>[0]) {
  const server = await startFixture(handler);
  t.after(() => server.close());
  const session = new Session({
    authType: 'admin_token',
    auth: { token: 'T', project_id: 'p1' },
    endpointOverrides: {
      compute: `${server.url}/compute/v2.1`,
      network: `${server.url}/network`,
      'load-balancer': `${server.url}/lb`,
      'block-storage': `${server.url}/volume/v3/{project_id}`,
      image: `${server.url}/image`,
      'object-store': `${server.url}/swift/v1/AUTH_{project_id}`,
    },
    endpointOverride: `${server.url}/unused`,
  });
  t.after(() => session.close());
  return { server, clients: createCloudClients(session) };
}

const servers = Array.from({ length: 7 }, (_, i) => ({
  id: `s${i}`,
  name: `node-${i}`,
  status: 'ACTIVE',
  addresses: {},
  metadata: {},
  tags: ['c1'],
}));

void test('Nova server lists follow servers_links across pages and keep the filters', async (t) => {
  const { server, clients } = await cloud(t, (req) => {
    if (req.path !== '/compute/v2.1/servers/detail') return undefined;
    const { page, next } = paged(servers, 3, req);
    const links = next
      ? [
          {
            rel: 'next',
            href: `http://nova-internal:8774/v2.1/servers/detail?tags=c1&limit=3&marker=${next}`,
          },
        ]
      : [];
    return { status: 200, body: { servers: page, servers_links: links } };
  });
  const list = await clients.compute.listServers({ tags: ['c1'], limit: 3 });
  assert.deepEqual(
    list.map((s) => s.id),
    servers.map((s) => s.id),
  );
  const reqs = server.requests;
  assert.equal(reqs.length, 3);
  assert.equal(reqs[0]!.query.get('tags'), 'c1');
  assert.equal(reqs[1]!.query.get('marker'), 's2');
  assert.equal(reqs[2]!.query.get('marker'), 's5');
  assert.equal(reqs[2]!.headers['openstack-api-version'], 'compute 2.53');
});

void test('Neutron lists follow *_links even when the link names an internal host', async (t) => {
  const ports = Array.from({ length: 5 }, (_, i) => ({
    id: `p${i}`,
    name: `port-${i}`,
    network_id: 'n1',
    fixed_ips: [],
    security_groups: [],
  }));
  const { server, clients } = await cloud(t, (req) => {
    if (req.path !== '/network/v2.0/ports') return undefined;
    const { page, next } = paged(ports, 2, req);
    return {
      status: 200,
      body: {
        ports: page,
        ports_links: next
          ? [
              {
                rel: 'next',
                href: `https://neutron.internal:9696/v2.0/ports?network_id=n1&limit=2&marker=${next}`,
              },
              { rel: 'previous', href: 'x' },
            ]
          : [],
      },
    };
  });
  const list = await clients.network.listPorts({ networkId: 'n1' });
  assert.equal(list.length, 5);
  assert.ok(server.requests.every((r) => r.query.get('network_id') === 'n1'));
});

void test('Glance lists follow the relative next link', async (t) => {
  const images = Array.from({ length: 4 }, (_, i) => ({
    id: `i${i}`,
    name: `img-${i}`,
    status: 'active',
    os_distro: 'ubuntu',
    hw_disk_bus: 'scsi',
  }));
  const { clients } = await cloud(t, (req) => {
    if (req.path !== '/image/v2/images') return undefined;
    const { page, next } = paged(images, 3, req);
    return {
      status: 200,
      body: {
        images: page,
        first: '/v2/images',
        schema: '/v2/schemas/images',
        ...(next ? { next: `/v2/images?os_distro=ubuntu&marker=${next}` } : {}),
      },
    };
  });
  const list = await clients.image.listImages({ properties: { os_distro: 'ubuntu' } });
  assert.equal(list.length, 4);
  assert.equal(list[0]!.osDistro, 'ubuntu');
  assert.deepEqual(list[0]!.properties, { os_distro: 'ubuntu', hw_disk_bus: 'scsi' });
});

void test('Octavia and Cinder lists follow their links', async (t) => {
  const lbs = Array.from({ length: 3 }, (_, i) => ({
    id: `lb${i}`,
    name: `lb-${i}`,
    provisioning_status: 'ACTIVE',
    operating_status: 'ONLINE',
    listeners: [],
    pools: [],
  }));
  const vols = Array.from({ length: 3 }, (_, i) => ({
    id: `v${i}`,
    name: `vol-${i}`,
    status: 'available',
    size: 10,
    bootable: 'false',
  }));
  const { clients, server } = await cloud(t, (req) => {
    if (req.path === '/lb/v2/lbaas/loadbalancers') {
      const { page, next } = paged(lbs, 2, req);
      return {
        status: 200,
        body: {
          loadbalancers: page,
          loadbalancers_links: next ? [{ rel: 'next', href: `/v2/lbaas/loadbalancers?marker=${next}` }] : [],
        },
      };
    }
    if (req.path === '/volume/v3/p1/volumes/detail') {
      const { page, next } = paged(vols, 1, req);
      return {
        status: 200,
        body: {
          volumes: page,
          ...(next
            ? { volumes_links: [{ rel: 'next', href: `http://cinder/v3/p1/volumes/detail?marker=${next}` }] }
            : {}),
        },
      };
    }
    return undefined;
  });
  assert.deepEqual(
    (await clients.loadBalancer.listLoadBalancers()).map((l) => l.id),
    ['lb0', 'lb1', 'lb2'],
  );
  const v = await clients.volume.listVolumes();
  assert.deepEqual(
    v.map((x) => x.id),
    ['v0', 'v1', 'v2'],
  );
  assert.equal(v[0]!.bootable, false);
  assert.equal(server.requests.filter((r) => r.path.includes('volumes')).length, 3);
});

void test('Swift listings page by marker until a short page', async (t) => {
  const objects = Array.from({ length: 10_001 }, (_, i) => ({
    name: `backup/${String(i).padStart(6, '0')}`,
    bytes: 1,
    hash: 'h',
    content_type: 'application/octet-stream',
    last_modified: '2026-01-01T00:00:00',
  }));
  const { clients, server } = await cloud(t, (req) => {
    if (req.path !== '/swift/v1/AUTH_p1/etcd') return undefined;
    assert.equal(req.query.get('format'), 'json');
    const marker = req.query.get('marker');
    const start = marker ? objects.findIndex((o) => o.name === marker) + 1 : 0;
    return { status: 200, body: objects.slice(start, start + Number(req.query.get('limit'))) };
  });
  const list = await clients.objectStore.listObjects('etcd');
  assert.equal(list.length, 10_001);
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[1]!.query.get('marker'), 'backup/009999');
});

void test('a next link that repeats itself ends the listing instead of looping', async (t) => {
  const { clients, server } = await cloud(t, (req) =>
    req.path === '/network/v2.0/networks'
      ? {
          status: 200,
          body: {
            networks: [{ id: 'n1', name: 'x' }],
            networks_links: [{ rel: 'next', href: '/v2.0/networks?marker=n1' }],
          },
        }
      : undefined,
  );
  const list = await clients.network.listNetworks();
  assert.equal(list.length, 2, 'the first page and the one repeat, then stop');
  assert.equal(server.requests.length, 2);
});

void test('an answer that does not match the expected shape is a clear non-transient error', async (t) => {
  const { clients } = await cloud(t, (req) =>
    req.path === '/compute/v2.1/servers/s1' ? { status: 200, body: { server: { id: 's1' } } } : undefined,
  );
  await assert.rejects(clients.compute.getServer('s1'), (err: unknown) => {
    assert.ok(err instanceof CloudError);
    assert.equal(err.kind, 'other');
    assert.equal(err.transient, false);
    assert.match(err.cloudMessage, /unexpected answer: server\.name/);
    return true;
  });
});
