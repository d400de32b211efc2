import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  controlPlaneForCluster,
  deletionView,
  deploymentForCluster,
  healthCheckForMagnum,
  machineForHealthChecks,
  machineForOwners,
  oscForCluster,
  oscForMagnum,
  specViewExcept,
} from '../../src/controllers/common/views.ts';
import type { Env } from '../../src/controllers/common/env.ts';
import { machineHealthCheckReconciler } from '../../src/controllers/machine-health-check/mhc-controller.ts';
import {
  CapiTypes,
  sameJson,
  type ApiObject,
  type Condition,
  type MachineHealthCheckObject,
} from '../../src/domain/index.ts';
import { machine, READY } from './builders.ts';

// A view decides which writes of a watched object wake a controller. Too narrow and the
// controller misses what it judges (a machine is never remediated, a failure is never reported);
// too wide and every step of every machine wakes it again.

const up = machine('m1', { nodeRef: 'm1', conditions: READY, ip: '10.0.0.4' });

function withConditions(m: ApiObject, change: (c: Condition[]) => Condition[]): ApiObject {
  const status = m.status as { conditions: Condition[] };
  return { ...m, status: { ...status, conditions: change(status.conditions) } };
}

function setCondition(m: ApiObject, next: Partial<Condition> & { type: string }): ApiObject {
  return withConditions(m, (cs) => [
    ...cs.filter((c) => c.type !== next.type),
    { status: 'True', lastTransitionTime: '2026-01-01T00:05:00.000Z', ...next },
  ]);
}

const wakes = (view: (o: ApiObject) => unknown, before: ApiObject, after: ApiObject) =>
  !sameJson(view(before), view(after));

void test('a health check is not woken by the steps a machine goes through while it comes up', () => {
  const waiting = (message: string) =>
    setCondition(machine('m1'), { type: 'InfrastructureReady', status: 'False', message });
  const steps: [string, ApiObject, ApiObject][] = [
    ['its phase', up, { ...up, status: { ...up.status, phase: 'Running' } }],
    ['its addresses', up, { ...up, status: { ...up.status, addresses: [] } }],
    [
      'its spec (provider ID, bootstrap secret)',
      up,
      {
        ...up,
        metadata: { ...up.metadata, generation: 2 },
        spec: { ...up.spec, providerID: 'openstack://x' },
      },
    ],
    ['its own verdict written back', up, setCondition(up, { type: 'HealthCheckSucceeded' })],
    ['a waiting message', waiting('waiting for the network'), waiting('waiting for the port')],
  ];
  for (const [what, before, after] of steps)
    assert.equal(wakes(machineForHealthChecks, before, after), false, what);
});

void test('a health check is woken by what it judges: node readiness, the node, a server in ERROR, remediation marks, deletion', () => {
  const judged: [string, ApiObject, ApiObject][] = [
    [
      'the node going NotReady',
      up,
      setCondition(up, { type: 'NodeReady', status: 'False', reason: 'KubeletNotReady' }),
    ],
    [
      'the node being deleted',
      up,
      setCondition(up, { type: 'NodeReady', status: 'Unknown', reason: 'NodeDeleted' }),
    ],
    ['the node joining', machine('m1', { conditions: READY }), up],
    [
      'the server going to ERROR',
      up,
      setCondition(up, {
        type: 'InfrastructureReady',
        status: 'False',
        reason: 'InstanceStateError',
        message: 'No valid host was found',
      }),
    ],
    [
      'the remediation annotation',
      up,
      { ...up, metadata: { ...up.metadata, annotations: { 'cluster.x-k8s.io/remediate-machine': '' } } },
    ],
    ['deletion', up, { ...up, metadata: { ...up.metadata, deletionTimestamp: '2026-01-01T02:00:00.000Z' } }],
  ];
  for (const [what, before, after] of judged)
    assert.equal(wakes(machineForHealthChecks, before, after), true, what);
});

void test('the owners of a machine are not woken by the health check’s verdict, but are by a remediation request', () => {
  assert.equal(wakes(machineForOwners, up, setCondition(up, { type: 'HealthCheckSucceeded' })), false);
  assert.equal(
    wakes(
      machineForOwners,
      up,
      setCondition(up, { type: 'OwnerRemediated', status: 'False', reason: 'WaitingForRemediation' }),
    ),
    true,
  );
});

void test('the Magnum driver hears of a health check’s remediations, not of its counters', () => {
  const check: ApiObject = {
    ...up,
    kind: 'MachineHealthCheck',
    spec: { clusterName: 'c1' },
    status: { expectedMachines: 3, currentHealthy: 3, remediations: [] },
  };
  const counted = { ...check, status: { expectedMachines: 3, currentHealthy: 2, remediations: [] } };
  assert.equal(wakes(healthCheckForMagnum, check, counted), false);
  const remediated = {
    ...counted,
    status: {
      ...counted.status,
      remediations: [{ machine: 'm1', reason: 'InstanceStateError', message: 'No valid host', time: 'now' }],
    },
  };
  assert.equal(wakes(healthCheckForMagnum, counted, remediated), true);
});

