import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CAPI_API_VERSION,
  CapiTypes,
  INFRA_API_VERSION,
  type CapiClusterObject,
  type OpenStackClusterObject,
} from '../../src/domain/index.ts';
import { startInfra, type InfraFixture } from '../engine/infra-fixture.ts';

async function applyCluster(f: InfraFixture, name: string, osc: Record<string, unknown> = {}): Promise<void> {
  await f.store.create({
    apiVersion: CAPI_API_VERSION,
    kind: 'Cluster',
    metadata: { name, namespace: f.projectId },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackCluster', name },
    },
  });
  await f.store.create({
    apiVersion: INFRA_API_VERSION,
    kind: 'OpenStackCluster',
    metadata: { name, namespace: f.projectId },
    spec: {
      managedSubnets: [{ cidr: '10.6.0.0/24' }],
      externalNetwork: { filter: { name: 'public' } },
      apiServerLoadBalancer: { enabled: true },
      managedSecurityGroups: { allowAllInClusterTraffic: true },
      ...osc,
    },
  });
}

void test('an OpenStackCluster gets network, subnet, router, security groups and an API load balancer with listener, pool, monitor and floating IP', async () => {
  const f = await startInfra({ latencyMs: 2000 });
  try {
    await applyCluster(f, 'c1');
    // While Octavia provisions, the condition says what it waits for.
    const waiting = await f.until('the load balancer to be pending', async () => {
      const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, 'c1');
      const c = o?.status.conditions?.find((x) => x.type === 'APIEndpointReady');
      return c?.status === 'False' && /PENDING_CREATE/.test(c.message ?? '') ? c.message : undefined;
    });
    assert.match(waiting, /waiting for load balancer k8s-clusterapi-cluster-.*-kubeapi \(PENDING_CREATE\)/);
    const osc = await f.until('the OpenStackCluster to be provisioned', async () => {
      const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, 'c1');
      return o?.status.initialization?.provisioned ? o : undefined;
    });
    // The passes that followed the load balancer's build (from its creation to its health
    // monitor's) did not fetch the network and router again.
    const build = f.requests.slice(
      f.requests.indexOf('POST /cloud/load-balancer/v2/lbaas/loadbalancers'),
      f.requests.indexOf('POST /cloud/load-balancer/v2/lbaas/healthmonitors'),
    );
    assert.ok(build.filter((r) => /^GET .*\/loadbalancers\/[^/]+$/.test(r)).length >= 3, build.join('\n'));
    assert.deepEqual(
      build.filter((r) => /^GET \/cloud\/network\/v2\.0\/(networks|routers)\/[^/]+$/.test(r)),
      [],
    );
    const lb = osc.status.apiServerLoadBalancer!;
    assert.ok(lb.id && lb.listenerID && lb.poolID && lb.monitorID && lb.floatingIPID, JSON.stringify(lb));
    assert.match(lb.ip!, /^172\.24\.([0-9]|1[0-5])\./);
    assert.deepEqual(osc.spec.controlPlaneEndpoint, { host: lb.ip, port: 6443 });
    assert.deepEqual(
      osc.status.failureDomains?.map((d) => d.name),
      ['AZ-1', 'AZ-2', 'AZ-3'],
    );
    assert.ok(osc.metadata.finalizers.includes('openstackcluster.infrastructure.cluster.x-k8s.io'));

    // The load balancer really is wired as the provider wires it.
    const lbs = await f.clients.loadBalancer.listLoadBalancers();
    assert.equal(lbs.length, 1, 'exactly one load balancer');
    const [listener] = await f.clients.loadBalancer.listListeners({ loadBalancerId: lbs[0]!.id });
    assert.equal(listener?.protocolPort, 6443);
    const [pool] = await f.clients.loadBalancer.listPools({ loadBalancerId: lbs[0]!.id });
    assert.ok(pool?.healthMonitorId, 'pool has a health monitor');
    const fips = await f.clients.network.listFloatingIps();
    assert.equal(fips.length, 1, 'exactly one floating IP');
    assert.equal(fips[0]!.portId, lbs[0]!.vipPortId);
    const routers = await f.clients.network.listRouters();
    assert.equal(routers.length, 1);
    assert.ok(routers[0]!.externalGateway, 'router has a gateway to the external network');
    const sgs = (await f.clients.network.listSecurityGroups()).filter((g) =>
      g.name.startsWith('k8s-cluster-'),
    );
    assert.equal(sgs.length, 2);
    const cp = sgs.find((g) => g.name.endsWith('controlplane'))!;
    assert.ok(cp.rules.some((r) => r.portRangeMin === 6443 && r.direction === 'ingress'));
    // each group's rules were asked for in one request, as a bulk create
    assert.equal(
      f.requests.filter((r) => r === 'POST /cloud/network/v2.0/security-group-rules').length,
      2,
      f.requests.join('\n'),
    );
    const worker = sgs.find((g) => g.name.endsWith('worker'))!;
    assert.ok(worker.rules.some((r) => r.portRangeMin === 10250 && r.remoteGroupId === cp.id));

    // The Cluster learned the endpoint and failure domains.
    const cluster = await f.until('the Cluster to be provisioned', async () => {
      const c = await f.store.get<CapiClusterObject>(CapiTypes.Cluster, f.projectId, 'c1');
      return c?.status.phase === 'Provisioned' ? c : undefined;
    });
    assert.equal(cluster.spec.controlPlaneEndpoint?.host, lb.ip);
    assert.equal(cluster.status.failureDomains?.length, 3);
    // Built, the infrastructure is left alone: neither its own last status write nor the Cluster
    // taking up the endpoint sends it through another pass of cloud checks.
    for (let i = 0; i < 20; i++) await f.clock.advance(500);
    await new Promise<void>((r) => setImmediate(r));
    const afterBuild = f.requests.slice(
      f.requests.indexOf('POST /cloud/load-balancer/v2/lbaas/healthmonitors'),
    );
    assert.deepEqual(
      afterBuild.filter((r) => /^GET \/cloud\/network\/v2\.0\/(networks|routers)\/[^/]+$/.test(r)),
      [],
    );
    // the pass that found the health monitor ready was the last to look at the floating IP
    assert.equal(afterBuild.filter((r) => /^GET \/cloud\/network\/v2\.0\/floatingips\//.test(r)).length, 1);

    // Delete: everything goes, nothing leaks.
    await f.store.delete(CapiTypes.Cluster, f.projectId, 'c1');
    await f.until(
      'the Cluster to be gone',
      async () => (await f.store.get(CapiTypes.Cluster, f.projectId, 'c1')) === undefined,
    );
    await f.untilCloudEmpty();
  } finally {
    await f.close();
  }
});

