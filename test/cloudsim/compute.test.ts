import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { startCloud, uuid, type CloudHarness } from './harness.ts';

const V = { 'openstack-api-version': 'compute 2.79' };

async function imageId(h: CloudHarness, name = 'fedora-coreos-38'): Promise<string> {
  const r = await h.call<{ images: { id: string; name: string }[] }>('GET', `/image/v2/images?name=${name}`);
  return r.body.images[0]!.id;
}

async function network(h: CloudHarness, token = 'alice', cidr = '10.0.0.0/24'): Promise<string> {
  const n = await h.call<{ network: { id: string } }>('POST', '/network/v2.0/networks', {
    token,
    body: { network: { name: 'net' } },
  });
  await h.call('POST', '/network/v2.0/subnets', {
    token,
    body: { subnet: { network_id: n.body.network.id, cidr, ip_version: 4 } },
  });
  return n.body.network.id;
}

type ServerBody = { server: Record<string, unknown> & { id: string; status: string } };

test('flavor list shows the seeded m1 family with sensible sizes', async () => {
  const h = await startCloud();
  try {
    const r = await h.call<{ flavors: { name: string; vcpus: number; ram: number; disk: number }[] }>(
      'GET',
      '/compute/v2.1/flavors/detail',
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.flavors.map((f) => f.name),
      ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge'],
    );
    const medium = r.body.flavors.find((f) => f.name === 'm1.medium')!;
    assert.deepEqual([medium.vcpus, medium.ram, medium.disk], [2, 4096, 40]);
    const missing = await h.call('GET', '/compute/v2.1/flavors/999');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, {
      itemNotFound: { code: 404, message: 'Flavor 999 could not be found.' },
    });
  } finally {
    await h.close();
  }
});

