import assert from 'node:assert/strict';
import test from 'node:test';
import {
  CapiTypes,
  type BackupObject,
  type KubeadmControlPlaneObject,
  type MachineObject,
} from '../../src/domain/index.ts';
import {
  addFault,
  capi,
  createCluster,
  createKeypair,
  eventually,
  startHarness,
  statusOf,
  waitForStatus,
} from '../engine/harness.ts';
import { storedBackups } from './helpers.ts';

const HOUR = 3_600_000;

void test('etcd_backup_schedule=1h takes a backup every hour on the injected clock, and etcd_backup_retention=2 keeps the newest two (objects too)', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'sched', {
      master_count: 1,
      node_count: 1,
      labels: { etcd_backup_schedule: '1h', etcd_backup_retention: '2' },
    });
    await waitForStatus(h, 'sched', 'CREATE_COMPLETE');
    assert.deepEqual(await storedBackups(h), [], 'nothing before the first interval');

    const completeScheduled = async () =>
      (await storedBackups(h)).filter(
        (b) =>
          b.spec.trigger === 'scheduled' && b.status.phase === 'COMPLETE' && !b.metadata.deletionTimestamp,
      );
    const seen = new Set<string>();
    for (let n = 1; n <= 3; n++) {
      await h.clock.advance(HOUR);
      await eventually(h, `scheduled backup #${n}`, async () => {
        const fresh = (await completeScheduled()).filter((b) => !seen.has(b.metadata.uid));
        if (fresh.length !== 1) return false;
        seen.add(fresh[0]!.metadata.uid);
        return true;
      });
    }
    const kept = await eventually(h, 'retention to prune the oldest', async () => {
      const c = await completeScheduled();
      const all = await storedBackups(h);
      return c.length === 2 && all.length === 2 ? c : undefined;
    });
    const objects = await h.userCloud.objectStore.listObjects(kept[0]!.status.container!);
    assert.deepEqual(objects.map((o) => o.name).sort(), kept.map((b) => b.status.object!).sort());
    // The two kept are the two newest of the three taken.
    const taken = [...seen];
    assert.deepEqual(kept.map((b: BackupObject) => b.metadata.uid).sort(), taken.slice(1).sort());
  } finally {
    await h.close();
  }
});

void test('an upgrade first takes an etcd snapshot and waits for it: no control-plane machine of the new version exists before the snapshot is COMPLETE', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'up', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'up', 'CREATE_COMPLETE');
    const templates = await h.magnum<{ clustertemplates: { uuid: string; name: string }[] }>(
      'GET',
      '/v1/clustertemplates',
    );
    const next = templates.body.clustertemplates.find((t) => t.name === 'k8s-v1.32')!;
    assert.equal(
      (await h.magnum('POST', '/v1/clusters/up/actions/upgrade', { cluster_template: next.uuid })).status,
      202,
    );
    let newMachineBeforeSnapshot = false;
    await eventually(h, 'the upgrade to complete', async () => {
      const pre = (await storedBackups(h)).find((b) => b.spec.trigger === 'pre-upgrade');
      const machines = await capi<MachineObject>(h, CapiTypes.Machine);
      if (machines.some((m) => m.spec.version === 'v1.32.5') && pre?.status.phase !== 'COMPLETE')
        newMachineBeforeSnapshot = true;
      const s = await statusOf(h, 'up');
      if (s?.status === 'UPDATE_FAILED') assert.fail(s.reason);
      return s?.status === 'UPDATE_COMPLETE';
    });
    assert.equal(newMachineBeforeSnapshot, false);
    const pre = (await storedBackups(h)).filter((b) => b.spec.trigger === 'pre-upgrade');
    assert.equal(pre.length, 1, 'one snapshot per upgrade');
    assert.equal(pre[0]!.status.phase, 'COMPLETE');
  } finally {
    await h.close();
  }
});

void test('when the pre-upgrade snapshot fails, the upgrade fails with its reason and the control plane is not touched', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'up', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'up', 'CREATE_COMPLETE');
    const before = (await capi<KubeadmControlPlaneObject>(h, CapiTypes.KubeadmControlPlane))[0]!.spec.version;
    await addFault(h, {
      kind: 'fail',
      operation: 'object-store.objects.create',
      count: 5,
      failure: { type: 'http', status: 507, message: 'Insufficient Storage' },
    });
    const templates = await h.magnum<{ clustertemplates: { uuid: string; name: string }[] }>(
      'GET',
      '/v1/clustertemplates',
    );
    const next = templates.body.clustertemplates.find((t) => t.name === 'k8s-v1.32')!;
    await h.magnum('POST', '/v1/clusters/up/actions/upgrade', { cluster_template: next.uuid });
    const s = await waitForStatus(h, 'up', 'UPDATE_FAILED');
    assert.match(
      s.reason,
      /etcd snapshot before the upgrade failed, so nothing was changed: Uploading the snapshot failed/,
    );
    const kcp = (await capi<KubeadmControlPlaneObject>(h, CapiTypes.KubeadmControlPlane))[0]!;
    assert.equal(kcp.spec.version, before);
    const machines = await capi<MachineObject>(h, CapiTypes.Machine);
    assert.ok(machines.every((m) => m.spec.version !== 'v1.32.5'));
  } finally {
    await h.close();
  }
});

void test('scaling the control plane down takes a snapshot first', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'cp', { master_count: 3, node_count: 1 });
    await waitForStatus(h, 'cp', 'CREATE_COMPLETE');
    const res = await h.magnum('POST', '/v1/clusters/cp/actions/resize', {
      node_count: 1,
      nodegroup: 'default-master',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await waitForStatus(h, 'cp', 'UPDATE_COMPLETE');
    const pre = (await storedBackups(h)).filter((b) => b.spec.trigger === 'pre-scale-down');
    assert.equal(pre.length, 1);
    assert.equal(pre[0]!.status.phase, 'COMPLETE');
  } finally {
    await h.close();
  }
});