void test('the first pass looks up nothing by name but the external network, and what a pass has just made has no children yet (subnets, router ports, rules); after the records are lost, everything is found by name and looked into', async () => {
  const f = await startInfra();
  try {
    const lookups = (from: number) =>
      f.requests
        .slice(from)
        .filter((r) => /^GET \/cloud\/network\/v2\.0\/(subnets|ports|security-group-rules)$/.test(r));
    const byName = (from: number) =>
      f.requests
        .slice(from)
        .filter((r) =>
          /^GET \/cloud\/(network\/v2\.0\/(networks|routers|security-groups)|load-balancer\/v2\/lbaas\/loadbalancers)$/.test(
            r,
          ),
        );
    const provisioned = (name: string) =>
      f.until(`${name} to be provisioned`, async () => {
        const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, name);
        return o?.status.initialization?.provisioned ? o : undefined;
      });
    await applyCluster(f, 'c7');
    const osc = await provisioned('c7');
    assert.deepEqual(lookups(0), []);
    assert.deepEqual(byName(0), ['GET /cloud/network/v2.0/networks'], 'the external network, by its name');
    const cp = await f.clients.network.getSecurityGroup(osc.status.controlPlaneSecurityGroup!.id);
    assert.ok(cp.rules.some((r) => r.portRangeMin === 6443 && r.direction === 'ingress'));
    assert.equal(cp.rules.filter((r) => r.direction === 'ingress').length, 5, 'each rule once');
    const router = await f.clients.network.getRouter(osc.status.router!.id);
    const routerPorts = await f.clients.network.listPorts({ deviceId: router.id });
    assert.equal(routerPorts.length, 1, 'one interface on the cluster subnet');

    // A second cluster object of the same name whose pieces exist already (an earlier try made
    // them, its records are lost): each is found by name and looked into, nothing is made twice.
    const from = f.requests.length;
    await f.store.updateStatus({
      ...osc,
      status: { conditions: [], externalNetwork: osc.status.externalNetwork },
    });
    f.manager.enqueue('openstackcluster', { namespace: f.projectId, name: 'c7' });
    await f.until('the records to be made again', async () => {
      const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, 'c7');
      return o?.status.initialization?.provisioned && o.status.workerSecurityGroup ? o : undefined;
    });
    assert.deepEqual([...new Set(byName(from))].sort(), [
      'GET /cloud/load-balancer/v2/lbaas/loadbalancers',
      'GET /cloud/network/v2.0/networks',
      'GET /cloud/network/v2.0/routers',
      'GET /cloud/network/v2.0/security-groups',
    ]);
    assert.equal((await f.clients.loadBalancer.listLoadBalancers()).length, 1);
    const again = lookups(from);
    assert.ok(again.includes('GET /cloud/network/v2.0/subnets'), again.join('\n'));
    assert.ok(again.includes('GET /cloud/network/v2.0/ports'), again.join('\n'));
    assert.equal(again.filter((r) => r === 'GET /cloud/network/v2.0/security-group-rules').length, 2);
    assert.equal((await f.clients.network.listNetworks()).filter((n) => !n.external).length, 1);
    assert.equal((await f.clients.network.listSubnets()).filter((n) => n.name.includes('c7')).length, 1);
    assert.equal((await f.clients.network.listPorts({ deviceId: router.id })).length, 1);
    const cpAgain = await f.clients.network.getSecurityGroup(osc.status.controlPlaneSecurityGroup!.id);
    assert.equal(cpAgain.rules.filter((r) => r.direction === 'ingress').length, 5);

    await f.store.delete(CapiTypes.Cluster, f.projectId, 'c7');
    await f.untilCloudEmpty();
  } finally {
    await f.close();
  }
});

