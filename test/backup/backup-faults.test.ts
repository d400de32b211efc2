import assert from 'node:assert/strict';
import test from 'node:test';
import { BackupTypes } from '../../src/domain/index.ts';
import {
  addFault,
  clearFaults,
  createCluster,
  createKeypair,
  startHarness,
  waitForStatus,
  type Harness,
} from '../engine/harness.ts';
import {
  capiName,
  deleteNamespace,
  namespaces,
  seedWorkload,
  waitForBackup,
  waitForRestore,
  type BackupWire,
} from './helpers.ts';

type ErrorBody = { errors: { detail: string; code: string; status: number }[] };

async function clusterWithBackup(h: Harness, name: string): Promise<{ capi: string; backup: BackupWire }> {
  await createCluster(h, name, { master_count: 1, node_count: 1 });
  await waitForStatus(h, name, 'CREATE_COMPLETE');
  const capi = await capiName(h, name);
  await seedWorkload(h, capi, 'shop', 'hunter2');
  const res = await h.magnum<BackupWire>('POST', `/v1/clusters/${name}/backups`);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const backup = await waitForBackup(h, res.body.uuid);
  assert.equal(backup.status, 'COMPLETE', backup.status_reason ?? '');
  return { capi, backup };
}

/** Ask for a restore and wait for its outcome. */
async function restore(h: Harness, cluster: string, backup: string): Promise<BackupWire> {
  const res = await h.magnum<BackupWire>('POST', `/v1/clusters/${cluster}/backups/${backup}/actions/restore`);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return waitForRestore(h, backup);
}

void test('a corrupted or truncated stored snapshot, or a missing data key, fails the restore with a reason and leaves the cluster as it was', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    const { capi, backup } = await clusterWithBackup(h, 'prod');
    const swift = h.userCloud.objectStore;
    const original = (await swift.getObject(backup.container!, backup.object!)).data;
    await deleteNamespace(h, capi, 'shop');
    await seedWorkload(h, capi, 'after-backup', 'x');

    // One flipped byte in the ciphertext.
    const flipped = Buffer.from(original);
    flipped[flipped.length - 40] = flipped[flipped.length - 40]! ^ 0xff;
    await swift.putObject(backup.container!, backup.object!, flipped);
    let r = await restore(h, 'prod', backup.uuid);
    assert.equal(r.restore_status, 'RESTORE_FAILED');
    assert.match(r.restore_status_reason ?? '', /the cluster was not changed: .*checksum/);
    assert.deepEqual(await namespaces(h, capi), ['after-backup']);

    // Cut short.
    await swift.putObject(backup.container!, backup.object!, original.subarray(0, original.length - 100));
    r = await restore(h, 'prod', backup.uuid);
    assert.equal(r.restore_status, 'RESTORE_FAILED');
    assert.match(r.restore_status_reason ?? '', /corrupted or truncated/);
    assert.deepEqual(await namespaces(h, capi), ['after-backup']);

    // The object intact again, but the cluster's data key gone.
    await swift.putObject(backup.container!, backup.object!, original);
    const key = (await h.store.list(BackupTypes.DataKey, { namespace: h.projectId })).items[0]!;
    await h.store.delete(BackupTypes.DataKey, h.projectId, key.metadata.name);
    r = await restore(h, 'prod', backup.uuid);
    assert.equal(r.restore_status, 'RESTORE_FAILED');
    assert.match(r.restore_status_reason ?? '', /encryption key of the backups of cluster .* is missing/);
    assert.deepEqual(await namespaces(h, capi), ['after-backup']);

    // Deleted object.
    await swift.deleteObject(backup.container!, backup.object!);
    r = await restore(h, 'prod', backup.uuid);
    assert.equal(r.restore_status, 'RESTORE_FAILED');
    assert.match(r.restore_status_reason ?? '', /downloading .* failed/);
  } finally {
    await h.close();
  }
});

void test('an object store failing during the upload gives a FAILED backup with the reason and leaves no object behind', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'prod', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'prod', 'CREATE_COMPLETE');
    await addFault(h, {
      kind: 'fail',
      operation: 'object-store.objects.create',
      count: 1,
      failure: { type: 'http', status: 503, message: 'Service Unavailable: the proxy lost its backend' },
    });
    const res = await h.magnum<BackupWire>('POST', '/v1/clusters/prod/backups');
    assert.equal(res.status, 202);
    const b = await waitForBackup(h, res.body.uuid);
    assert.equal(b.status, 'FAILED');
    assert.match(b.status_reason ?? '', /^Uploading the snapshot failed: object-store HTTP 503/);
    const containers = await h.userCloud.objectStore.listContainers();
    for (const c of containers) assert.deepEqual(await h.userCloud.objectStore.listObjects(c.name), []);
    await clearFaults(h);

    // The next one works.
    const again = await h.magnum<BackupWire>('POST', '/v1/clusters/prod/backups');
    assert.equal((await waitForBackup(h, again.body.uuid)).status, 'COMPLETE');
  } finally {
    await h.close();
  }
});

void test('a snapshot of another cluster is refused (409) while that cluster exists; once it is deleted its kept backups restore into a new cluster', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    const { backup } = await clusterWithBackup(h, 'old');
    await createCluster(h, 'new', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'new', 'CREATE_COMPLETE');
    const newCapi = await capiName(h, 'new');

    const refused = await h.magnum<ErrorBody>(
      'POST',
      `/v1/clusters/new/backups/${backup.uuid}/actions/restore`,
    );
    assert.equal(refused.status, 409);
    assert.match(refused.body.errors[0]!.detail, /is a snapshot of another cluster \(old\)/);
    assert.deepEqual(await namespaces(h, newCapi), []);

    // Deleting the cluster keeps its backups (default): listed, stored, restorable elsewhere.
    assert.equal((await h.magnum('DELETE', '/v1/clusters/old')).status, 204);
    await waitForStatus(h, 'old', 'gone');
    const all = await h.magnum<{ backups: BackupWire[] }>('GET', '/v1/backups');
    assert.deepEqual(
      all.body.backups.map((b) => [b.uuid, b.status]),
      [[backup.uuid, 'COMPLETE']],
    );
    const r = await restore(h, 'new', backup.uuid);
    assert.equal(r.restore_status, 'RESTORE_COMPLETE', r.restore_status_reason ?? '');
    assert.deepEqual(await namespaces(h, newCapi), ['shop']);
  } finally {
    await h.close();
  }
});

void test('a cluster labelled etcd_backup_keep_on_delete=false takes its backups and their objects with it', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'temp', {
      master_count: 1,
      node_count: 1,
      labels: { etcd_backup_keep_on_delete: 'false' },
    });
    await waitForStatus(h, 'temp', 'CREATE_COMPLETE');
    const res = await h.magnum<BackupWire>('POST', '/v1/clusters/temp/backups');
    const b = await waitForBackup(h, res.body.uuid);
    assert.equal(b.status, 'COMPLETE');
    assert.equal((await h.userCloud.objectStore.listObjects(b.container!)).length, 1);
    await h.magnum('DELETE', '/v1/clusters/temp');
    await waitForStatus(h, 'temp', 'gone');
    const { eventually } = await import('../engine/harness.ts');
    await eventually(h, 'the backups to be gone', async () => {
      const list = await h.magnum<{ backups: unknown[] }>('GET', '/v1/backups');
      return list.body.backups.length === 0;
    });
    assert.deepEqual(await h.userCloud.objectStore.listObjects(b.container!), []);
  } finally {
    await h.close();
  }
});
