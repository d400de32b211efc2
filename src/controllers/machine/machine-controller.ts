import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  isConditionTrue,
  type ApiObject,
  type MachineObject,
  type MachineStatus,
} from '../../domain/index.ts';
import { buildConditions, falseCondition, trueCondition, type ConditionInput } from '../common/conditions.ts';
import { getCapiCluster, isPaused, type Env } from '../common/env.ts';
import type { WorkloadNode } from '../deps.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { iso, writeObjectAndStatus } from '../common/writes.ts';
import { reconcileMachineDelete } from './machine-delete.ts';
import {
  observeBootstrap,
  observeInfrastructure,
  observeNode,
  type MachineObservation,
} from './machine-phases.ts';
import { machinePhase } from './machine-status.ts';
import { clusterForMembers, mirroredView, specViewExcept } from '../common/views.ts';

/** Conditions on a Machine written by others (health checks), kept across reconciles. */
const FOREIGN_CONDITIONS = [
  CapiConditions.HealthCheckSucceeded,
  CapiConditions.OwnerRemediated,
  CapiConditions.UpToDate,
];

/**
 * The Machine controller: ties a Machine to its bootstrap config and its OpenStackMachine,
 * learns the provider ID and addresses, finds the node that joined the workload cluster
 * (`status.nodeRef`, which makes the Machine Running), mirrors its readiness, and deletes in
 * order (drain, server, bootstrap, node).
 */
export function machineReconciler(env: Env): Reconciler {
  return {
    name: 'machine',
    // its own status is derived from other objects each time, and the provider ID and data Secret
    // name it copies into its spec are written by a pass that goes on to write that status: none
    // of its own writes needs a second pass
    view: specViewExcept('providerID', 'bootstrap.dataSecretName'),
    type: CapiTypes.Machine,
    watches: [
      {
        type: CapiTypes.KubeadmConfig,
        map: ownedBy('Machine'),
        view: mirroredView(['dataSecretName', 'initialization']),
      },
      {
        type: CapiTypes.OpenStackMachine,
        map: ownedBy('Machine'),
        view: mirroredView(['ready', 'initialization', 'addresses', 'failureDomain']),
      },
      {
        type: CapiTypes.Cluster,
        view: clusterForMembers,
        map: async (obj: ApiObject) =>
          (
            await env.cache.listByCluster<MachineObject>(
              CapiTypes.Machine,
              obj.metadata.namespace,
              obj.metadata.name,
            )
          ).map(refOf),
      },
    ],
    // a node that joins, becomes ready or changes version wakes its own machine
    sources: [
      (enqueue) =>
        env.nodes.onNodeChange((cluster, node) => {
          void machinesOfNode(env, cluster, node).then(
            (refs) => refs.forEach(enqueue),
            () => undefined,
          );
        }),
    ],
    reconcile: (ctx, ref) => reconcileMachine(env, ctx, ref),
  };
}

/** The machines of `cluster` a node belongs to: by provider ID, or as the node they recorded. */
async function machinesOfNode(
  env: Env,
  cluster: { namespace: string; name: string },
  node: WorkloadNode,
): Promise<ObjectRef[]> {
  const providerID = node.spec?.providerID;
  const machines = await env.cache.listByCluster<MachineObject>(
    CapiTypes.Machine,
    cluster.namespace,
    cluster.name,
  );
  return machines
    .filter(
      (m) =>
        (providerID !== undefined && m.spec.providerID === providerID) ||
        m.status.nodeRef?.name === node.metadata.name,
    )
    .map(refOf);
}

function refOf(o: ApiObject): ObjectRef {
  return { namespace: o.metadata.namespace, name: o.metadata.name };
}

/** Map an object to its owners of `kind`. */
export function ownedBy(kind: string): (obj: ApiObject) => ObjectRef[] {
  return (obj) =>
    obj.metadata.ownerReferences
      .filter((r) => r.kind === kind)
      .map((r) => ({ namespace: obj.metadata.namespace, name: r.name }));
}

