import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clusterVerdict,
  createTimedOut,
  groupVerdict,
  healthOf,
  infraVerdict,
  type GroupObservation,
} from '../../src/controllers/magnum-driver/magnum-status.ts';
import { magnumStatus, type OpenStackClusterObject } from '../../src/domain/index.ts';
import { machine, READY } from './builders.ts';

const owner = (o: Partial<NonNullable<GroupObservation['owner']>> = {}) => ({
  generation: 2,
  observedGeneration: 2,
  specReplicas: 3,
  replicas: 3,
  readyReplicas: 3,
  upToDateReplicas: 3,
  specVersion: 'v1.31.4',
  templateCurrent: true,
  ...o,
});
const ready = (n: number) =>
  Array.from({ length: n }, (_, i) => machine(`m${i}`, { nodeRef: `m${i}`, conditions: READY }));
const group = (o: Partial<GroupObservation>): GroupObservation => ({
  name: 'default-master',
  role: 'master',
  desiredReplicas: 3,
  desiredVersion: 'v1.31.4',
  owner: owner(),
  machines: ready(3),
  ...o,
});

const cases: {
  name: string;
  g: GroupObservation;
  state: 'Complete' | 'InProgress' | 'Failed';
  reason?: RegExp;
}[] = [
  { name: 'all machines ready and up to date', g: group({}), state: 'Complete' },
  {
    name: 'owner not created yet',
    g: group({ owner: undefined, machines: [] }),
    state: 'InProgress',
    reason: /creating control plane/,
  },
  {
    name: 'owner has not seen its new spec',
    g: group({ owner: owner({ observedGeneration: 1 }) }),
    state: 'InProgress',
  },
  {
    name: 'two of three ready',
    g: group({ owner: owner({ readyReplicas: 2 }), machines: [...ready(2), machine('m2')] }),
    state: 'InProgress',
    reason: /2 of 3 machines ready/,
  },
  {
    name: 'a server in ERROR shows the cloud message while a replacement is possible',
    g: group({
      owner: owner({ readyReplicas: 2 }),
      machines: [
        ...ready(2),
        machine('m9', {
          conditions: [
            {
              type: 'InfrastructureReady',
              status: 'False',
              reason: 'InstanceStateError',
              message: 'server m9 is ERROR: No valid host was found',
            },
          ],
        }),
      ],
    }),
    state: 'InProgress',
    reason: /machine m9: server m9 is ERROR: No valid host was found/,
  },
  {
    name: 'quota exceeded is terminal, with the cloud text',
    g: group({
      machines: [
        ...ready(2),
        machine('m9', {
          conditions: [
            {
              type: 'InfrastructureReady',
              status: 'False',
              reason: 'Failed',
              message:
                'compute quota exceeded: Quota exceeded for cores: Requested 2, but already used 20 of 20 cores',
            },
          ],
        }),
      ],
    }),
    state: 'Failed',
    reason: /Quota exceeded for cores/,
  },
  {
    name: 'replacements used up',
    g: group({
      exhaustedRemediation: 'machine m9: server m9 is ERROR: No valid host was found (2 server(s) failed)',
    }),
    state: 'Failed',
    reason: /No valid host/,
  },
  {
    name: 'version not yet rolled',
    g: group({ owner: owner({ specVersion: 'v1.30.2', upToDateReplicas: 0 }) }),
    state: 'InProgress',
    reason: /0 of 3 up to date/,
  },
  {
    name: 'template (flavor) changed but not rolled',
    g: group({ owner: owner({ templateCurrent: false }) }),
    state: 'InProgress',
  },
  {
    name: 'a machine still being removed',
    g: group({ machines: [...ready(3), machine('old', { deleting: true })] }),
    state: 'InProgress',
    reason: /1 being removed/,
  },
  {
    name: 'worker group scaling up',
    g: group({ name: 'ng2', role: 'worker', desiredReplicas: 5, owner: owner({ specReplicas: 5 }) }),
    state: 'InProgress',
    reason: /node group ng2: 3 of 5 machines ready/,
  },
];

for (const c of cases) {
  void test(`node group verdict: ${c.name} → ${c.state}`, () => {
    const v = groupVerdict(c.g);
    assert.equal(v.state, c.state, v.reason);
    if (c.reason) assert.match(v.reason, c.reason);
  });
}

const osc = (
  conditions: { type: string; status: 'True' | 'False'; reason?: string; message?: string }[],
  provisioned = false,
) =>
  ({
    status: {
      initialization: { provisioned },
      conditions: conditions.map((c) => ({ ...c, lastTransitionTime: '2026-01-01T00:00:00Z' })),
    },
  }) as unknown as OpenStackClusterObject;