test('keypair create without a public key returns a generated private key; keypairs are per user', async () => {
  const h = await startCloud();
  try {
    const created = await h.call<{
      keypair: { name: string; private_key: string; fingerprint: string; type: string };
    }>('POST', '/compute/v2.1/os-keypairs', {
      headers: V,
      body: { keypair: { name: 'kp' } },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.keypair.private_key, /^-----BEGIN RSA PRIVATE KEY-----/);
    assert.match(created.body.keypair.fingerprint, /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    assert.equal(created.body.keypair.type, 'ssh');

    const dup = await h.call('POST', '/compute/v2.1/os-keypairs', {
      headers: V,
      body: { keypair: { name: 'kp' } },
    });
    assert.equal(dup.status, 409);
    assert.deepEqual(dup.body, {
      conflictingRequest: { code: 409, message: "Key pair 'kp' already exists." },
    });

    // the same user in another project sees it; another user does not
    const same = await h.call<{ keypairs: unknown[] }>('GET', '/compute/v2.1/os-keypairs', {
      token: 'alice2',
    });
    assert.equal(same.body.keypairs.length, 1);
    const other = await h.call<{ keypairs: unknown[] }>('GET', '/compute/v2.1/os-keypairs', { token: 'bob' });
    assert.equal(other.body.keypairs.length, 0);

    const imported = await h.call<{ keypair: { fingerprint: string; private_key?: string } }>(
      'POST',
      '/compute/v2.1/os-keypairs',
      {
        body: {
          keypair: {
            name: 'imported',
            public_key:
              'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example',
          },
        },
      },
    );
    assert.equal(imported.status, 200);
    assert.equal(imported.body.keypair.private_key, undefined);
    const bad = await h.call('POST', '/compute/v2.1/os-keypairs', {
      body: { keypair: { name: 'bad', public_key: 'not a key' } },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, {
      badRequest: { code: 400, message: 'Keypair data is invalid: failed to generate fingerprint' },
    });

    const del = await h.call('DELETE', '/compute/v2.1/os-keypairs/kp', { headers: V });
    assert.equal(del.status, 204);
    const gone = await h.call('GET', '/compute/v2.1/os-keypairs/kp');
    assert.equal(gone.status, 404);
  } finally {
    await h.close();
  }
});

test('a server builds in virtual time: BUILD, then ACTIVE with an address, a host and its port bound', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 3000 });
  try {
    const net = await network(h);
    const img = await imageId(h);
    const created = await h.call<ServerBody>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: {
        server: {
          name: 'node-1',
          flavorRef: '3',
          imageRef: img,
          networks: [{ uuid: net }],
          availability_zone: 'AZ-2',
          user_data: Buffer.from('#cloud-config\n').toString('base64'),
          metadata: { role: 'worker' },
          tags: ['cluster-a'],
        },
      },
    });
    assert.equal(created.status, 202);
    assert.match(String(created.body.server.adminPass), /^\w{12}$/);
    assert.ok(
      created.headers.get('location')?.endsWith(`/cloud/compute/v2.1/servers/${created.body.server.id}`),
    );
    const id = created.body.server.id;

    const building = await h.call<ServerBody>('GET', `/compute/v2.1/servers/${id}`, { headers: V });
    assert.equal(building.body.server.status, 'BUILD');
    assert.equal(building.body.server['OS-EXT-STS:vm_state'], 'building');

    await clock.advance(2999);
    assert.equal(
      (await h.call<ServerBody>('GET', `/compute/v2.1/servers/${id}`, { headers: V })).body.server.status,
      'BUILD',
    );
    await clock.advance(1);
    const active = await h.call<ServerBody>('GET', `/compute/v2.1/servers/${id}`, { headers: V });
    const s = active.body.server;
    assert.equal(s.status, 'ACTIVE');
    assert.equal(s['OS-EXT-AZ:availability_zone'], 'AZ-2');
    assert.equal(s['OS-EXT-STS:power_state'], 1);
    assert.deepEqual(s.metadata, { role: 'worker' });
    assert.deepEqual(s.tags, ['cluster-a']);
    assert.deepEqual(s.flavor, {
      vcpus: 2,
      ram: 4096,
      disk: 40,
      ephemeral: 0,
      swap: 0,
      original_name: 'm1.medium',
      extra_specs: {},
    });
    const addresses = s.addresses as Record<string, { addr: string; 'OS-EXT-IPS:type': string }[]>;
    assert.equal(addresses.net![0]!.addr, '10.0.0.2');
    assert.notEqual(s.hostId, '');

    const ports = await h.call<{ ports: { status: string; device_owner: string }[] }>(
      'GET',
      `/network/v2.0/ports?device_id=${id}`,
    );
    assert.deepEqual(
      ports.body.ports.map((p) => [p.status, p.device_owner]),
      [['ACTIVE', 'compute:AZ-2']],
    );

    // older microversions: flavor by reference, no tags
    const old = await h.call<ServerBody>('GET', `/compute/v2.1/servers/${id}`);
    assert.deepEqual(Object.keys(old.body.server.flavor as object).sort(), ['id', 'links']);
    assert.equal(old.body.server.tags, undefined);
    assert.equal(old.headers.get('openstack-api-version'), 'compute 2.1');
  } finally {
    await h.close();
  }
});

test('a deleted server disappears after the delete latency and releases its port and address', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const net = await network(h);
    const created = await h.call<ServerBody>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: {
        server: { name: 'gone', flavorRef: '2', imageRef: await imageId(h), networks: [{ uuid: net }] },
      },
    });
    const id = created.body.server.id;
    await clock.advance(1000);
    const del = await h.call('DELETE', `/compute/v2.1/servers/${id}`);
    assert.equal(del.status, 204);
    const deleting = await h.call<ServerBody>('GET', `/compute/v2.1/servers/${id}`, { headers: V });
    assert.equal(deleting.body.server['OS-EXT-STS:task_state'], 'deleting');
    await clock.advance(500);
    assert.equal((await h.call('GET', `/compute/v2.1/servers/${id}`)).status, 404);
    const ports = await h.call<{ ports: unknown[] }>('GET', `/network/v2.0/ports?network_id=${net}`);
    assert.deepEqual(ports.body.ports, []);
    // the address is free again
    const subnet = (
      await h.call<{ subnets: { id: string }[] }>('GET', `/network/v2.0/subnets?network_id=${net}`)
    ).body.subnets[0]!.id;
    const port = await h.call('POST', '/network/v2.0/ports', {
      body: { port: { network_id: net, fixed_ips: [{ subnet_id: subnet, ip_address: '10.0.0.2' }] } },
    });
    assert.equal(port.status, 201);
  } finally {
    await h.close();
  }
});

