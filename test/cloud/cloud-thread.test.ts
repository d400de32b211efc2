import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { testConfig } from '../../src/cli/load-config.ts';
import { createCloudClients, loadCloudConfig, Session } from '../../src/cloud/index.ts';
import { cloudType } from '../../src/cloudsim/index.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { SqliteStore } from '../../src/store/index.ts';

/**
 * The embedded cloud on a thread of its own (docs/adr/0013-embedded-cloud-thread.md), as
 * `npm start` runs it: a store file, local identity, the system clock.
 */

const KEYPAIR = cloudType('Keypair');
const PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5hZ25ldGFyLXRocmVhZC10ZXN0LWtleS0wMDAwMDAwMDA0 thread';

function fileConfig(dataDir: string, thread?: boolean) {
  return testConfig({
    dataDir,
    store: { engine: 'sqlite', url: 'magnetar.sqlite' },
    cloud: {
      mode: 'embedded',
      cloudName: 'magnetar',
      simulatedLatencyMs: 0,
      ...(thread === undefined ? {} : { thread }),
    },
  });
}

function session(dataDir: string, cloud: string, iface?: 'internal'): Session {
  const config = loadCloudConfig({ cloud, env: { OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml') } });
  return new Session(iface ? { ...config, interface: iface } : config, { maxRetries: 0 });
}

/** Records of a kind in a store file, read on a connection of the test's own. */
async function countIn(path: string, type: string): Promise<number> {
  const s = new SqliteStore({ path, backgroundCheckpoints: false });
  try {
    return await s.count(type);
  } finally {
    await s.close();
  }
}

describe('the embedded cloud on its own thread', () => {
  let dir: string;
  let m: Magnetar;
  let demo: Session;
  let admin: Session;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'magnetar-cloud-thread-'));
    m = await startMagnetar({ config: fileConfig(dir), controllers: false, logger: false });
    demo = session(dir, 'magnetar-demo');
    admin = session(dir, 'magnetar-admin');
  });

  after(async () => {
    demo?.close();
    admin?.close();
    await m?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the catalog offers the cloud publicly under /cloud and internally at the thread, and both answer alike', async () => {
    const internal = session(dir, 'magnetar-demo', 'internal');
    try {
      const pub = await demo.endpoint('compute');
      const int = await internal.endpoint('compute');
      assert.equal(pub, `${m.url}/cloud/compute/v2.1`);
      assert.notEqual(
        new URL(int).port,
        new URL(m.url).port,
        'the internal endpoint is the thread’s own port',
      );
      assert.match(int, /\/cloud\/compute\/v2\.1$/);
      const viaPublic = await createCloudClients(demo).compute.listFlavors();
      const viaInternal = await createCloudClients(internal).compute.listFlavors();
      assert.ok(viaPublic.length >= 3);
      assert.deepEqual(viaPublic.map((f) => f.name).sort(), viaInternal.map((f) => f.name).sort());
    } finally {
      internal.close();
    }
  });

  test('cloud records are kept in the cloud’s own file, not in Magnetar’s store', async () => {
    await createCloudClients(demo).compute.createKeypair({ name: 'own-file', publicKey: PUBLIC_KEY });
    assert.equal(await m.store.count(KEYPAIR), 0);
    const cloudFile = join(dir, 'magnetar.cloud.sqlite');
    assert.ok(existsSync(cloudFile));
    assert.equal(await countIn(cloudFile, KEYPAIR), 1);
    // nobody watches the cloud's records: its file keeps no revision feed
    const db = new Database(cloudFile, { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM feed').get(), { n: 0 });
    } finally {
      db.close();
    }
  });

  test('request and answer bodies pass the public endpoint whole: an image uploaded and read back', async () => {
    const images = createCloudClients(demo).image;
    const image = await images.createImage({
      name: 'thread-upload',
      diskFormat: 'raw',
      containerFormat: 'bare',
    });
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await images.uploadImageData(image.id, bytes);
    const res = await fetch(`${await demo.endpoint('image')}/v2/images/${image.id}/file`, {
      headers: { 'x-auth-token': await demo.token() },
    });
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes));
    const shown = await fetch(`${await demo.endpoint('image')}/v2/images/${image.id}`, {
      headers: { 'x-auth-token': await demo.token() },
    });
    const body = (await shown.json()) as { size: number; status: string };
    assert.equal(body.size, bytes.length);
    assert.equal(body.status, 'active');
  });

  test('errors keep the service’s own shape and status through the public endpoint', async () => {
    const res = await fetch(`${m.url}/cloud/compute/v2.1/servers/not-a-server`, {
      headers: { 'x-auth-token': await demo.token() },
    });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { itemNotFound?: { code: number } };
    assert.equal(body.itemNotFound?.code, 404);
    const anonymous = await fetch(`${m.url}/cloud/network/v2.0/networks`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /Keystone uri=/);
  });

  test('the cloud thread reports the CPU its own work takes, apart from the main thread', async () => {
    const thread = m.cloudThread!;
    const before = thread.cpuSeconds();
    if (before === undefined) return; // not told apart where the system has no per-thread figures
    const main0 = process.cpuUsage();
    const cloud = createCloudClients(demo);
    for (let i = 0; i < 150; i++) await cloud.compute.listFlavors();
    const after = thread.cpuSeconds()!;
    assert.ok(after > before, `${before} → ${after}`);
    const used = process.cpuUsage(main0);
    const total = (used.user + used.system) / 1e6;
    assert.ok(after - before < total, 'a part of the process total');
  });

  test('a cloud thread that dies is started again, and tenants and the catalog follow it', async () => {
    const thread = m.cloudThread!;
    assert.ok(thread, 'npm start’s configuration runs the cloud on a thread');
    await createCloudClients(demo).compute.createKeypair({ name: 'survives', publicKey: PUBLIC_KEY });
    const before = thread.url;
    await thread.kill();
    const down = await fetch(`${m.url}/cloud/compute/v2.1/os-keypairs`, {
      headers: { 'x-auth-token': await demo.token() },
    });
    assert.equal(down.status, 503, 'while it is down, the public endpoint says so');
    const deadline = Date.now() + 20_000;
    while (thread.url === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.notEqual(thread.url, before, 'started again on a new port');
    const names = (await createCloudClients(demo).compute.listKeypairs()).map((k) => k.name);
    assert.ok(names.includes('survives'), 'its records are kept');
    const internal = session(dir, 'magnetar-demo', 'internal');
    try {
      assert.equal(new URL(await internal.endpoint('compute')).origin, thread.url);
      assert.ok((await createCloudClients(internal).compute.listFlavors()).length >= 3);
    } finally {
      internal.close();
    }
  });

  test('a project made a moment ago is served at once', async () => {
    const token = await admin.token();
    const identity = `${m.url}/identity/v3`;
    const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${identity}${path}`, {
        method,
        headers: { 'x-auth-token': token, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status}`);
      return (res.status === 204 ? undefined : await res.json()) as T;
    };
    const { project } = await call<{ project: { id: string } }>('POST', '/projects', {
      project: { name: `fresh-${Date.now()}`, domain_id: 'default' },
    });
    const { roles } = await call<{ roles: { id: string }[] }>('GET', '/roles?name=member');
    const userId = (await admin.userId())!;
    await call('PUT', `/projects/${project.id}/users/${userId}/roles/${roles[0]!.id}`);
    const fresh = session(dir, 'magnetar-admin', 'internal').forProject(project.id);
    try {
      const keypairs = await createCloudClients(fresh).compute.listKeypairs();
      assert.deepEqual(keypairs, []);
    } finally {
      fresh.close();
    }
  });
});