void test('a machine wakes the health checks that select it, and one that still counts it after its labels moved it out', async () => {
  const check = (name: string, group: string, targets: string[] = []): MachineHealthCheckObject =>
    ({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineHealthCheck',
      metadata: { name, namespace: 'p1' },
      spec: { clusterName: 'c1', selector: { matchLabels: { group } } },
      status: { targets },
    }) as unknown as MachineHealthCheckObject;
  const checks = [
    check('c1-workers', 'workers', ['m1']),
    check('c1-gpu', 'gpu'),
    check('c1-masters', 'masters'),
  ];
  const env = {
    cache: { listByCluster: async () => checks },
    settings: { coalesceMs: 0 },
  } as unknown as Env;
  const map = machineHealthCheckReconciler(env).watches!.find((w) => w.type === CapiTypes.Machine)!.map;
  const names = async (labels: Record<string, string>) =>
    (await map(machine('m1', { labels }))).map((r) => r.name).sort();
  assert.deepEqual(await names({ group: 'workers' }), ['c1-workers']);
  // relabelled into the gpu group: the gpu check picks it up, the workers check lets it go
  assert.deepEqual(await names({ group: 'gpu' }), ['c1-gpu', 'c1-workers']);
});

void test('a machine is not woken by the provider ID and data Secret name it copies into its own spec, but is by any other spec change', () => {
  const view = specViewExcept('providerID', 'bootstrap.dataSecretName');
  const m = machine('m2', {}) as ApiObject & { spec: Record<string, unknown> };
  const bootstrap = (m.spec.bootstrap ?? {}) as Record<string, unknown>;
  const copied = {
    ...m,
    spec: {
      ...m.spec,
      providerID: 'openstack://RegionOne/7c1e',
      bootstrap: { ...bootstrap, dataSecretName: 'm2-bootstrap' },
    },
    metadata: { ...m.metadata, generation: m.metadata.generation + 1 },
  };
  assert.equal(wakes(view, m, copied), false);
  // the rest of the spec, and the rest of the nested object, still count
  assert.equal(wakes(view, copied, { ...copied, spec: { ...copied.spec, version: 'v1.32.5' } }), true);
  assert.equal(
    wakes(view, copied, {
      ...copied,
      spec: {
        ...copied.spec,
        bootstrap: { ...copied.spec.bootstrap, configRef: { kind: 'KubeadmConfig', name: 'other' } },
      },
    }),
    true,
  );
  assert.equal(
    wakes(view, m, { ...m, metadata: { ...m.metadata, deletionTimestamp: '2026-01-01T00:09:00.000Z' } }),
    true,
  );
  assert.equal(wakes(view, m, { ...m, metadata: { ...m.metadata, labels: { role: 'x' } } }), true);
  // the object read is not changed by taking its view
  assert.equal(copied.spec.providerID, 'openstack://RegionOne/7c1e');
});

void test('a reader waiting for machines to go is woken by a deletion only', () => {
  const m = machine('m3', { nodeRef: 'm3', conditions: READY });
  assert.equal(
    wakes(deletionView, m, setCondition(m, { type: 'Ready', status: 'False', reason: 'X' })),
    false,
  );
  assert.equal(
    wakes(deletionView, m, { ...m, spec: { ...(m.spec as object), providerID: 'openstack://RegionOne/1' } }),
    false,
  );
  assert.equal(
    wakes(deletionView, m, {
      ...m,
      metadata: { ...m.metadata, deletionTimestamp: '2026-01-01T00:09:00.000Z' },
    }),
    true,
  );
});

