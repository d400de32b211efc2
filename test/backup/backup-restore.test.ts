import assert from 'node:assert/strict';
import test from 'node:test';
import { createCluster, createKeypair, startHarness, waitForStatus } from '../engine/harness.ts';
import {
  capiName,
  deleteNamespace,
  namespaces,
  seedWorkload,
  waitForBackup,
  waitForRestore,
  type BackupWire,
} from './helpers.ts';

void test('an on-demand backup is stored encrypted, verified, and a restore brings a deleted namespace back', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'prod', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'prod', 'CREATE_COMPLETE');
    const capi = await capiName(h, 'prod');
    await seedWorkload(h, capi, 'shop', 's3cr3t-db-password');

    const created = await h.magnum<BackupWire>('POST', '/v1/clusters/prod/backups');
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.status, 'CREATE_IN_PROGRESS');
    const done = await waitForBackup(h, created.body.uuid);
    assert.equal(done.status, 'COMPLETE', done.status_reason ?? '');
    assert.ok((done.total_keys ?? 0) >= 3, 'the namespace, its Secret and ConfigMap (plus bootstrap tokens)');
    assert.equal(done.emulated, true);
    assert.ok((done.etcd_revision ?? 0) > 0 && (done.size ?? 0) > 0 && done.hash !== null);
    assert.match(done.checksum ?? '', /^sha256:[0-9a-f]{64}$/);

    // The tenant sees the object in Swift, and it does not hold the secret in clear.
    const objects = await h.userCloud.objectStore.listObjects(done.container!);
    assert.deepEqual(
      objects.map((o) => o.name),
      [done.object],
    );
    const stored = await h.userCloud.objectStore.getObject(done.container!, done.object!);
    const text = stored.data.toString('latin1');
    assert.ok(!text.includes('s3cr3t-db-password'));
    assert.ok(!text.includes(Buffer.from('s3cr3t-db-password').toString('base64')));
    assert.ok(!text.includes('shop'), 'names of namespaces are encrypted too');

    await deleteNamespace(h, capi, 'shop');
    assert.deepEqual(await namespaces(h, capi), []);

    const restore = await h.magnum<BackupWire>(
      'POST',
      `/v1/clusters/prod/backups/${done.uuid}/actions/restore`,
    );
    assert.equal(restore.status, 202, JSON.stringify(restore.body));
    const restored = await waitForRestore(h, done.uuid);
    assert.equal(restored.restore_status, 'RESTORE_COMPLETE', restored.restore_status_reason ?? '');
    assert.deepEqual(await namespaces(h, capi), ['shop']);

    const list = await h.magnum<{ backups: BackupWire[] }>('GET', '/v1/clusters/prod/backups');
    assert.deepEqual(
      list.body.backups.map((b) => b.uuid),
      [done.uuid],
    );
    const v1 = await h.magnum<Record<string, unknown>>('GET', '/v1');
    assert.ok('backups' in v1.body, 'the /v1 document advertises backups');
  } finally {
    await h.close();
  }
});

void test('a backup of a cluster that is not running is refused with a reason, and nothing is stored', async () => {
  const h = await startHarness({ latencyMs: 3000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'young', { master_count: 1, node_count: 1 });
    const res = await h.magnum<{ errors: { detail: string; code: string }[] }>(
      'POST',
      '/v1/clusters/young/backups',
    );
    assert.equal(res.status, 400);
    assert.match(res.body.errors[0]!.detail, /not possible while its status is "CREATE_IN_PROGRESS"/);
    const list = await h.magnum<{ backups: unknown[] }>('GET', '/v1/backups');
    assert.deepEqual(list.body.backups, []);
  } finally {
    await h.close();
  }
});