test('server create rejects what Nova rejects, with Nova status codes and bodies', async () => {
  const h = await startCloud();
  try {
    const net = await network(h);
    const img = await imageId(h);
    const create = (server: Record<string, unknown>, headers: Record<string, string> = V) =>
      h.call('POST', '/compute/v2.1/servers', { headers, body: { server } });
    const base = { name: 'x', flavorRef: '2', imageRef: img, networks: [{ uuid: net }] };

    assert.deepEqual((await create({ ...base, flavorRef: '42' })).body, {
      badRequest: { code: 400, message: 'Flavor 42 could not be found.' },
    });
    assert.deepEqual((await create({ ...base, imageRef: uuid() })).body, {
      badRequest: { code: 400, message: 'Can not find requested image' },
    });
    const badNet = uuid();
    assert.deepEqual((await create({ ...base, networks: [{ uuid: badNet }] })).body, {
      badRequest: { code: 400, message: `Network ${badNet} could not be found.` },
    });
    assert.deepEqual((await create({ ...base, key_name: 'nope' })).body, {
      badRequest: { code: 400, message: 'Invalid key_name provided.' },
    });
    assert.deepEqual((await create({ ...base, availability_zone: 'AZ-9' })).body, {
      badRequest: { code: 400, message: 'The requested availability zone is not available' },
    });
    const noNetworks = await create({ name: 'x', flavorRef: '2', imageRef: img });
    assert.equal(noNetworks.status, 400);
    assert.match(JSON.stringify(noNetworks.body), /'networks' is a required property/);
    const publicNet = (
      await h.call<{ networks: { id: string }[] }>('GET', '/network/v2.0/networks?name=public')
    ).body.networks[0]!.id;
    const external = await create({ ...base, networks: [{ uuid: publicNet }] });
    assert.equal(external.status, 403);
    assert.deepEqual(external.body, {
      forbidden: {
        code: 403,
        message: `It is not allowed to create an interface on external network ${publicNet}`,
      },
    });
    const badVersion = await create(base, { 'openstack-api-version': 'compute 2.200' });
    assert.equal(badVersion.status, 406);
    assert.match(badVersion.headers.get('content-type') ?? '', /^application\/json/);
    // nothing was created by the refused calls
    const servers = await h.call<{ servers: unknown[] }>('GET', '/compute/v2.1/servers');
    assert.deepEqual(servers.body.servers, []);
    const ports = await h.call<{ ports: unknown[] }>('GET', '/network/v2.0/ports');
    assert.deepEqual(ports.body.ports, []);
  } finally {
    await h.close();
  }
});

test('instances, cores and RAM quotas refuse with Nova 403 and the usage in the message', async () => {
  const h = await startCloud();
  try {
    const net = await network(h);
    const img = await imageId(h);
    const set = await h.call('PUT', `/compute/v2.1/os-quota-sets/${h.identity.projectA}`, {
      token: 'admin',
      body: { quota_set: { instances: 2, cores: 3 } },
    });
    assert.equal(set.status, 200);
    const notAdmin = await h.call('PUT', `/compute/v2.1/os-quota-sets/${h.identity.projectA}`, {
      body: { quota_set: { instances: 200 } },
    });
    assert.equal(notAdmin.status, 403);
    const create = (flavorRef: string) =>
      h.call('POST', '/compute/v2.1/servers', {
        headers: V,
        body: { server: { name: 'q', flavorRef, imageRef: img, networks: [{ uuid: net }] } },
      });
    assert.equal((await create('3')).status, 202);
    const cores = await create('3');
    assert.equal(cores.status, 403);
    assert.deepEqual(cores.body, {
      forbidden: {
        code: 403,
        message: 'Quota exceeded for cores: Requested 2, but already used 2 of 3 cores',
      },
    });
    assert.equal((await create('2')).status, 202);
    const instances = await create('2');
    assert.deepEqual(instances.body, {
      forbidden: {
        code: 403,
        message:
          'Quota exceeded for cores, instances: Requested 1, 1, but already used 3, 2 of 3, 2 cores, instances',
      },
    });
    const limits = await h.call<{ limits: { absolute: Record<string, number> } }>(
      'GET',
      '/compute/v2.1/limits',
      { headers: V },
    );
    assert.equal(limits.body.limits.absolute.totalInstancesUsed, 2);
    assert.equal(limits.body.limits.absolute.totalCoresUsed, 3);
    assert.equal(limits.body.limits.absolute.maxTotalInstances, 2);
  } finally {
    await h.close();
  }
});