void test('a Cluster is not woken by the IDs its OpenStackCluster records while it builds, but is by what it mirrors', () => {
  const building: ApiObject = {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'OpenStackCluster',
    metadata: childMetadata({ 'cluster.x-k8s.io/cluster-name': 'c1' }),
    spec: { apiServerLoadBalancer: { enabled: true } },
    status: {
      network: { id: 'n1' },
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'Provisioning',
          message: 'waiting for the load balancer',
          lastTransitionTime: '2026-01-01T00:00:00.000Z',
        },
      ],
    },
  };
  const status = building.status;
  const quiet: [string, ApiObject][] = [
    ['a router', { ...building, status: { ...status, router: { id: 'r1' } } }],
    ['a load balancer ID', { ...building, status: { ...status, apiServerLoadBalancer: { id: 'lb1' } } }],
  ];
  for (const [what, after] of quiet) {
    assert.equal(wakes(oscForCluster, building, after), false, `Cluster: ${what}`);
    assert.equal(wakes(oscForMagnum, building, after), false, `Magnum: ${what}`);
  }
  const loud: [string, ApiObject][] = [
    ['its readiness', setCondition(building, { type: 'Ready', status: 'True' })],
    [
      'a new waiting message',
      setCondition(building, { type: 'Ready', status: 'False', message: 'waiting for the floating IP' }),
    ],
    ['provisioned', { ...building, status: { ...status, initialization: { provisioned: true } } }],
    [
      'the endpoint in its spec',
      {
        ...building,
        metadata: { ...building.metadata, generation: 2 },
        spec: { controlPlaneEndpoint: { host: '172.24.0.9', port: 6443 } },
      },
    ],
    [
      'an adoption',
      {
        ...building,
        metadata: {
          ...building.metadata,
          ownerReferences: [
            { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c1', uid: 'c' },
          ],
        },
      },
    ],
  ];
  for (const [what, after] of loud) {
    assert.equal(wakes(oscForCluster, building, after), true, `Cluster: ${what}`);
    assert.equal(wakes(oscForMagnum, building, after), true, `Magnum: ${what}`);
  }
  // the Cluster spreads its machines over the failure domains; Magnum does not read them
  const failureDomains = { ...building, status: { ...status, failureDomains: [{ name: 'AZ-1' }] } };
  assert.equal(wakes(oscForCluster, building, failureDomains), true, 'Cluster: failure domains');
  assert.equal(wakes(oscForMagnum, building, failureDomains), false, 'Magnum: failure domains');
  // the Magnum driver also reports the steps of the build, the address and the deletion
  const magnumOnly: [string, ApiObject][] = [
    ['a step of the build', setCondition(building, { type: 'NetworkReady', status: 'True' })],
    [
      'the address',
      { ...building, status: { ...status, apiServerLoadBalancer: { id: 'lb1', ip: '172.24.0.9' } } },
    ],
    [
      'its deletion',
      setCondition(building, { type: 'Deleting', status: 'True', message: 'deleting the load balancer' }),
    ],
  ];
  for (const [what, after] of magnumOnly)
    assert.equal(wakes(oscForMagnum, building, after), true, `Magnum: ${what}`);
});

void test('a Cluster is woken by the control plane and deployment counters and availability it reports, not by their other conditions', () => {
  const base = (kind: string, status: Record<string, unknown>): ApiObject => ({
    apiVersion: 'x/v1',
    kind,
    metadata: childMetadata({}),
    spec: { replicas: 3 },
    status,
  });
  const cp = base('KubeadmControlPlane', {
    replicas: 1,
    readyReplicas: 0,
    conditions: [
      {
        type: 'Available',
        status: 'False',
        reason: 'NotAvailable',
        message: '0 of 3',
        lastTransitionTime: '2026-01-01T00:00:00.000Z',
      },
    ],
  });
  const cpStatus = cp.status as object;
  expectWakes(controlPlaneForCluster, cp, [
    ['another condition', setCondition(cp, { type: 'MachinesReady', status: 'False' }), false],
    ['a ready replica', { ...cp, status: { ...cpStatus, readyReplicas: 1 } }, true],
    [
      'initialized',
      { ...cp, status: { ...cpStatus, initialization: { controlPlaneInitialized: true } } },
      true,
    ],
    ['available', setCondition(cp, { type: 'Available', status: 'True' }), true],
    ['a resize', { ...cp, metadata: { ...cp.metadata, generation: 2 }, spec: { replicas: 5 } }, true],
  ]);
  const md = base('MachineDeployment', { availableReplicas: 1, conditions: [] });
  const mdStatus = md.status as object;
  expectWakes(deploymentForCluster, md, [
    ['another condition', setCondition(md, { type: 'MachineSetReady', status: 'False' }), false],
    ['an available replica', { ...md, status: { ...mdStatus, availableReplicas: 2 } }, true],
    ['an up-to-date replica', { ...md, status: { ...mdStatus, upToDateReplicas: 2 } }, true],
    ['available', setCondition(md, { type: 'Available', status: 'True' }), true],
  ]);
});

/** The metadata of a cluster's child object `c1` in project `p1`, at its first generation. */
function childMetadata(labels: Record<string, string>): ApiObject['metadata'] {
  return {
    name: 'c1',
    namespace: 'p1',
    uid: 'u1',
    resourceVersion: '5',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00.000Z',
    labels,
    annotations: {},
    ownerReferences: [],
    finalizers: [],
  };
}

/** Each change of `before` wakes a reader with `view`, or does not, as its row says. */
function expectWakes(
  view: (o: ApiObject) => unknown,
  before: ApiObject,
  rows: [string, ApiObject, boolean][],
): void {
  for (const [what, after, woken] of rows) assert.equal(wakes(view, before, after), woken, what);
}
