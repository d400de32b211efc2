import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig } from '../../src/cli/load-config.ts';
import { runCoe } from '../../src/cli/coe.ts';
import { MagnumTypes, magnumStatus, type MagnumClusterObject } from '../../src/domain/index.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { Capture } from '../cli/helpers.ts';
import { seedWorkload } from '../backup/helpers.ts';

/**
 * The README's backup walkthrough with the real `openstack` client: after `coe cluster backup
 * create`, `openstack container list` and `openstack object list` show the backup container and
 * the encrypted snapshot in the tenant's own object store, and the object holds no Secret in
 * clear. Real time, embedded cloud without latency. Skips when the client is missing, unless
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1, where it fails.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const installed = spawnSync('openstack', ['--version'], { encoding: 'utf8' }).status === 0;
const skip = installed
  ? false
  : required
    ? false
    : 'the openstack CLI is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)';

let m: Magnetar;
let dataDir: string;
const CLOUD = 'magnetar-demo-sa';

function openstack(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
  const env = { ...clean, OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml'), OS_CLOUD: CLOUD };
  return new Promise((resolve) => {
    execFile('openstack', args, { env, timeout: 180_000, encoding: 'buffer' }, (err, stdout, stderr) => {
      resolve({
        code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
        stdout: stdout.toString('latin1'),
        stderr: stderr.toString('utf8'),
      });
    });
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await openstack(args);
  assert.equal(r.code, 0, `openstack ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

async function coe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCoe(['node', 'coe', ...args], {
    stdout,
    stderr,
    cwd: dataDir,
    env: { OS_CLIENT_CONFIG_FILE: join(dataDir, 'clouds.yaml'), OS_CLOUD: CLOUD, HOME: dataDir },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

void describe('etcd backups seen with the openstack client', { skip, timeout: 10 * 60_000 }, () => {
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'magnetar-backup-cli-'));
    m = await startMagnetar({ config: testConfig({ dataDir }), logger: false });
  });
  after(async () => {
    await m?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  void test('the openstack CLI is installed', () => {
    assert.ok(installed, 'openstack is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
  });

  void test('openstack container list and object list show the encrypted snapshot of coe cluster backup create', async () => {
    await ok(['keypair', 'create', 'my-keypair']);
    const created = await coe([
      'cluster',
      'create',
      '--cluster-template',
      'k8s-v1.32',
      '--master-count',
      '1',
      '--master-flavor',
      'm1.medium',
      '--node-count',
      '1',
      '--flavor',
      'm1.medium',
      '--keypair',
      'my-keypair',
      'prod',
    ]);
    assert.equal(created.code, 0, created.stderr);
    let cluster: MagnumClusterObject | undefined;
    for (let i = 0; i < 600; i++) {
      cluster = (await m.store.list<MagnumClusterObject>(MagnumTypes.Cluster)).items[0];
      if (cluster && magnumStatus(cluster) === 'CREATE_COMPLETE') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(cluster && magnumStatus(cluster), 'CREATE_COMPLETE');
    const h = { store: m.store, projectId: cluster!.metadata.namespace };
    await seedWorkload(
      h as Parameters<typeof seedWorkload>[0],
      cluster!.status.stackId!,
      'shop',
      'hunter2-secret',
    );

    const backup = await coe([
      'cluster',
      'backup',
      'create',
      'prod',
      '--wait',
      '--poll-interval',
      '0.2',
      '-f',
      'json',
    ]);
    assert.equal(backup.code, 0, backup.stderr);
    const b = JSON.parse(backup.stdout) as {
      status: string;
      container: string;
      object: string;
      stored_bytes: number;
    };
    assert.equal(b.status, 'COMPLETE');

    const containers = JSON.parse(await ok(['container', 'list', '-f', 'json'])) as { Name: string }[];
    assert.deepEqual(
      containers.map((c) => c.Name),
      ['magnetar-etcd-backups'],
    );
    const objects = JSON.parse(await ok(['object', 'list', 'magnetar-etcd-backups', '-f', 'json'])) as {
      Name: string;
    }[];
    assert.deepEqual(
      objects.map((o) => o.Name),
      [b.object],
    );
    const show = JSON.parse(
      await ok(['object', 'show', 'magnetar-etcd-backups', b.object, '-f', 'json']),
    ) as Record<string, unknown>;
    assert.equal(Number(show['content-length']), b.stored_bytes);
    assert.equal((show.properties as Record<string, string>).encryption, 'AES-256-GCM');
    const saved = join(dataDir, 'snap.enc');
    await ok(['object', 'save', 'magnetar-etcd-backups', b.object, '--file', saved]);
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(saved);
    assert.equal(bytes.length, b.stored_bytes);
    assert.ok(bytes.subarray(0, 22).toString() === 'MAGNETAR-ETCD-SNAPSHOT');
    assert.ok(!bytes.includes(Buffer.from('hunter2-secret')), 'no Secret in clear');
    assert.ok(
      !bytes.includes(Buffer.from(Buffer.from('hunter2-secret').toString('base64'))),
      'nor in base64',
    );
  });
});
