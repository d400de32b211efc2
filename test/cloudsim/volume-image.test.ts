import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ManualClock } from '../../src/domain/index.ts';
import { startCloud, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string; status: string };

function vol(h: CloudHarness, p = '') {
  return `/volume/v3/${h.identity.projectA}/volumes${p}`;
}

test('a volume is creating, then available; a delete takes time', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const r = await h.call<{ volume: Obj }>('POST', vol(h), {
      body: { volume: { size: 5, name: 'data', availability_zone: 'AZ-3' } },
    });
    assert.equal(r.status, 202);
    assert.equal(r.body.volume.status, 'creating');
    assert.equal(r.body.volume.bootable, 'false');
    assert.equal(r.body.volume.availability_zone, 'AZ-3');
    await clock.advance(1000);
    const shown = await h.call<{ volume: Obj }>('GET', vol(h, `/${r.body.volume.id}`));
    assert.equal(shown.body.volume.status, 'available');
    assert.equal((await h.call('DELETE', vol(h, `/${r.body.volume.id}`))).status, 202);
    assert.equal(
      (await h.call<{ volume: Obj }>('GET', vol(h, `/${r.body.volume.id}`))).body.volume.status,
      'deleting',
    );
    await clock.advance(500);
    const gone = await h.call('GET', vol(h, `/${r.body.volume.id}`));
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, {
      itemNotFound: { code: 404, message: `Volume ${r.body.volume.id} could not be found.` },
    });
  } finally {
    await h.close();
  }
});

test('volume quotas refuse with Cinder 413 overLimit bodies', async () => {
  const h = await startCloud();
  try {
    assert.equal(
      (
        await h.call('PUT', `/volume/v3/${h.identity.adminProject}/os-quota-sets/${h.identity.projectA}`, {
          token: 'admin',
          body: { quota_set: { volumes: 1, gigabytes: 10 } },
        })
      ).status,
      200,
    );
    const big = await h.call('POST', vol(h), { body: { volume: { size: 11 } } });
    assert.equal(big.status, 413);
    assert.deepEqual(big.body, {
      overLimit: {
        code: 413,
        message:
          'VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 11G, quota is 10G and 0G has been consumed.',
        retryAfter: '0',
      },
    });
    assert.equal((await h.call('POST', vol(h), { body: { volume: { size: 1 } } })).status, 202);
    const count = await h.call('POST', vol(h), { body: { volume: { size: 1 } } });
    assert.deepEqual(count.body, {
      overLimit: {
        code: 413,
        message: "VolumeLimitExceeded: Maximum number of volumes allowed (1) exceeded for quota 'volumes'.",
        retryAfter: '0',
      },
    });
    const other = await h.call('GET', `/volume/v3/${h.identity.projectA}/volumes`, { token: 'bob' });
    assert.equal(other.status, 403);
  } finally {
    await h.close();
  }
});

test('a server booted from a volume makes an in-use volume that is deleted with the server', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const net = (
      await h.call<{ network: Obj }>('POST', '/network/v2.0/networks', { body: { network: { name: 'n' } } })
    ).body.network;
    await h.call('POST', '/network/v2.0/subnets', {
      body: { subnet: { network_id: net.id, cidr: '10.3.0.0/24', ip_version: 4 } },
    });
    const image = (await h.call<{ images: Obj[] }>('GET', '/image/v2/images?name=ubuntu-22.04-kube')).body
      .images[0]!;
    const server = await h.call<{ server: Obj }>('POST', '/compute/v2.1/servers', {
      headers: { 'openstack-api-version': 'compute 2.79' },
      body: {
        server: {
          name: 'bfv',
          flavorRef: '2',
          networks: [{ uuid: net.id }],
          block_device_mapping_v2: [
            {
              boot_index: 0,
              uuid: image.id,
              source_type: 'image',
              destination_type: 'volume',
              volume_size: 25,
              delete_on_termination: true,
            },
          ],
        },
      },
    });
    assert.equal(server.status, 202, server.text);
    await clock.advance(1000);
    const s = await h.call<{ server: Obj }>('GET', `/compute/v2.1/servers/${server.body.server.id}`, {
      headers: { 'openstack-api-version': 'compute 2.79' },
    });
    assert.equal(s.body.server.image, '');
    const attached = s.body.server['os-extended-volumes:volumes_attached'] as {
      id: string;
      delete_on_termination: boolean;
    }[];
    assert.equal(attached.length, 1);
    const v = await h.call<{ volume: Obj }>('GET', vol(h, `/${attached[0]!.id}`));
    assert.equal(v.body.volume.status, 'in-use');
    assert.equal(v.body.volume.bootable, 'true');
    assert.equal((v.body.volume.volume_image_metadata as Record<string, string>).os_distro, 'ubuntu');
    const inUse = await h.call<{ badRequest: { message: string } }>('DELETE', vol(h, `/${attached[0]!.id}`));
    assert.equal(inUse.status, 400);
    assert.match(inUse.body.badRequest.message, /^Invalid volume: Volume status must be available or error/);
    await h.call('DELETE', `/compute/v2.1/servers/${server.body.server.id}`);
    await clock.advance(1000);
    assert.equal((await h.call('GET', vol(h, `/${attached[0]!.id}`))).status, 404);
  } finally {
    await h.close();
  }
});

