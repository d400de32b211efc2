import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CapiTypes,
  MAGNUM_API_VERSION,
  type NodeGroupObject,
  type OpenStackClusterObject,
  type OpenStackMachineObject,
} from '../../src/domain/index.ts';
import {
  addFault,
  capi,
  clearFaults,
  createCluster,
  createKeypair,
  eventually,
  leftovers,
  magnumCluster,
  nodeGroups,
  startHarness,
  waitForStatus,
  type Harness,
} from './harness.ts';

async function countOf(
  h: Harness,
): Promise<{ servers: number; lbs: number; fips: number; networks: number }> {
  return {
    servers: (await h.userCloud.compute.listServers()).length,
    lbs: (await h.userCloud.loadBalancer.listLoadBalancers()).length,
    fips: (await h.userCloud.network.listFloatingIps()).length,
    networks: (await h.userCloud.network.listNetworks()).filter((n) => !n.external).length,
  };
}

void test('a crash in the middle of create (ids created but never recorded, or a store that records even less, as one restored from an older backup) is picked up after restart with no duplicate servers, ports, load balancers or floating IPs', async () => {
  const h = await startHarness({ latencyMs: 2000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'cr', { master_count: 3, node_count: 2 });
    await eventually(
      h,
      'the first servers to exist',
      async () => (await h.userCloud.compute.listServers()).length >= 1,
    );
    await h.restart();
    // Simulate the worst moment of the crash: the cloud calls went through, the writes recording
    // their ids did not. The machines and the cluster network also lose what they resolved
    // before creating anything: so much a store restored from an older backup could lack, while
    // the cloud holds everything made since. The names are what finds it all.
    for (const osm of await capi<OpenStackMachineObject>(h, CapiTypes.OpenStackMachine)) {
      await h.store.updateStatus({
        ...osm,
        status: { ...osm.status, instanceID: undefined, resources: undefined, resolved: undefined },
      });
    }
    for (const osc of await capi<OpenStackClusterObject>(h, CapiTypes.OpenStackCluster)) {
      const lb = osc.status.apiServerLoadBalancer;
      await h.store.updateStatus({
        ...osc,
        status: {
          ...osc.status,
          ...(lb ? { apiServerLoadBalancer: { name: lb.name, id: '' } } : {}),
          network: undefined,
          router: undefined,
          externalNetwork: undefined,
        },
      });
    }
    await waitForStatus(h, 'cr', 'CREATE_COMPLETE');
    assert.deepEqual(await countOf(h), { servers: 5, lbs: 1, fips: 1, networks: 1 });
    const ports = await h.userCloud.network.listPorts();
    const named = ports.filter((p) => /-0$/.test(p.name));
    assert.equal(named.length, 5, 'one port per machine');
    await h.magnum('DELETE', '/v1/clusters/cr');
    await waitForStatus(h, 'cr', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('a crash in the middle of delete is finished after restart and nothing leaks', async () => {
  const h = await startHarness({ latencyMs: 2000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'cd', { master_count: 1, node_count: 2 });
    await waitForStatus(h, 'cd', 'CREATE_COMPLETE');
    await h.magnum('DELETE', '/v1/clusters/cd');
    await eventually(
      h,
      'the first server to go',
      async () => (await h.userCloud.compute.listServers()).length < 3,
    );
    await h.restart();
    await waitForStatus(h, 'cd', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('with the cloud answering 20% of calls with 503, create and delete still converge and nothing leaks', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await addFault(h, { kind: 'error-rate', rate: 0.2, status: 503, seed: 42 });
    await createCluster(h, 'flaky', { master_count: 3, node_count: 2 });
    await waitForStatus(h, 'flaky', 'CREATE_COMPLETE', 3000);
    // the test's own reads go without retries: count with the faults off, then turn them on again
    await clearFaults(h);
    assert.deepEqual(await countOf(h), { servers: 5, lbs: 1, fips: 1, networks: 1 });
    await addFault(h, { kind: 'error-rate', rate: 0.2, status: 503, seed: 7 });
    await h.magnum('DELETE', '/v1/clusters/flaky');
    await waitForStatus(h, 'flaky', 'gone', 3000);
    await clearFaults(h);
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('deleting a cluster half-built, or in the middle of an upgrade, removes everything it owns', async () => {
  const h = await startHarness({ latencyMs: 3000 });
  try {
    await createKeypair(h);
    await createCluster(h, 'half', { master_count: 3, node_count: 2 });
    await eventually(
      h,
      'the load balancer to exist',
      async () => (await h.userCloud.loadBalancer.listLoadBalancers()).length === 1,
    );
    await h.magnum('DELETE', '/v1/clusters/half');
    await waitForStatus(h, 'half', 'gone');
    assert.deepEqual(await leftovers(h), {});

    await createCluster(h, 'upg', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'upg', 'CREATE_COMPLETE');
    const templates = await h.magnum<{ clustertemplates: { uuid: string; name: string }[] }>(
      'GET',
      '/v1/clustertemplates',
    );
    const next = templates.body.clustertemplates.find((t) => t.name === 'k8s-v1.32')!;
    assert.equal(
      (await h.magnum('POST', '/v1/clusters/upg/actions/upgrade', { cluster_template: next.uuid })).status,
      202,
    );
    await eventually(
      h,
      'a new control plane machine to be built',
      async () => (await h.userCloud.compute.listServers()).length > 2,
    );
    await h.magnum('DELETE', '/v1/clusters/upg');
    await waitForStatus(h, 'upg', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('changing a node group’s flavor replaces its servers one at a time without dropping below the requested size', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    const uuid = await createCluster(h, 'fl', { master_count: 1, node_count: 3 });
    await waitForStatus(h, 'fl', 'CREATE_COMPLETE');
    // What the façade writes for a node group update: the new spec with a fresh operation.
    const ng = (await nodeGroups(h, uuid)).find((g) => g.spec.name === 'default-worker')!;
    const mc = (await magnumCluster(h, 'fl'))!;
    await h.store.commit([
      { op: 'update', object: { ...mc, spec: { ...mc.spec, action: 'UPDATE', operationId: 'op-flavor' } } },
      {
        op: 'update',
        object: {
          ...ng,
          apiVersion: MAGNUM_API_VERSION,
          spec: { ...ng.spec, action: 'UPDATE', operationId: 'op-flavor', flavorId: 'm1.large' },
        },
      },
    ]);
    const large = await h.userCloud.compute.findFlavor('m1.large');
    assert.ok(large && large !== 'ambiguous');
    let minActive = Infinity;
    await eventually(h, 'the flavor change to complete', async () => {
      const servers = (await h.userCloud.compute.listServers()).filter((s) =>
        s.name.includes('default-worker'),
      );
      minActive = Math.min(minActive, servers.filter((s) => s.status === 'ACTIVE').length);
      const g = (await nodeGroups(h, uuid)).find((x) => x.spec.name === 'default-worker') as NodeGroupObject;
      return g.status.observedGeneration === g.metadata.generation && g.status.outcome === 'Complete';
    });
    const workers = (await h.userCloud.compute.listServers()).filter((s) =>
      s.name.includes('default-worker'),
    );
    assert.equal(workers.length, 3);
    assert.ok(workers.every((s) => s.flavor.id === large.id || s.flavor.name === 'm1.large'));
    assert.ok(minActive >= 3, `never fewer than 3 active workers (saw ${minActive})`);
    await h.magnum('DELETE', '/v1/clusters/fl');
    await waitForStatus(h, 'fl', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});
