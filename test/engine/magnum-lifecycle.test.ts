import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CapiTypes,
  type KubeadmControlPlaneObject,
  type MachineDeploymentObject,
  type MachineObject,
  type OpenStackClusterObject,
} from '../../src/domain/index.ts';
import {
  capi,
  createCluster,
  createKeypair,
  eventually,
  leftovers,
  magnumCluster,
  nodeGroups,
  startHarness,
  statusOf,
  waitForStatus,
  type Harness,
} from './harness.ts';

/** Servers of the project by availability zone (name → zone). */
async function serversByZone(h: Harness): Promise<Map<string, string>> {
  const servers = await h.userCloud.compute.listServers();
  return new Map(servers.map((s) => [s.name, s.availabilityZone ?? '']));
}

void test('openstack coe cluster create with the guide’s arguments goes CREATE_IN_PROGRESS → CREATE_COMPLETE with 3 masters in 3 zones, an API load balancer with floating IP, and 3 workers; delete leaves nothing', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    const uuid = await createCluster(h, 'production-kubernetes');
    assert.equal((await statusOf(h, 'production-kubernetes'))?.status, 'CREATE_IN_PROGRESS');
    const done = await waitForStatus(h, 'production-kubernetes', 'CREATE_COMPLETE');
    assert.match(done.reason, /completed/);

    const mc = (await magnumCluster(h, 'production-kubernetes'))!;
    assert.match(mc.status.apiAddress ?? '', /^https:\/\//);
    assert.equal(mc.status.masterAddresses?.length, 3);
    assert.equal(mc.status.nodeAddresses?.length, 3);
    assert.equal(mc.status.coeVersion, 'v1.31.9');
    assert.equal(mc.status.stackId, (await capi(h, CapiTypes.Cluster))[0]?.metadata.name);
    assert.equal(mc.status.healthStatus, 'HEALTHY');
    const groups = await nodeGroups(h, uuid);
    assert.deepEqual(
      groups.map((g) => [g.spec.name, g.status.outcome, g.status.nodeAddresses?.length]).sort(),
      [
        ['default-master', 'Complete', 3],
        ['default-worker', 'Complete', 3],
      ],
    );

    // Exactly what the guide promises, in the cloud.
    const zones = await serversByZone(h);
    assert.equal(zones.size, 6);
    const masterZones = [...zones]
      .filter(([n]) => n.includes('control-plane'))
      .map(([, z]) => z)
      .sort();
    assert.deepEqual(masterZones, ['AZ-1', 'AZ-2', 'AZ-3']);
    const inv = await leftovers(h);
    assert.equal(inv.Server, 6);
    assert.equal(inv.LoadBalancer, 1);
    assert.equal(inv.FloatingIp ?? inv.FloatingIP, 1);
    assert.equal(inv.Network, 1);
    assert.equal(inv.Router, 1);
    const [osc] = await capi<OpenStackClusterObject>(h, CapiTypes.OpenStackCluster);
    const members = await h.userCloud.loadBalancer.listMembers(osc!.status.apiServerLoadBalancer!.poolID!);
    assert.equal(members.length, 3, 'each master is a member of the API pool');

    const del = await h.magnum('DELETE', '/v1/clusters/production-kubernetes');
    assert.equal(del.status, 204);
    assert.equal((await statusOf(h, 'production-kubernetes'))?.status, 'DELETE_IN_PROGRESS');
    await waitForStatus(h, 'production-kubernetes', 'gone');
    assert.deepEqual(await leftovers(h), {});
    assert.deepEqual(await capi(h, CapiTypes.Machine), []);
  } finally {
    await h.close();
  }
});