test('images keep os_distro and os_admin_user; upload sets checksum and size; download returns the bytes', async () => {
  const h = await startCloud();
  try {
    const seeded = await h.call<{ images: Obj[] }>('GET', '/image/v2/images?os_distro=fedora-coreos');
    assert.deepEqual(
      seeded.body.images.map((i) => [i.name, i.os_admin_user, i.visibility]),
      [['fedora-coreos-38', 'core', 'public']],
    );

    const created = await h.call<Obj>('POST', '/image/v2/images', {
      body: {
        name: 'mine',
        disk_format: 'qcow2',
        container_format: 'bare',
        os_distro: 'fedora-coreos',
        os_admin_user: 'core',
      },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.status, 'queued');
    const data = Buffer.from('qcow2 image bytes');
    const up = await h.call('PUT', `/image/v2/images/${created.body.id}/file`, {
      raw: data,
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(up.status, 204);
    const shown = await h.call<Obj>('GET', `/image/v2/images/${created.body.id}`);
    assert.equal(shown.body.status, 'active');
    assert.equal(shown.body.size, data.length);
    assert.equal(shown.body.checksum, createHash('md5').update(data).digest('hex'));
    const res = await fetch(`${h.url}/cloud/image/v2/images/${created.body.id}/file`, {
      headers: { 'x-auth-token': 'alice-token' },
    });
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), data);

    const patched = await h.call<Obj>('PATCH', `/image/v2/images/${created.body.id}`, {
      raw: JSON.stringify([
        { op: 'replace', path: '/name', value: 'renamed' },
        { op: 'add', path: '/os_version', value: '38' },
      ]),
      headers: { 'content-type': 'application/openstack-images-v2.1-json-patch' },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'renamed');
    assert.equal(patched.body.os_version, '38');

    const readOnly = await h.call('POST', '/image/v2/images', { body: { name: 'x', status: 'active' } });
    assert.equal(readOnly.status, 403);
    assert.match(readOnly.text, /Attribute &#x27;status&#x27; is read-only\./);
    const publicByUser = await h.call<{ message: string; code: string }>('POST', '/image/v2/images', {
      body: { name: 'x', visibility: 'public' },
      headers: { accept: 'application/json' },
    });
    assert.equal(publicByUser.status, 403);
    assert.equal(publicByUser.body.code, '403 Forbidden');

    const notMine = await h.call('DELETE', `/image/v2/images/${seeded.body.images[0]!.id}`);
    assert.equal(notMine.status, 403);
    assert.equal((await h.call('DELETE', `/image/v2/images/${created.body.id}`)).status, 204);
    const gone = await h.call<{ message: string }>('GET', `/image/v2/images/${created.body.id}`, {
      headers: { accept: 'application/json' },
    });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.message, `No image found with ID ${created.body.id}<br /><br />\n\n\n`);
  } finally {
    await h.close();
  }
});

test('a Swift container stores objects with their md5 ETag and metadata', async () => {
  const h = await startCloud();
  try {
    const acct = `/object-store/v1/AUTH_${h.identity.projectA}`;
    assert.equal(
      (await h.call('PUT', `${acct}/etcd-backups`, { headers: { 'x-container-meta-cluster': 'prod' } }))
        .status,
      201,
    );
    assert.equal((await h.call('PUT', `${acct}/etcd-backups`)).status, 202);
    const snapshot = Buffer.from(JSON.stringify({ etcd: 'snapshot' }));
    const md5 = createHash('md5').update(snapshot).digest('hex');
    const put = await h.call('PUT', `${acct}/etcd-backups/prod/2026-01-01.db`, {
      raw: snapshot,
      headers: { 'content-type': 'application/json', etag: md5, 'x-object-meta-encrypted': 'true' },
    });
    assert.equal(put.status, 201);
    assert.equal(put.headers.get('etag'), md5);
    const bad = await h.call('PUT', `${acct}/etcd-backups/bad`, {
      raw: snapshot,
      headers: { etag: '0'.repeat(32) },
    });
    assert.equal(bad.status, 422);

    const get = await fetch(`${h.url}/cloud${acct}/etcd-backups/prod/2026-01-01.db`, {
      headers: { 'x-auth-token': 'alice-token' },
    });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('x-object-meta-encrypted'), 'true');
    assert.deepEqual(Buffer.from(await get.arrayBuffer()), snapshot);

    const list = await h.call<{ name: string; hash: string; bytes: number }[]>(
      'GET',
      `${acct}/etcd-backups?format=json&prefix=prod/`,
    );
    assert.deepEqual(
      (list.body as unknown as { name: string; hash: string; bytes: number }[]).map((o) => [
        o.name,
        o.hash,
        o.bytes,
      ]),
      [['prod/2026-01-01.db', md5, snapshot.length]],
    );
    const head = await h.call('HEAD', `${acct}/etcd-backups`);
    assert.equal(head.headers.get('x-container-object-count'), '1');
    assert.equal(head.headers.get('x-container-meta-cluster'), 'prod');
    assert.equal((await h.call('DELETE', `${acct}/etcd-backups`)).status, 409);
    assert.equal(
      (await h.call('GET', `/object-store/v1/AUTH_${h.identity.projectA}/etcd-backups`, { token: 'bob' }))
        .status,
      403,
    );
    assert.equal((await h.call('DELETE', `${acct}/etcd-backups/prod/2026-01-01.db`)).status, 204);
    assert.equal((await h.call('DELETE', `${acct}/etcd-backups`)).status, 204);
    const inv = await h.cloud.inventory(h.identity.projectA);
    assert.equal(inv.projects[h.identity.projectA]?.StoredObject, undefined);
  } finally {
    await h.close();
  }
});
