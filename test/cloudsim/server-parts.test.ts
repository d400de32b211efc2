import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { startCloud, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string; status: string };
const V = { 'openstack-api-version': 'compute 2.79' };

async function activeServer(h: CloudHarness, clock: ManualClock): Promise<{ server: string; net: string }> {
  const net = (
    await h.call<{ network: Obj }>('POST', '/network/v2.0/networks', { body: { network: { name: 'n' } } })
  ).body.network.id;
  await h.call('POST', '/network/v2.0/subnets', {
    body: { subnet: { network_id: net, cidr: '10.7.0.0/24', ip_version: 4 } },
  });
  const img = (await h.call<{ images: Obj[] }>('GET', '/image/v2/images?name=fedora-coreos-38')).body
    .images[0]!.id;
  const s = await h.call<{ server: Obj }>('POST', '/compute/v2.1/servers', {
    headers: V,
    body: {
      server: {
        name: 'vm',
        flavorRef: '2',
        imageRef: img,
        networks: [{ uuid: net }],
        availability_zone: 'AZ-1',
      },
    },
  });
  await clock.advance(1000);
  return { server: s.body.server.id, net };
}

test('a volume attaches to an active server, shows in-use, and detaches back to available', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const { server } = await activeServer(h, clock);
    const vpath = `/volume/v3/${h.identity.projectA}/volumes`;
    const v = (
      await h.call<{ volume: Obj }>('POST', vpath, {
        body: { volume: { size: 1, availability_zone: 'AZ-1' } },
      })
    ).body.volume;
    const early = await h.call('POST', `/compute/v2.1/servers/${server}/os-volume_attachments`, {
      body: { volumeAttachment: { volumeId: v.id } },
    });
    assert.equal(early.status, 400, 'a creating volume cannot attach');
    await clock.advance(1000);
    const att = await h.call<{ volumeAttachment: { device: string; serverId: string } }>(
      'POST',
      `/compute/v2.1/servers/${server}/os-volume_attachments`,
      {
        headers: V,
        body: { volumeAttachment: { volumeId: v.id } },
      },
    );
    assert.equal(att.status, 200);
    assert.equal(att.body.volumeAttachment.device, '/dev/vdb');
    const inUse = await h.call<{ volume: Obj & { attachments: { server_id: string }[] } }>(
      'GET',
      `${vpath}/${v.id}`,
    );
    assert.equal(inUse.body.volume.status, 'in-use');
    assert.equal(inUse.body.volume.attachments[0]!.server_id, server);
    const shown = await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${server}`, { headers: V });
    assert.deepEqual(shown.body.server['os-extended-volumes:volumes_attached'], [
      { id: v.id, delete_on_termination: false },
    ]);
    assert.equal(
      (await h.call('DELETE', `/compute/v2.1/servers/${server}/os-volume_attachments/${v.id}`)).status,
      202,
    );
    assert.equal((await h.call<{ volume: Obj }>('GET', `${vpath}/${v.id}`)).body.volume.status, 'available');
  } finally {
    await h.close();
  }
});

test('an interface attaches on another network and detaches, its port deleted', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const { server } = await activeServer(h, clock);
    const other = (
      await h.call<{ network: Obj }>('POST', '/network/v2.0/networks', {
        body: { network: { name: 'storage' } },
      })
    ).body.network.id;
    await h.call('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: other, cidr: '10.17.0.0/24', ip_version: 4 } },
    });
    const att = await h.call<{
      interfaceAttachment: { port_id: string; net_id: string; port_state: string };
    }>('POST', `/compute/v2.1/servers/${server}/os-interface`, {
      body: { interfaceAttachment: { net_id: other } },
    });
    assert.equal(att.status, 200);
    assert.equal(att.body.interfaceAttachment.net_id, other);
    const list = await h.call<{ interfaceAttachments: unknown[] }>(
      'GET',
      `/compute/v2.1/servers/${server}/os-interface`,
    );
    assert.equal(list.body.interfaceAttachments.length, 2);
    const s = await h.call<{ server: { addresses: Record<string, unknown[]> } }>(
      'GET',
      `/compute/v2.1/servers/${server}`,
    );
    assert.deepEqual(Object.keys(s.body.server.addresses).sort(), ['n', 'storage']);
    assert.equal(
      (
        await h.call(
          'DELETE',
          `/compute/v2.1/servers/${server}/os-interface/${att.body.interfaceAttachment.port_id}`,
        )
      ).status,
      202,
    );
    assert.equal(
      (await h.call('GET', `/network/v2.0/ports/${att.body.interfaceAttachment.port_id}`)).status,
      404,
    );
  } finally {
    await h.close();
  }
});

test('stop and start take time; a stopped server cannot be stopped again', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const { server } = await activeServer(h, clock);
    const action = (body: unknown) => h.call('POST', `/compute/v2.1/servers/${server}/action`, { body });
    assert.equal((await action({ 'os-stop': null })).status, 202);
    const stopping = await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${server}`);
    assert.equal(stopping.body.server['OS-EXT-STS:task_state'], 'powering-off');
    await clock.advance(500);
    assert.equal(
      (await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${server}`)).body.server.status,
      'SHUTOFF',
    );
    const again = await action({ 'os-stop': null });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      conflictingRequest: {
        code: 409,
        message: `Cannot 'stop' instance ${server} while it is in vm_state stopped`,
      },
    });
    assert.equal((await action({ 'os-start': null })).status, 202);
    await clock.advance(500);
    assert.equal(
      (await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${server}`)).body.server.status,
      'ACTIVE',
    );
    const meta = await h.call<{ metadata: Record<string, string> }>(
      'POST',
      `/compute/v2.1/servers/${server}/metadata`,
      { body: { metadata: { a: '1' } } },
    );
    assert.deepEqual(meta.body.metadata, { a: '1' });
    assert.equal(
      (await h.call('PUT', `/compute/v2.1/servers/${server}/tags/ready`, { headers: V })).status,
      201,
    );
    const tags = await h.call<{ tags: string[] }>('GET', `/compute/v2.1/servers/${server}/tags`, {
      headers: V,
    });
    assert.deepEqual(tags.body.tags, ['ready']);
  } finally {
    await h.close();
  }
});