async function reconcileMachine(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let m = await store.get<MachineObject>(CapiTypes.Machine, ref.namespace, ref.name);
  if (!m) return;
  const cluster = await getCapiCluster(store, m.metadata.namespace, m.spec.clusterName);
  if (m.metadata.deletionTimestamp) return reconcileMachineDelete(env, ctx, m, cluster);
  if (isPaused(cluster, m)) return;

  if (
    !m.metadata.finalizers.includes(CapiFinalizers.machine) ||
    m.metadata.labels[CapiLabels.clusterName] !== m.spec.clusterName
  ) {
    m = await store.update<MachineObject>({
      ...m,
      metadata: {
        ...m.metadata,
        labels: { ...m.metadata.labels, [CapiLabels.clusterName]: m.spec.clusterName },
        finalizers: [...new Set([...m.metadata.finalizers, CapiFinalizers.machine])],
      },
    });
  }

  const obs: MachineObservation = { conditions: [], bootstrapReady: false, infraProvisioned: false };
  await observeBootstrap(store, m, obs);
  await observeInfrastructure(store, m, obs);
  const providerID = obs.providerID ?? m.spec.providerID;
  await observeNode(env, cluster, m, providerID, obs);

  // Spec fields learned from the bootstrap and infrastructure objects, written with the status.
  const dataSecretName = obs.dataSecretName ?? m.spec.bootstrap.dataSecretName;
  const spec: MachineObject['spec'] = {
    ...m.spec,
    bootstrap: { ...m.spec.bootstrap, ...(dataSecretName ? { dataSecretName } : {}) },
    ...(providerID ? { providerID } : {}),
  };

  const now = env.deps.clock.now();
  const ready =
    obs.bootstrapReady &&
    obs.infraProvisioned &&
    obs.nodeRef !== undefined &&
    obs.conditions.some((c) => c.type === CapiConditions.NodeReady && c.status === 'True');
  const extra: ConditionInput[] = [
    ready
      ? trueCondition(CapiConditions.Ready)
      : falseCondition(CapiConditions.Ready, 'NotReady', readyMessage(obs)),
  ];
  const minReady = (m.spec.minReadySeconds ?? 0) * 1000;
  const readySince = obs.nodeReadySince ? Date.parse(obs.nodeReadySince) : now;
  const available = ready && now - readySince >= minReady;
  extra.push(
    available
      ? trueCondition(CapiConditions.Available)
      : falseCondition(
          CapiConditions.Available,
          'NotAvailable',
          ready ? 'waiting for minReadySeconds' : 'machine is not ready',
        ),
  );

  const machine = m;
  await writeObjectAndStatus(store, machine, { ...machine, spec }, (generation) => {
    const status: MachineStatus = {
      ...(obs.nodeRef ? { nodeRef: obs.nodeRef } : {}),
      ...(obs.nodeInfo ? { nodeInfo: obs.nodeInfo } : {}),
      ...(obs.addresses ? { addresses: obs.addresses } : {}),
      ...(obs.failureDomain ? { failureDomain: obs.failureDomain } : {}),
      ...(machine.status.deletion ? { deletion: machine.status.deletion } : {}),
      initialization: {
        bootstrapDataSecretCreated: obs.bootstrapReady,
        infrastructureProvisioned: obs.infraProvisioned,
      },
      conditions: buildConditions(
        machine.status.conditions,
        [...obs.conditions, ...extra],
        iso(now),
        FOREIGN_CONDITIONS,
      ),
      observedGeneration: generation,
    };
    status.phase = machinePhase({ ...machine, spec, status }, obs.bootstrapReady, obs.infraProvisioned);
    return status;
  });

  let requeue = obs.requeueAfterMs;
  if (ready && !available) requeue = Math.min(requeue ?? Infinity, readySince + minReady - now);
  return requeue === undefined ? undefined : { requeueAfterMs: Math.max(100, requeue) };
}

function readyMessage(obs: MachineObservation): string {
  if (!obs.bootstrapReady) return 'waiting for bootstrap data';
  if (!obs.infraProvisioned) {
    const infra = obs.conditions.find((c) => c.type === CapiConditions.InfrastructureReady);
    return infra?.message ?? 'waiting for the server';
  }
  if (!obs.nodeRef) return 'waiting for the node to join the cluster';
  return 'node is not ready';
}

/** True when the Machine is Ready (node joined and Ready). */
export function machineIsReady(m: MachineObject): boolean {
  return !m.metadata.deletionTimestamp && isConditionTrue(m.status.conditions, CapiConditions.Ready);
}

/** True when the Machine is Available (Ready for minReadySeconds). */
export function machineIsAvailable(m: MachineObject): boolean {
  return !m.metadata.deletionTimestamp && isConditionTrue(m.status.conditions, CapiConditions.Available);
}