void test('infrastructure verdicts: waiting for the load balancer, failed with the cloud message, ready', () => {
  const waiting = infraVerdict(
    osc([
      { type: 'NetworkReady', status: 'True' },
      { type: 'RouterReady', status: 'True' },
      { type: 'SecurityGroupsReady', status: 'True' },
      {
        type: 'APIEndpointReady',
        status: 'False',
        reason: 'WaitingForLoadBalancer',
        message: 'waiting for load balancer k8s-lb (PENDING_CREATE)',
      },
    ]),
    undefined,
  );
  assert.deepEqual(waiting, {
    state: 'InProgress',
    reason: 'waiting for load balancer k8s-lb (PENDING_CREATE)',
  });
  const failed = infraVerdict(
    osc([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Failed',
        message: "network quota exceeded: Quota exceeded for resources: ['network'].",
      },
    ]),
    undefined,
  );
  assert.equal(failed.state, 'Failed');
  assert.match(failed.reason, /Quota exceeded for resources/);
  const done = infraVerdict(osc([{ type: 'Ready', status: 'True' }], true), {
    spec: { controlPlaneEndpoint: { host: '172.24.4.10', port: 6443 } },
  } as never);
  assert.equal(done.state, 'Complete');
});

void test('cluster verdict: failed groups win, then infrastructure progress, then pending groups', () => {
  const ok = { state: 'Complete' as const, reason: 'ok' };
  const prog = { state: 'InProgress' as const, reason: 'node group ng2: 1 of 2 machines ready' };
  const bad = { state: 'Failed' as const, reason: 'machine x: quota' };
  assert.equal(clusterVerdict(ok, [{ name: 'a', verdict: ok }]).state, 'Complete');
  assert.deepEqual(
    clusterVerdict(ok, [
      { name: 'a', verdict: ok },
      { name: 'b', verdict: prog },
    ]),
    prog,
  );
  assert.deepEqual(clusterVerdict(prog, [{ name: 'a', verdict: bad }]), {
    state: 'Failed',
    reason: 'machine x: quota',
  });
});

void test('create_timeout turns a stalled create into a failure that says what it waited for', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(createTimedOut(t0, 60, t0 + 59 * 60_000, 'x'), undefined);
  assert.equal(
    createTimedOut(t0, 60, t0 + 60 * 60_000, 'control plane: 2 of 3 machines ready'),
    'Timed out after 60 minutes waiting for the cluster to be created: control plane: 2 of 3 machines ready',
  );
});

void test('health is HEALTHY only with the API available and every node Ready', () => {
  const ms = ready(2);
  assert.deepEqual(healthOf(true, ms), {
    status: 'HEALTHY',
    reason: { api: 'ok', 'm0.Ready': 'True', 'm1.Ready': 'True' },
  });
  const sick = [...ms, machine('m2', { nodeRef: 'm2', conditions: [{ type: 'Ready', status: 'False' }] })];
  assert.equal(healthOf(true, sick).status, 'UNHEALTHY');
  assert.equal(healthOf(false, ms).reason.api, 'nok');
});

const statusCases: {
  gen: number;
  observed?: number;
  action: 'CREATE' | 'UPDATE';
  obsAction?: 'CREATE' | 'UPDATE';
  outcome?: 'Complete' | 'Failed';
  deleting?: boolean;
  want: string;
}[] = [
  { gen: 1, action: 'CREATE', want: 'CREATE_IN_PROGRESS' },
  {
    gen: 1,
    observed: 1,
    action: 'CREATE',
    obsAction: 'CREATE',
    outcome: 'Complete',
    want: 'CREATE_COMPLETE',
  },
  { gen: 1, observed: 1, action: 'CREATE', obsAction: 'CREATE', outcome: 'Failed', want: 'CREATE_FAILED' },
  {
    gen: 2,
    observed: 1,
    action: 'UPDATE',
    obsAction: 'CREATE',
    outcome: 'Complete',
    want: 'UPDATE_IN_PROGRESS',
  },
  {
    gen: 2,
    observed: 2,
    action: 'UPDATE',
    obsAction: 'UPDATE',
    outcome: 'Complete',
    want: 'UPDATE_COMPLETE',
  },
  { gen: 2, observed: 2, action: 'UPDATE', obsAction: 'UPDATE', outcome: 'Failed', want: 'UPDATE_FAILED' },
  { gen: 2, observed: 1, action: 'UPDATE', deleting: true, want: 'DELETE_IN_PROGRESS' },
];
for (const c of statusCases) {
  void test(`the driver's bookkeeping reads as ${c.want} (generation ${c.gen}, observed ${c.observed ?? 0}, ${c.outcome ?? 'no outcome'})`, () => {
    assert.equal(
      magnumStatus({
        metadata: { generation: c.gen, ...(c.deleting ? { deletionTimestamp: 'x' } : {}) },
        spec: { action: c.action },
        status: {
          ...(c.observed ? { observedGeneration: c.observed } : {}),
          ...(c.obsAction ? { observedAction: c.obsAction } : {}),
          ...(c.outcome ? { outcome: c.outcome } : {}),
        },
      }),
      c.want,
    );
  });
}