test('records an earlier version kept in Magnetar’s file move to the cloud’s own at start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-cloud-move-'));
  try {
    const before = await startMagnetar({ config: fileConfig(dir, false), controllers: false, logger: false });
    const s1 = session(dir, 'magnetar-demo');
    await createCloudClients(s1).compute.createKeypair({ name: 'kept', publicKey: PUBLIC_KEY });
    s1.close();
    assert.equal(
      await before.store.count(KEYPAIR),
      1,
      'on the main thread the records are in Magnetar’s store',
    );
    await before.close();

    const m = await startMagnetar({ config: fileConfig(dir), controllers: false, logger: false });
    const s2 = session(dir, 'magnetar-demo');
    try {
      const names = (await createCloudClients(s2).compute.listKeypairs()).map((k) => k.name);
      assert.deepEqual(names, ['kept']);
      assert.equal(await m.store.count(KEYPAIR), 0, 'moved out of Magnetar’s store');
      const flavors = await createCloudClients(s2).compute.listFlavors();
      assert.equal(new Set(flavors.map((f) => f.name)).size, flavors.length, 'the seed was not doubled');
    } finally {
      s2.close();
      await m.close();
    }
    assert.equal(await countIn(join(dir, 'magnetar.cloud.sqlite'), KEYPAIR), 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
