import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import { runCoe } from '../../src/cli/coe.ts';
import { Capture } from '../cli/helpers.ts';
import { driveClock } from '../cli/fixture.ts';
import {
  createCluster,
  createKeypair,
  startHarness,
  waitForStatus,
  type Harness,
} from '../engine/harness.ts';
import { capiName, deleteNamespace, namespaces, seedWorkload } from './helpers.ts';

/** Run `coe` as the demo service account against the harness, driving virtual time for `--wait`. */
async function coe(h: Harness, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const done = runCoe(['node', 'coe', ...args], {
    stdout,
    stderr,
    clock: h.clock,
    cwd: h.dir,
    env: { OS_CLIENT_CONFIG_FILE: join(h.dir, 'clouds.yaml'), OS_CLOUD: 'magnetar-demo-sa', HOME: h.dir },
  });
  const code = await driveClock(h.clock, { stdout, stderr, done }, 1000, 300);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

void test('coe cluster backup create --wait, list, show, restore --wait and delete work end to end', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'prod', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'prod', 'CREATE_COMPLETE');
    const capi = await capiName(h, 'prod');
    await seedWorkload(h, capi, 'shop', 'pw');

    const created = await coe(h, [
      'cluster',
      'backup',
      'create',
      'prod',
      '--wait',
      '--poll-interval',
      '1',
      '-f',
      'json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const b = JSON.parse(created.stdout) as Record<string, unknown>;
    assert.equal(b.status, 'COMPLETE');
    assert.equal(b.encryption, 'AES-256-GCM');
    assert.match(String(b.checksum), /^sha256:/);
    assert.match(created.stderr, /Request to back up cluster prod accepted: backup [0-9a-f-]{36}/);

    const list = await coe(h, ['cluster', 'backup', 'list', 'prod']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      /\| uuid +\| name +\| cluster_name \| trigger +\| status +\| etcd_revision \| total_keys \| size +\| created_at +\|/,
    );
    assert.match(
      list.stdout,
      new RegExp(`\\| ${String(b.uuid)} \\| .* \\| prod +\\| on-demand \\| COMPLETE \\|`),
    );

    const show = await coe(h, [
      'cluster',
      'backup',
      'show',
      String(b.name),
      '-f',
      'value',
      '-c',
      'status',
      '-c',
      'cluster_name',
    ]);
    assert.equal(show.stdout, 'prod\nCOMPLETE\n');

    await deleteNamespace(h, capi, 'shop');
    const restored = await coe(h, [
      'cluster',
      'backup',
      'restore',
      'prod',
      String(b.uuid),
      '--wait',
      '--poll-interval',
      '1',
    ]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /Request to restore cluster prod from backup .* has been accepted/);
    assert.deepEqual(await namespaces(h, capi), ['shop']);

    const missing = await coe(h, ['cluster', 'backup', 'show', 'no-such-backup']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Backup no-such-backup could not be found/);

    const del = await coe(h, ['cluster', 'backup', 'delete', String(b.uuid)]);
    assert.equal(del.code, 0, del.stderr);
    const { eventually } = await import('../engine/harness.ts');
    await eventually(
      h,
      'the backup to be gone',
      async () => (await coe(h, ['cluster', 'backup', 'list', '-f', 'json'])).stdout.trim() === '[]',
    );
    assert.deepEqual(await h.userCloud.objectStore.listObjects(String(b.container)), []);
  } finally {
    await h.close();
  }
});

void test('coe cluster backup create of a cluster that is not running exits 1 with the reason', async () => {
  const h = await startHarness({ latencyMs: 3000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'young', { master_count: 1, node_count: 1 });
    const r = await coe(h, ['cluster', 'backup', 'create', 'young']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not possible while its status is "CREATE_IN_PROGRESS"/);
  } finally {
    await h.close();
  }
});