test('availability zones are AZ-1, AZ-2 and AZ-3', async () => {
  const h = await startCloud();
  try {
    const r = await h.call<{
      availabilityZoneInfo: { zoneName: string; zoneState: { available: boolean } }[];
    }>('GET', '/compute/v2.1/os-availability-zone');
    assert.deepEqual(
      r.body.availabilityZoneInfo.map((z) => [z.zoneName, z.zoneState.available]),
      [
        ['AZ-1', true],
        ['AZ-2', true],
        ['AZ-3', true],
      ],
    );
  } finally {
    await h.close();
  }
});

test('servers are private to their project; admins list all projects with all_tenants', async () => {
  const h = await startCloud();
  try {
    const net = await network(h);
    const img = await imageId(h);
    const created = await h.call<ServerBody>('POST', '/compute/v2.1/servers', {
      headers: V,
      body: { server: { name: 'mine', flavorRef: '2', imageRef: img, networks: [{ uuid: net }] } },
    });
    const id = created.body.server.id;
    assert.equal((await h.call('GET', `/compute/v2.1/servers/${id}`, { token: 'bob' })).status, 404);
    assert.deepEqual(
      (await h.call<{ servers: unknown[] }>('GET', '/compute/v2.1/servers', { token: 'bob' })).body.servers,
      [],
    );
    assert.deepEqual(
      (await h.call<{ servers: unknown[] }>('GET', '/compute/v2.1/servers', { token: 'admin' })).body.servers,
      [],
    );
    const all = await h.call<{ servers: { id: string }[] }>('GET', '/compute/v2.1/servers?all_tenants=1', {
      token: 'admin',
    });
    assert.deepEqual(
      all.body.servers.map((s) => s.id),
      [id],
    );
    const filtered = await h.call<{ servers: unknown[] }>('GET', '/compute/v2.1/servers?name=^mi', {});
    assert.equal(filtered.body.servers.length, 1);
    const none = await h.call<{ servers: unknown[] }>('GET', '/compute/v2.1/servers?status=ERROR', {});
    assert.equal(none.body.servers.length, 0);
  } finally {
    await h.close();
  }
});

test('a project with two networks must name one, as Nova says', async () => {
  const h = await startCloud();
  try {
    await network(h, 'alice', '10.0.0.0/24');
    await network(h, 'alice', '10.0.1.0/24');
    const r = await h.call('POST', '/compute/v2.1/servers', {
      headers: V,
      body: { server: { name: 'x', flavorRef: '2', imageRef: await imageId(h), networks: 'auto' } },
    });
    assert.equal(r.status, 409);
    assert.deepEqual(r.body, {
      conflictingRequest: {
        code: 409,
        message:
          'More than one possible network found. Specify network ID(s) to select which one(s) to connect to.',
      },
    });
  } finally {
    await h.close();
  }
});

test('concurrent server creates on one network all succeed with distinct addresses', async () => {
  const h = await startCloud();
  try {
    const net = await network(h);
    const img = await imageId(h);
    await h.call('PUT', `/compute/v2.1/os-quota-sets/${h.identity.projectA}`, {
      token: 'admin',
      body: { quota_set: { instances: -1, cores: -1, ram: -1 } },
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.call<ServerBody>('POST', '/compute/v2.1/servers', {
          headers: V,
          body: { server: { name: `c-${i}`, flavorRef: '2', imageRef: img, networks: [{ uuid: net }] } },
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array.from({ length: 20 }, () => 202),
    );
    const ports = await h.call<{ ports: { fixed_ips: { ip_address: string }[] }[] }>(
      'GET',
      `/network/v2.0/ports?network_id=${net}`,
    );
    const addresses = ports.body.ports.map((p) => p.fixed_ips[0]!.ip_address);
    assert.equal(addresses.length, 20);
    assert.equal(new Set(addresses).size, 20);
  } finally {
    await h.close();
  }
});
