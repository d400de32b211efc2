import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CapiTypes, type CapiClusterObject, type MachineObject } from '../../src/domain/index.ts';
import { StorePki, WorkloadAccess, loadOrCreateKey } from '../../src/workload/index.ts';
import {
  capi,
  createCluster,
  createKeypair,
  eventually,
  leftovers,
  startHarness,
  waitForStatus,
} from './harness.ts';

void test('scale-down drains the node (cordon, evictions) through the workload cluster’s API before its server is deleted', async () => {
  const h = await startHarness({ latencyMs: 4000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'dr', { master_count: 1, node_count: 2 });
    await waitForStatus(h, 'dr', 'CREATE_COMPLETE');
    const cluster = (await capi<CapiClusterObject>(h, CapiTypes.Cluster))[0]!;
    const pki = new StorePki({ store: h.store, clock: h.clock, encryptionKey: loadOrCreateKey(join(h.dir)) });
    const workload = await new WorkloadAccess({ pki, clock: h.clock }).forCluster(cluster);
    assert.ok(workload, 'the workload API is reachable');
    assert.equal((await workload.listNodes()).length, 3);

    const res = await h.magnum('POST', '/v1/clusters/dr/actions/resize', {
      node_count: 1,
      nodegroup: 'default-worker',
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    // Watch the victim: its node must be cordoned while its server still exists.
    let sawCordonedWithServer = false;
    let sawServerGoneUncordoned = false;
    let victim: string | undefined;
    await eventually(h, 'the scale-down to complete', async () => {
      const deleting = (await capi<MachineObject>(h, CapiTypes.Machine)).find(
        (m) => m.metadata.deletionTimestamp,
      );
      if (deleting) victim = deleting.metadata.name;
      if (victim) {
        const node = await workload.getNode(victim);
        const server = (await h.userCloud.compute.listServers()).find((s) => s.name === victim);
        if (node?.spec?.unschedulable && server) sawCordonedWithServer = true;
        if (!server && node && !node.spec?.unschedulable) sawServerGoneUncordoned = true;
      }
      const s = (await h.magnum<{ status: string }>('GET', '/v1/clusters/dr')).body.status;
      return s === 'UPDATE_COMPLETE';
    });
    assert.ok(victim, 'a machine was removed');
    assert.ok(sawCordonedWithServer, 'the node was cordoned while its server still existed');
    assert.ok(!sawServerGoneUncordoned, 'no server was deleted under a node that was not drained');
    assert.equal((await workload.listNodes()).length, 2, 'the node left the cluster');
    await h.magnum('DELETE', '/v1/clusters/dr');
    await waitForStatus(h, 'dr', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});