void test('node group create in AZ-2 with a flavor, resize up and down with nodes_to_remove (drained first), then delete of the node group', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'c1', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'c1', 'CREATE_COMPLETE');

    const ng = await h.magnum('POST', '/v1/clusters/c1/nodegroups', {
      name: 'worker-group2',
      node_count: 2,
      flavor_id: 'm1.large',
      labels: { availability_zone: 'AZ-2' },
    });
    assert.equal(ng.status, 202, JSON.stringify(ng.body));
    await eventually(h, 'worker-group2 CREATE_COMPLETE', async () => {
      const mc = (await magnumCluster(h, 'c1'))!;
      const g = (await nodeGroups(h, mc.metadata.uid)).find((x) => x.spec.name === 'worker-group2');
      return g && g.status.outcome === 'Complete' && g.status.observedGeneration === g.metadata.generation;
    });
    const servers = await h.userCloud.compute.listServers();
    const group2 = servers.filter((s) => s.name.includes('worker-group2'));
    assert.equal(group2.length, 2);
    assert.ok(group2.every((s) => s.availabilityZone === 'AZ-2'));
    const large = await h.userCloud.compute.findFlavor('m1.large');
    assert.ok(large && large !== 'ambiguous');
    assert.ok(group2.every((s) => s.flavor.id === large.id || s.flavor.name === 'm1.large'));

    // Resize up to 4.
    let r = await h.magnum('POST', '/v1/clusters/c1/actions/resize', {
      node_count: 4,
      nodegroup: 'worker-group2',
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    await waitForStatus(h, 'c1', 'UPDATE_COMPLETE');
    assert.equal(
      (await h.userCloud.compute.listServers()).filter((s) => s.name.includes('worker-group2')).length,
      4,
    );

    // Resize down to 3, naming the server to remove.
    const victim = (await h.userCloud.compute.listServers())
      .filter((s) => s.name.includes('worker-group2'))
      .sort((a, b) => a.name.localeCompare(b.name))[2]!;
    r = await h.magnum('POST', '/v1/clusters/c1/actions/resize', {
      node_count: 3,
      nodegroup: 'worker-group2',
      nodes_to_remove: [victim.id],
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    await waitForStatus(h, 'c1', 'UPDATE_COMPLETE');
    const left = (await h.userCloud.compute.listServers()).filter((s) => s.name.includes('worker-group2'));
    assert.equal(left.length, 3);
    assert.ok(!left.some((s) => s.id === victim.id), 'the named server was the one removed');

    // Node group delete.
    const d = await h.magnum('DELETE', '/v1/clusters/c1/nodegroups/worker-group2');
    assert.equal(d.status, 204, JSON.stringify(d.body));
    await eventually(h, 'worker-group2 to be gone', async () => {
      const mc = (await magnumCluster(h, 'c1'))!;
      return !(await nodeGroups(h, mc.metadata.uid)).some((x) => x.spec.name === 'worker-group2');
    });
    assert.equal(
      (await h.userCloud.compute.listServers()).filter((s) => s.name.includes('worker-group2')).length,
      0,
    );
    assert.equal((await capi<MachineDeploymentObject>(h, CapiTypes.MachineDeployment)).length, 1);

    await h.magnum('DELETE', '/v1/clusters/c1');
    await waitForStatus(h, 'c1', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('upgrade one minor: the control plane rolls first, one machine at a time, then the workers; the cluster takes the new kube_tag', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'up', { master_count: 3, node_count: 2 });
    await waitForStatus(h, 'up', 'CREATE_COMPLETE');
    const templates = await h.magnum<{ clustertemplates: { uuid: string; name: string }[] }>(
      'GET',
      '/v1/clustertemplates',
    );
    const next = templates.body.clustertemplates.find((t) => t.name === 'k8s-v1.32')!;
    const res = await h.magnum('POST', '/v1/clusters/up/actions/upgrade', { cluster_template: next.uuid });
    assert.equal(res.status, 202, JSON.stringify(res.body));

    // Watch the rollout: never more than 4 control plane machines, workers wait for the control plane.
    let maxCp = 0;
    let workersStartedBeforeCp = false;
    await eventually(h, 'the upgrade to complete', async () => {
      const machines = await capi<MachineObject>(h, CapiTypes.Machine);
      const cps = machines.filter((m) => 'cluster.x-k8s.io/control-plane' in m.metadata.labels);
      maxCp = Math.max(maxCp, cps.length);
      const kcp = (await capi<KubeadmControlPlaneObject>(h, CapiTypes.KubeadmControlPlane))[0]!;
      const workersNew = machines.some(
        (m) => !('cluster.x-k8s.io/control-plane' in m.metadata.labels) && m.spec.version === 'v1.32.5',
      );
      if (workersNew && kcp.status.version !== 'v1.32.5') workersStartedBeforeCp = true;
      const s = await statusOf(h, 'up');
      if (s?.status === 'UPDATE_FAILED') assert.fail(s.reason);
      return s?.status === 'UPDATE_COMPLETE';
    });
    assert.ok(maxCp <= 4, `at most one extra control plane machine during the rollout (saw ${maxCp})`);
    assert.equal(workersStartedBeforeCp, false, 'workers roll only after the control plane');
    const machines = await capi<MachineObject>(h, CapiTypes.Machine);
    assert.equal(machines.length, 5);
    assert.ok(machines.every((m) => m.spec.version === 'v1.32.5'));
    const mc = (await magnumCluster(h, 'up'))!;
    assert.equal(mc.status.coeVersion, 'v1.32.5');
    assert.equal(mc.spec.clusterTemplateId, next.uuid);
    await h.magnum('DELETE', '/v1/clusters/up');
    await waitForStatus(h, 'up', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});