void test('a floating IP association that fails once is retried without allocating a second floating IP', async () => {
  const f = await startInfra();
  try {
    f.cloud.faults.add({
      kind: 'fail',
      operation: 'network.floatingips.update',
      count: 1,
      failure: { type: 'http', status: 404, message: 'Resource not found' },
    });
    await applyCluster(f, 'c2');
    await f.until('the OpenStackCluster to be provisioned', async () => {
      const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, 'c2');
      return o?.status.initialization?.provisioned ? o : undefined;
    });
    assert.equal((await f.clients.network.listFloatingIps()).length, 1);
    await f.store.delete(CapiTypes.Cluster, f.projectId, 'c2');
    await f.untilCloudEmpty();
  } finally {
    await f.close();
  }
});

void test('a network quota refusal fails the OpenStackCluster with the cloud message, and delete still cleans up', async () => {
  const f = await startInfra();
  try {
    f.cloud.faults.add({
      kind: 'fail',
      operation: 'network.routers.create',
      count: 1,
      failure: { type: 'quota', resource: 'router' },
    });
    await applyCluster(f, 'c3');
    const failed = await f.until('the OpenStackCluster to fail', async () => {
      const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, 'c3');
      const c = o?.status.conditions?.find((x) => x.type === 'Ready');
      return c?.reason === 'Failed' ? c : undefined;
    });
    assert.match(failed.message ?? '', /quota/i);
    await f.store.delete(CapiTypes.Cluster, f.projectId, 'c3');
    await f.untilCloudEmpty();
  } finally {
    await f.close();
  }
});
