import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CAPI_API_VERSION,
  CapiTypes,
  INFRA_API_VERSION,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type MachineObject,
  type NodeGroupObject,
  type OpenStackClusterObject,
  type OpenStackMachineObject,
} from '../../src/domain/index.ts';
import { ensureMember, removeMember } from '../../src/controllers/openstack-machine/osm-member.ts';
import { resolve } from '../../src/controllers/openstack-machine/osm-resources.ts';
import { checkReferences } from '../../src/controllers/magnum-driver/magnum-checks.ts';
import { Lookups } from '../../src/controllers/common/lookups.ts';
import { silentLogger } from '../../src/domain/index.ts';
import { startInfra, type InfraFixture } from '../engine/infra-fixture.ts';

async function provisionedCluster(f: InfraFixture, name: string): Promise<OpenStackClusterObject> {
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
    },
  });
  return f.until('the cluster infrastructure', async () => {
    const o = await f.store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, f.projectId, name);
    return o?.status.initialization?.provisioned ? o : undefined;
  });
}

async function applyMachine(
  f: InfraFixture,
  cluster: string,
  name: string,
  opts: { controlPlane?: boolean; az?: string; rootVolume?: number; flavor?: string; image?: string } = {},
): Promise<void> {
  await f.store.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-bootstrap`, namespace: f.projectId },
    spec: {
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from('#cloud-config\nruncmd: [kubeadm join]\n').toString('base64') },
    },
  });
  await f.store.create({
    apiVersion: CAPI_API_VERSION,
    kind: 'Machine',
    metadata: {
      name,
      namespace: f.projectId,
      labels: opts.controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {},
    },
    spec: {
      clusterName: cluster,
      version: 'v1.31.4',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name },
      ...(opts.az ? { failureDomain: opts.az } : {}),
    },
  });
  await f.store.create({
    apiVersion: INFRA_API_VERSION,
    kind: 'OpenStackMachine',
    // as a MachineSet or control plane makes it from its template
    metadata: { name, namespace: f.projectId, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
    spec: {
      flavor: opts.flavor ?? 'm1.small',
      image: { filter: { name: opts.image ?? 'ubuntu-22.04-kube' } },
      sshKeyName: 'k1',
      tags: ['test-tag'],
      ...(opts.rootVolume ? { rootVolume: { sizeGiB: opts.rootVolume } } : {}),
    },
  });
}

/** The API load balancer's provisioning status, and a wait (in virtual time) until it is ACTIVE. */
function apiLoadBalancer(f: InfraFixture, osc: OpenStackClusterObject) {
  const lb = osc.status.apiServerLoadBalancer!;
  const status = async () => (await f.clients.loadBalancer.getLoadBalancer(lb.id)).provisioningStatus;
  const active = () =>
    f.until('the load balancer to be ACTIVE', async () => ((await status()) === 'ACTIVE' ? true : undefined));
  return { lb, status, active };
}

/** The keypair `k1` every machine of these tests names. */
async function addKeypair(f: InfraFixture): Promise<void> {
  await f.clients.compute.createKeypair({
    name: 'k1',
    publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5hZ25ldGFyLXRlc3Qta2V5LW5vdC1yZWFsLTAwMDAw t',
  });
}

/** Delete the cluster and the named machines, and wait until the project's cloud inventory is empty. */
async function deleteAll(f: InfraFixture, cluster: string, ...machines: string[]): Promise<void> {
  await f.store.delete(CapiTypes.Cluster, f.projectId, cluster);
  for (const m of machines) await f.store.delete(CapiTypes.Machine, f.projectId, m);
  await f.untilCloudEmpty();
}

void test('a control plane machine gets a port, a server in its availability zone with flavor, image, keypair, user data and tags, and joins the API load balancer', async () => {
  const f = await startInfra({ latencyMs: 1000 });
  try {
    await addKeypair(f);
    const osc = await provisionedCluster(f, 'c1');
    await applyMachine(f, 'c1', 'c1-cp-1', { controlPlane: true, az: 'AZ-2' });
    const osm = await f.until('the server to be ACTIVE', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c1-cp-1');
      return o?.status.initialization?.provisioned ? o : undefined;
    });
    assert.match(osm.spec.providerID!, /^openstack:\/\/RegionOne\/[0-9a-f-]{36}$/);
    const server = await f.clients.compute.getServer(osm.status.instanceID!);
    assert.equal(server.availabilityZone, 'AZ-2');
    assert.equal(server.keyName, 'k1');
    assert.equal(server.name, 'c1-cp-1');
    assert.ok(server.tags.includes('test-tag'));
    const flavor = await f.clients.compute.findFlavor('m1.small');
    assert.ok(flavor && flavor !== 'ambiguous');
    assert.ok(
      server.flavor.id === flavor.id || server.flavor.name === 'm1.small',
      JSON.stringify(server.flavor),
    );
    assert.equal(server.imageId, osm.status.resolved?.imageID);
    const ports = await f.clients.network.listPorts({ deviceId: server.id });
    assert.equal(ports.length, 1);
    assert.equal(ports[0]!.name, 'c1-cp-1-0');
    const members = await f.clients.loadBalancer.listMembers(osc.status.apiServerLoadBalancer!.poolID!);
    assert.equal(members.length, 1);
    assert.equal(members[0]!.address, osm.status.addresses?.find((a) => a.type === 'InternalIP')?.address);
    const machine = await f.until('the Machine to learn its provider ID', async () => {
      const m = await f.store.get<MachineObject>(CapiTypes.Machine, f.projectId, 'c1-cp-1');
      return m?.spec.providerID ? m : undefined;
    });
    assert.equal(machine.spec.providerID, osm.spec.providerID);
    assert.equal(machine.status.phase, 'Provisioned');

    // Deleting the machine removes the member, the server and the port.
    await f.store.delete(CapiTypes.Machine, f.projectId, 'c1-cp-1');
    await f.until(
      'the machine to be gone',
      async () => (await f.store.get(CapiTypes.Machine, f.projectId, 'c1-cp-1')) === undefined,
    );
    assert.equal(
      (await f.clients.loadBalancer.listMembers(osc.status.apiServerLoadBalancer!.poolID!)).length,
      0,
    );
    assert.equal((await f.clients.compute.listServers()).length, 0);
    assert.equal((await f.clients.network.listPorts({ name: 'c1-cp-1-0' })).length, 0);
    await deleteAll(f, 'c1');
  } finally {
    await f.close();
  }
});

void test('a server Nova has just accepted is recorded as BUILD, with its ID and the reason the machine waits, in one write', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c5');
    const start = await f.store.currentRevision();
    await applyMachine(f, 'c5', 'c5-w-1', { az: 'AZ-1' });
    const osm = await f.until('the server to be ACTIVE', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c5-w-1');
      return o?.status.initialization?.provisioned ? o : undefined;
    });
    const versions = (await f.store.changes(start, { types: [CapiTypes.OpenStackMachine] })).map(
      (e) => e.object as OpenStackMachineObject,
    );
    const recorded = versions.find((v) => v.status.instanceID !== undefined)!;
    assert.equal(recorded.status.instanceID, osm.status.instanceID);
    assert.equal(recorded.status.instanceState, 'BUILD');
    const ready = recorded.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.message, 'server c5-w-1 is BUILD');
    assert.equal(osm.status.instanceState, 'ACTIVE');
    await deleteAll(f, 'c5', 'c5-w-1');
  } finally {
    await f.close();
  }
});

void test('a server is read from the cloud once it is ACTIVE: the provider ID the machine writes, and the Machine\u2019s copy of it, bring no further pass of checks', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c6');
    const start = await f.store.currentRevision();
    await applyMachine(f, 'c6', 'c6-w-1', { az: 'AZ-1' });
    const machine = await f.until('the Machine to carry the provider ID', async () => {
      const m = await f.store.get<MachineObject>(CapiTypes.Machine, f.projectId, 'c6-w-1');
      return m?.spec.providerID && m.status.initialization?.infrastructureProvisioned ? m : undefined;
    });
    await f.manager.waitIdle();
    const osm = (await f.store.get<OpenStackMachineObject>(
      CapiTypes.OpenStackMachine,
      f.projectId,
      'c6-w-1',
    ))!;
    assert.equal(machine.spec.providerID, osm.spec.providerID);
    assert.equal(osm.status.ready, true);
    // one GET: the poll after the create, which found the server ACTIVE (the embedded cloud
    // builds at once here); the writes of the provider ID into both specs read nothing again
    const reads = f.requests.filter((r) => r === `GET /cloud/compute/v2.1/servers/${osm.status.instanceID}`);
    assert.equal(reads.length, 1);
    // Each object learns its provider ID in the same write as the readiness it goes with: no
    // version has one without the other, and the generation the ID made is the one observed.
    const versions = await f.store.changes(start, { types: [CapiTypes.OpenStackMachine, CapiTypes.Machine] });
    const osms = versions
      .map((e) => e.object)
      .filter((o) => o.kind === 'OpenStackMachine') as OpenStackMachineObject[];
    const machines = versions.map((e) => e.object).filter((o) => o.kind === 'Machine') as MachineObject[];
    assert.deepEqual(
      osms.filter((o) => o.spec.providerID).map((o) => [o.status.ready, o.status.observedGeneration]),
      [[true, osm.metadata.generation]],
    );
    assert.deepEqual(
      machines
        .filter((m) => m.spec.providerID)
        .map((m) => [m.status.initialization?.infrastructureProvisioned, m.status.observedGeneration]),
      [[true, machine.metadata.generation]],
    );
    await deleteAll(f, 'c6', 'c6-w-1');
  } finally {
    await f.close();
  }
});

void test('a new machine creates its port and server without looking them up by name; after a restart that lost their ids, it finds them by name and makes no second', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c9');
    const lookups = () =>
      f.requests.filter(
        (r) => r === 'GET /cloud/network/v2.0/ports' || r === 'GET /cloud/compute/v2.1/servers/detail',
      );
    const before = lookups().length;
    await applyMachine(f, 'c9', 'c9-w-1', { az: 'AZ-1' });
    const active = async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c9-w-1');
      return o?.status.initialization?.provisioned && o.status.resources?.ports?.length ? o : undefined;
    };
    const osm = await f.until('the server to be ACTIVE', active);
    assert.deepEqual(lookups().slice(before), [], 'resolved in the same pass: nothing to look up');

    // The process stops; the writes recording the port and the server were lost.
    await f.manager.stop();
    await f.store.updateStatus({
      ...osm,
      status: { ...osm.status, instanceID: undefined, resources: undefined, initialization: undefined },
    });
    await f.manager.start();
    const again = await f.until('the machine to record its server again', active);
    assert.equal(again.status.instanceID, osm.status.instanceID, 'the same server');
    assert.deepEqual(again.status.resources?.ports, osm.status.resources?.ports, 'the same port');
    assert.deepEqual(
      [...new Set(lookups().slice(before))].sort(),
      ['GET /cloud/compute/v2.1/servers/detail', 'GET /cloud/network/v2.0/ports'],
      'both looked up by name',
    );
    assert.equal((await f.clients.compute.listServers({ name: 'c9-w-1' })).length, 1);
    assert.equal((await f.clients.network.listPorts({ name: 'c9-w-1-0' })).length, 1);
    await deleteAll(f, 'c9', 'c9-w-1');
  } finally {
    await f.close();
  }
});

void test('a control plane machine waiting for Octavia to apply its member polls the member, not its server; it is ready once the member is', async () => {
  const f = await startInfra({ latencyMs: 3000 });
  try {
    await addKeypair(f);
    const osc = await provisionedCluster(f, 'c9');
    await applyMachine(f, 'c9', 'c9-cp-1', { controlPlane: true, az: 'AZ-1' });
    const osm = await f.until('the machine to be ready', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c9-cp-1');
      return o?.status.ready ? o : undefined;
    });
    const pool = osc.status.apiServerLoadBalancer!.poolID!;
    const memberID = osm.status.resources!.loadBalancerMemberID!;
    const member = await f.clients.loadBalancer.getMember(pool, memberID);
    assert.equal(member.provisioningStatus, 'ACTIVE');
    const added = f.requests.indexOf(`POST /cloud/load-balancer/v2/lbaas/pools/${pool}/members`);
    assert.ok(added > 0);
    const after = f.requests.slice(added + 1);
    const polls = after.filter(
      (r) => r === `GET /cloud/load-balancer/v2/lbaas/pools/${pool}/members/${memberID}`,
    );
    const serverReads = after.filter((r) => r === `GET /cloud/compute/v2.1/servers/${osm.status.instanceID}`);
    assert.ok(polls.length >= 2, `the member was polled while Octavia applied it (${polls.length})`);
    // only the pass that found the member applied read the server
    assert.equal(serverReads.length, 1, after.join('\n'));
    // while it waited, the machine said what for
    const waits = (await f.store.changes(0, { types: [CapiTypes.OpenStackMachine] }))
      .map((e) => (e.object as OpenStackMachineObject).status.conditions?.find((c) => c.type === 'Ready'))
      .filter((c) => c?.reason === 'WaitingForLoadBalancer');
    assert.match(
      waits[0]?.message ?? '',
      /^waiting for member c9-cp-1 of load balancer .+ \(PENDING_CREATE\)$/,
    );
  } finally {
    await f.close();
  }
});

void test('a control plane machine whose member Octavia applies quickly is ready soon after, not a full poll interval later', async () => {
  // the fixture polls at most every second; this cloud applies a change in 300 ms
  const f = await startInfra({ latencyMs: 300 });
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c10');
    await applyMachine(f, 'c10', 'c10-cp-1', { controlPlane: true, az: 'AZ-1' });
    const osm = await f.until('the machine to be ready', async () => {
      const o = await f.store.get<OpenStackMachineObject>(
        CapiTypes.OpenStackMachine,
        f.projectId,
        'c10-cp-1',
      );
      return o?.status.ready ? o : undefined;
    });
    // the wait for the member starts when the server is ready and the member is asked for
    const waiting = (await f.store.changes(0, { types: [CapiTypes.OpenStackMachine] }))
      .map((e) =>
        (e.object as OpenStackMachineObject).status.conditions?.find(
          (c) => c.type === 'APIServerIngressReady',
        ),
      )
      .find((c) => c?.reason === 'WaitingForLoadBalancer');
    assert.ok(waiting, 'it waited for its member');
    const ready = osm.status.conditions!.find((c) => c.type === 'Ready')!;
    const waitedMs = Date.parse(ready.lastTransitionTime) - Date.parse(waiting.lastTransitionTime);
    assert.ok(waitedMs >= 300, `not before Octavia applied the member (${waitedMs} ms)`);
    assert.ok(waitedMs < 700, `ready ${waitedMs} ms after its member was added`);
  } finally {
    await f.close();
  }
});

void test('a worker with a boot volume boots from it, and the volume goes with the machine', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c2');
    await applyMachine(f, 'c2', 'c2-w-1', { rootVolume: 20, az: 'AZ-1' });
    const osm = await f.until('the server to be ACTIVE', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c2-w-1');
      return o?.status.initialization?.provisioned ? o : undefined;
    });
    const vol = await f.clients.volume.getVolume(osm.status.resources!.volumeID!);
    assert.equal(vol.sizeGb, 20);
    assert.equal(vol.name, 'c2-w-1-root');
    // A later pass over the running machine asks the cloud for its server only: the port and
    // the volume are attached to it, and the address comes from the server.
    const osmController = f.engine.reconcilers.find((r) => r.name === 'openstackmachine')!;
    const from = f.requests.length;
    await osmController.reconcile(
      { store: f.store, clock: f.clock, log: silentLogger, signal: new AbortController().signal },
      { namespace: f.projectId, name: 'c2-w-1' },
    );
    assert.deepEqual(f.requests.slice(from), [`GET /cloud/compute/v2.1/servers/${osm.status.instanceID}`]);
    const again = await f.store.get<OpenStackMachineObject>(
      CapiTypes.OpenStackMachine,
      f.projectId,
      'c2-w-1',
    );
    assert.deepEqual(again?.status.addresses, osm.status.addresses);
    assert.equal(again?.status.ready, true);
    await deleteAll(f, 'c2', 'c2-w-1');
  } finally {
    await f.close();
  }
});

void test('a server that goes to ERROR is reported with Nova\u2019s fault; a quota refusal stops the machine with the cloud\u2019s text', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    await provisionedCluster(f, 'c3');
    f.cloud.faults.add({
      kind: 'fail',
      operation: 'compute.servers.create',
      count: 1,
      failure: { type: 'error-state', message: 'No valid host was found. ' },
    });
    await applyMachine(f, 'c3', 'c3-w-1');
    const err = await f.until('the server ERROR to be reported', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c3-w-1');
      const c = o?.status.conditions?.find((x) => x.type === 'InstanceReady');
      return c?.reason === 'InstanceStateError' ? c : undefined;
    });
    assert.match(err.message ?? '', /server c3-w-1 is ERROR: No valid host was found/);
    const m = await f.until('the Machine to mirror it', async () => {
      const mm = await f.store.get<MachineObject>(CapiTypes.Machine, f.projectId, 'c3-w-1');
      return mm?.status.conditions?.find(
        (c) => c.type === 'InfrastructureReady' && c.reason === 'InstanceStateError',
      );
    });
    assert.match(m.message ?? '', /No valid host/);

    f.cloud.faults.add({
      kind: 'fail',
      operation: 'compute.servers.create',
      count: 1,
      failure: { type: 'quota' },
    });
    await applyMachine(f, 'c3', 'c3-w-2');
    const quota = await f.until('the quota refusal to be reported', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c3-w-2');
      const c = o?.status.conditions?.find((x) => x.type === 'Ready');
      return c?.reason === 'Failed' ? c : undefined;
    });
    assert.match(quota.message ?? '', /quota/i);
    // Nothing half-made is left once the machines go: no orphan ports.
    await f.store.delete(CapiTypes.Machine, f.projectId, 'c3-w-1');
    await f.store.delete(CapiTypes.Machine, f.projectId, 'c3-w-2');
    await deleteAll(f, 'c3');
  } finally {
    await f.close();
  }
});

void test('two control plane machines leaving the API load balancer at once: the one Octavia refuses while busy waits, then leaves', async () => {
  const f = await startInfra({ latencyMs: 1000 });
  try {
    const osc = await provisionedCluster(f, 'c1');
    const { lb, active } = apiLoadBalancer(f, osc);
    const leaving = (name: string) =>
      ({ metadata: { name }, status: {} }) as unknown as OpenStackMachineObject;
    for (const [name, address] of [
      ['c1-cp-a', '10.6.0.11'],
      ['c1-cp-b', '10.6.0.12'],
    ] as const) {
      await active();
      await f.clients.loadBalancer.createMember(lb.poolID!, { name, address, protocolPort: 6443 });
    }
    await active();
    // both find the load balancer ACTIVE; the second delete then meets Octavia's 409
    const outcomes = await Promise.all([
      removeMember(f.clients, leaving('c1-cp-a'), osc),
      removeMember(f.clients, leaving('c1-cp-b'), osc),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.done),
      [true, false],
    );
    assert.match(outcomes[1].waiting ?? '', /^waiting for load balancer .+ \(busy with another change\)$/);
    await active();
    assert.deepEqual(await removeMember(f.clients, leaving('c1-cp-b'), osc), { done: true });
    await active();
    assert.equal((await f.clients.loadBalancer.listMembers(lb.poolID!)).length, 0);
  } finally {
    await f.close();
  }
});

void test('a control plane machine in the API pool waits for its own member to be applied, not for changes the load balancer makes for other masters', async () => {
  const f = await startInfra({ latencyMs: 1000 });
  try {
    const osc = await provisionedCluster(f, 'c1');
    const { lb, status, active } = apiLoadBalancer(f, osc);
    let a = { metadata: { name: 'c1-cp-a' }, status: {} } as unknown as OpenStackMachineObject;
    const record = async (patch: Partial<OpenStackMachineObject['status']>) => {
      a = { ...a, status: { ...a.status, ...patch } };
    };
    await active();
    // Octavia has not applied the new member yet: the machine waits, naming its member, from the
    // pass that asked for it on
    for (let pass = 0; pass < 2; pass++) {
      const pending = await ensureMember(f.clients, a, osc, '10.6.0.11', record);
      assert.equal(pending.done, false);
      assert.match(
        pending.done ? '' : pending.waiting,
        /^waiting for member c1-cp-a of load balancer .+ \(PENDING_CREATE\)$/,
      );
    }
    const memberID = a.status.resources?.loadBalancerMemberID;
    assert.ok(memberID, 'the member is recorded at once');
    await active();
    assert.deepEqual(await ensureMember(f.clients, a, osc, '10.6.0.11', record), { done: true });
    // another master joining puts the load balancer in PENDING_UPDATE; the first one stays done
    await f.clients.loadBalancer.createMember(lb.poolID!, {
      name: 'c1-cp-b',
      address: '10.6.0.12',
      protocolPort: 6443,
    });
    assert.equal(await status(), 'PENDING_UPDATE');
    assert.deepEqual(await ensureMember(f.clients, a, osc, '10.6.0.11', record), { done: true });
    assert.equal(a.status.resources?.loadBalancerMemberID, memberID, 'no second member');
    await active();
    assert.equal((await f.clients.loadBalancer.listMembers(lb.poolID!)).length, 2);
  } finally {
    await f.close();
  }
});

void test('a control plane machine joins the API pool with one request when the load balancer is free; while it is busy it waits, and a member an earlier try made is taken up, not made twice', async () => {
  const f = await startInfra({ latencyMs: 1000 });
  try {
    const osc = await provisionedCluster(f, 'c1');
    const { lb, status, active } = apiLoadBalancer(f, osc);
    const machine = (name: string) => {
      const m = { o: { metadata: { name }, status: {} } as unknown as OpenStackMachineObject };
      const record = async (patch: Partial<OpenStackMachineObject['status']>) => {
        m.o = { ...m.o, status: { ...m.o.status, ...patch } };
      };
      return { m, record };
    };
    await active();
    const a = machine('c1-cp-a');
    let from = f.requests.length;
    assert.equal((await ensureMember(f.clients, a.m.o, osc, '10.6.0.11', a.record)).done, false);
    assert.deepEqual(f.requests.slice(from), [
      `POST /cloud/load-balancer/v2/lbaas/pools/${lb.poolID}/members`,
    ]);
    assert.ok(a.m.o.status.resources?.loadBalancerMemberID, 'recorded at once');
    // the load balancer is PENDING_UPDATE with a's member: b is refused, reads the pool, waits
    assert.equal(await status(), 'PENDING_UPDATE');
    const b = machine('c1-cp-b');
    const refused = await ensureMember(f.clients, b.m.o, osc, '10.6.0.12', b.record);
    assert.equal(refused.done, false);
    assert.match(refused.done ? '' : refused.waiting, /\(busy with another change\)$/);
    assert.equal(b.m.o.status.resources?.loadBalancerMemberID, undefined);
    await active();
    assert.equal((await ensureMember(f.clients, b.m.o, osc, '10.6.0.12', b.record)).done, false);
    await active();
    assert.deepEqual(await ensureMember(f.clients, b.m.o, osc, '10.6.0.12', b.record), { done: true });
    // c's member was made by a try whose record was lost: the add is refused as a duplicate and
    // the member found in the pool is recorded
    await active();
    const made = await f.clients.loadBalancer.createMember(lb.poolID!, {
      name: 'c1-cp-c',
      address: '10.6.0.13',
      protocolPort: 6443,
    });
    await active();
    const c = machine('c1-cp-c');
    from = f.requests.length;
    assert.deepEqual(await ensureMember(f.clients, c.m.o, osc, '10.6.0.13', c.record), { done: true });
    assert.equal(c.m.o.status.resources?.loadBalancerMemberID, made.id);
    assert.equal(f.requests.length - from, 2, 'the refused add and one read of the pool');
    assert.equal((await f.clients.loadBalancer.listMembers(lb.poolID!)).length, 3);
  } finally {
    await f.close();
  }
});

void test('three control plane machines built together look their image and flavor up once; when their cluster is deleted they do not leave the load balancer one by one, and each server is looked up by name once, after it is gone', async () => {
  const f = await startInfra({ latencyMs: 1000 });
  try {
    await addKeypair(f);
    const osc = await provisionedCluster(f, 'c4');
    const names = ['c4-cp-1', 'c4-cp-2', 'c4-cp-3'];
    for (const [i, name] of names.entries())
      await applyMachine(f, 'c4', name, { controlPlane: true, az: `AZ-${i + 1}` });
    await f.until('all three in the API load balancer', async () => {
      const provisioned = await Promise.all(
        names.map(async (n) => {
          const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, n);
          return o?.status.initialization?.provisioned === true;
        }),
      );
      return provisioned.every(Boolean) || undefined;
    });
    assert.equal(
      (await f.clients.loadBalancer.listMembers(osc.status.apiServerLoadBalancer!.poolID!)).length,
      3,
    );

    // built together, the three resolved their image and flavor with one lookup each
    assert.equal(f.requests.filter((r) => r === 'GET /cloud/image/v2/images').length, 1);
    assert.equal(f.requests.filter((r) => r === 'GET /cloud/compute/v2.1/flavors/detail').length, 1);

    let seen = -1;
    await f.until('the machines to be done with the cloud', async () => {
      const quiet = f.requests.length === seen;
      seen = f.requests.length;
      return quiet || undefined;
    });

    const from = f.requests.length;
    await deleteAll(f, 'c4', ...names);
    const during = f.requests.slice(from);
    // the members went with the load balancer (cascade): not listed, checked or deleted one by one
    assert.deepEqual(
      during.filter((r) => /\/members/.test(r)),
      [],
    );
    assert.equal(during.filter((r) => /^DELETE .*\/loadbalancers\/[^/]+$/.test(r)).length, 1);
    assert.equal(during.filter((r) => r.startsWith('DELETE /cloud/compute/v2.1/servers/')).length, 3);
    // by name once per machine, when its recorded server no longer exists
    assert.equal(during.filter((r) => r === 'GET /cloud/compute/v2.1/servers/detail').length, 3);
  } finally {
    await f.close();
  }
});

void test('a cluster\u2019s reference checks and its machines share one flavor and one image lookup; a missing flavor is asked for again', async () => {
  const f = await startInfra();
  try {
    const osc = await provisionedCluster(f, 'c8');
    const lookups = new Lookups(f.clock);
    const cluster = {
      metadata: { namespace: f.projectId, name: 'c8' },
      spec: { labels: {} },
    } as unknown as MagnumClusterObject;
    const template = {
      spec: { imageId: 'ubuntu-22.04-kube', flavorId: 'm1.small', masterFlavorId: 'm1.small' },
    } as unknown as ClusterTemplateObject;
    const group = (name: string, role: string, flavorId?: string) =>
      ({ spec: { name, role, labels: {}, ...(flavorId ? { flavorId } : {}) } }) as unknown as NodeGroupObject;
    const lists = () =>
      f.requests.filter(
        (r) => r === 'GET /cloud/compute/v2.1/flavors/detail' || r === 'GET /cloud/image/v2/images',
      );
    const from = lists().length;
    const groups = [group('default-master', 'master'), group('default-worker', 'worker')];
    assert.equal(await checkReferences(f.clients, lookups, cluster, template, groups), undefined);
    assert.equal(lists().length - from, 2, 'one flavor list and one image list');
    // the machines resolve through the same lookups: no further lists
    const osm = {
      metadata: { namespace: f.projectId, name: 'c8-m' },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04-kube' } } },
      status: {},
    } as unknown as OpenStackMachineObject;
    const machine = { metadata: { labels: {} } } as unknown as MachineObject;
    const { resolved } = await resolve(f.clients, lookups, osm, machine, osc, async () => {}, false);
    assert.ok(resolved.flavorID && resolved.imageID);
    assert.equal(lists().length - from, 2);
    // a miss is not remembered: asked again, and reported
    const missing = [group('default-master', 'master'), group('big', 'worker', 'm9.huge')];
    for (let i = 0; i < 2; i++) {
      assert.match(
        (await checkReferences(f.clients, lookups, cluster, template, missing)) ?? '',
        /Unable to find flavor m9\.huge \(node group big\)/,
      );
    }
    assert.equal(lists().length - from, 4);
  } finally {
    await f.close();
  }
});

void test('a new machine waiting for its cluster network has its finalizer and the reason it waits in one write; the finalizer is stored before its first cloud request', async () => {
  const f = await startInfra();
  try {
    await addKeypair(f);
    // a Cluster whose OpenStackCluster does not exist yet: its machines wait for the network
    await f.store.create({
      apiVersion: CAPI_API_VERSION,
      kind: 'Cluster',
      metadata: { name: 'c20', namespace: f.projectId },
      spec: {
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'OpenStackCluster',
          name: 'c20',
        },
      },
    });
    const start = await f.store.currentRevision();
    await applyMachine(f, 'c20', 'c20-w-1', { az: 'AZ-1' });
    const waiting = await f.until('the machine to wait for the network', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c20-w-1');
      return o?.status.conditions?.some((c) => c.reason === 'WaitingForInfrastructure') ? o : undefined;
    });
    const versions = async () =>
      (await f.store.changes(start, { types: [CapiTypes.OpenStackMachine] })).map(
        (e) => e.object as OpenStackMachineObject,
      );
    const first = await versions();
    // created, adopted by its Machine, then the machine's own first pass: one write
    assert.equal(first.length, 3);
    assert.equal(first[1]!.metadata.ownerReferences[0]?.kind, 'Machine');
    assert.deepEqual(first[1]!.metadata.finalizers, []);
    assert.deepEqual(first[2]!.metadata.finalizers, ['openstackmachine.infrastructure.cluster.x-k8s.io']);
    assert.equal(first[2]!.metadata.resourceVersion, waiting.metadata.resourceVersion);

    // A second machine, once the network is there: the store has its finalizer whenever the
    // cloud is asked to make something for it.
    const atCloudRequest: Promise<OpenStackMachineObject | undefined>[] = [];
    const push = f.requests.push.bind(f.requests);
    f.requests.push = (...items: string[]) => {
      if (items.some((r) => r.startsWith('POST ')))
        atCloudRequest.push(f.store.get(CapiTypes.OpenStackMachine, f.projectId, 'c20-w-2'));
      return push(...items);
    };
    await f.store.create({
      apiVersion: INFRA_API_VERSION,
      kind: 'OpenStackCluster',
      metadata: { name: 'c20', namespace: f.projectId },
      spec: {
        managedSubnets: [{ cidr: '10.6.0.0/24' }],
        externalNetwork: { filter: { name: 'public' } },
        apiServerLoadBalancer: { enabled: true },
      },
    });
    await f.until('the first machine to be ACTIVE', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c20-w-1');
      return o?.status.initialization?.provisioned;
    });
    atCloudRequest.length = 0;
    await applyMachine(f, 'c20', 'c20-w-2', { az: 'AZ-1' });
    await f.until('the second server to be ACTIVE', async () => {
      const o = await f.store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, f.projectId, 'c20-w-2');
      return o?.status.initialization?.provisioned;
    });
    const seen = await Promise.all(atCloudRequest);
    assert.ok(seen.length >= 2, 'a port and a server were asked for');
    for (const o of seen)
      assert.deepEqual(o?.metadata.finalizers, ['openstackmachine.infrastructure.cluster.x-k8s.io']);
    await deleteAll(f, 'c20', 'c20-w-1', 'c20-w-2');
  } finally {
    await f.close();
  }
});
