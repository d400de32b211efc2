import {
  CapiAnnotations,
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  getCondition,
  isConditionTrue,
  refTypeKey,
  type ApiObject,
  type CapiClusterObject,
  type CapiClusterStatus,
  type KubeadmControlPlaneObject,
  type MachineDeploymentObject,
  type MachineObject,
  type OpenStackClusterObject,
} from '../../domain/index.ts';
import {
  buildConditions,
  falseCondition,
  mirrorCondition,
  trueCondition,
  unknownCondition,
  type ConditionInput,
} from '../common/conditions.ts';
import type { Env } from '../common/env.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { iso, ownerRef, withOwnerRef, writeObject, writeStatus } from '../common/writes.ts';
import { machineIsReady } from '../machine/machine-controller.ts';
import { reconcileClusterDelete } from './cluster-delete.ts';
import { clusterPhase } from './cluster-phases.ts';
import {
  controlPlaneForCluster,
  deploymentForCluster,
  machineForOwners,
  oscForCluster,
} from '../common/views.ts';

/**
 * The Cluster controller: adopts its infrastructure cluster and control plane (owner
 * references), copies the API endpoint and failure domains from the infrastructure, mirrors
 * their readiness, counts machines, probes the workload cluster's API now and then
 * (`RemoteConnectionProbe`; its list of the nodes also tells the machines whose node changed
 * while no node watch ran), and deletes in order.
 */
export function clusterReconciler(env: Env): Reconciler {
  const byLabel = (obj: ApiObject): ObjectRef[] => {
    const name = obj.metadata.labels[CapiLabels.clusterName];
    return name ? [{ namespace: obj.metadata.namespace, name }] : [];
  };
  return {
    name: 'cluster',
    coalesceMs: env.settings.coalesceMs,
    type: CapiTypes.Cluster,
    watches: [
      { type: CapiTypes.OpenStackCluster, map: byLabel, view: oscForCluster },
      { type: CapiTypes.KubeadmControlPlane, map: byLabel, view: controlPlaneForCluster },
      { type: CapiTypes.MachineDeployment, map: byLabel, view: deploymentForCluster },
      { type: CapiTypes.Machine, map: byLabel, view: machineForOwners },
    ],
    reconcile: (ctx, ref) => reconcileCluster(env, ctx, ref),
  };
}

async function reconcileCluster(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let cluster = await store.get<CapiClusterObject>(CapiTypes.Cluster, ref.namespace, ref.name);
  if (!cluster) return;
  if (cluster.metadata.deletionTimestamp) return reconcileClusterDelete(env, ctx, cluster);
  if (cluster.spec.paused || CapiAnnotations.paused in cluster.metadata.annotations) return;
  if (!cluster.metadata.finalizers.includes(CapiFinalizers.cluster)) {
    cluster = await store.update<CapiClusterObject>({
      ...cluster,
      metadata: { ...cluster.metadata, finalizers: [...cluster.metadata.finalizers, CapiFinalizers.cluster] },
    });
  }
  const ns = cluster.metadata.namespace;
  const now = env.deps.clock.now();
  const conds: ConditionInput[] = [];

  // Infrastructure: adopt, then copy endpoint and failure domains once provisioned.
  let infraProvisioned = false;
  let failureDomains = cluster.status.failureDomains;
  const infraRef = cluster.spec.infrastructureRef;
  if (infraRef) {
    const osc = await store.get<OpenStackClusterObject>(refTypeKey(infraRef), ns, infraRef.name);
    if (osc) {
      await adopt(env, ctx, cluster, osc);
      infraProvisioned = osc.status.initialization?.provisioned === true || osc.status.ready === true;
      conds.push(
        mirrorCondition(
          CapiConditions.InfrastructureReady,
          getCondition(osc.status.conditions, CapiConditions.Ready),
          'Provisioning',
          'provisioning',
        ),
      );
      if (osc.status.failureDomains?.length) failureDomains = osc.status.failureDomains;
      const ep = osc.spec.controlPlaneEndpoint;
      if (
        infraProvisioned &&
        ep?.host &&
        (cluster.spec.controlPlaneEndpoint?.host !== ep.host ||
          cluster.spec.controlPlaneEndpoint.port !== ep.port)
      ) {
        cluster = await writeObject(store, cluster, {
          ...cluster,
          spec: { ...cluster.spec, controlPlaneEndpoint: { host: ep.host, port: ep.port } },
        });
      }
    } else {
      conds.push(
        unknownCondition(
          CapiConditions.InfrastructureReady,
          'InfrastructureNotFound',
          `${infraRef.kind} ${infraRef.name} does not exist`,
        ),
      );
    }
  } else {
    infraProvisioned = true;
    conds.push(trueCondition(CapiConditions.InfrastructureReady));
  }

  // Control plane.
  let cpInitialized = false;
  let cpCounts: CapiClusterStatus['controlPlane'];
  const cpRef = cluster.spec.controlPlaneRef;
  if (cpRef) {
    const kcp = await store.get<KubeadmControlPlaneObject>(refTypeKey(cpRef), ns, cpRef.name);
    if (kcp) {
      await adopt(env, ctx, cluster, kcp);
      cpInitialized = kcp.status.initialization?.controlPlaneInitialized === true;
      conds.push(
        mirrorCondition(
          CapiConditions.ControlPlaneAvailable,
          getCondition(kcp.status.conditions, CapiConditions.Available),
          'Provisioning',
          'provisioning',
        ),
      );
      cpCounts = {
        desiredReplicas: kcp.spec.replicas ?? 1,
        replicas: kcp.status.replicas ?? 0,
        readyReplicas: kcp.status.readyReplicas ?? 0,
        availableReplicas: kcp.status.availableReplicas ?? 0,
        upToDateReplicas: kcp.status.upToDateReplicas ?? 0,
      };
    } else {
      conds.push(
        unknownCondition(
          CapiConditions.ControlPlaneAvailable,
          'ControlPlaneNotFound',
          `${cpRef.kind} ${cpRef.name} does not exist`,
        ),
      );
    }
  }
  const prevInit = getCondition(cluster.status.conditions, CapiConditions.ControlPlaneInitialized);
  cpInitialized = cpInitialized || prevInit?.status === 'True';
  conds.push(
    cpInitialized
      ? trueCondition(CapiConditions.ControlPlaneInitialized)
      : falseCondition(
          CapiConditions.ControlPlaneInitialized,
          'NotInitialized',
          'waiting for the first control plane machine',
        ),
  );

  // Workers.
  const mds = await env.cache.listByCluster<MachineDeploymentObject>(
    CapiTypes.MachineDeployment,
    ns,
    cluster.metadata.name,
  );
  const machines = await env.cache.listByCluster<MachineObject>(CapiTypes.Machine, ns, cluster.metadata.name);
  const workers = machines.filter(
    (m) => !(CapiLabels.controlPlane in m.metadata.labels) && !m.metadata.deletionTimestamp,
  );
  const cps = machines.filter(
    (m) => CapiLabels.controlPlane in m.metadata.labels && !m.metadata.deletionTimestamp,
  );
  const unavailable = mds.filter((md) => !isConditionTrue(md.status.conditions, CapiConditions.Available));
  conds.push(
    unavailable.length === 0
      ? trueCondition(CapiConditions.WorkersAvailable)
      : falseCondition(
          CapiConditions.WorkersAvailable,
          'NotAvailable',
          `${unavailable.map((m) => m.metadata.name).join(', ')} not available`,
        ),
  );
  const readyWorkers = workers.filter(machineIsReady).length;
  const readyCps = cps.filter(machineIsReady).length;
  conds.push(
    readyCps === cps.length && cps.length > 0
      ? trueCondition(CapiConditions.ControlPlaneMachinesReady)
      : falseCondition(
          CapiConditions.ControlPlaneMachinesReady,
          'NotReady',
          `${readyCps} of ${cps.length} ready`,
        ),
    readyWorkers === workers.length
      ? trueCondition(CapiConditions.WorkerMachinesReady)
      : falseCondition(
          CapiConditions.WorkerMachinesReady,
          'NotReady',
          `${readyWorkers} of ${workers.length} ready`,
        ),
  );

  // Remote connection probe, once per interval: the nodes as the watch keeps them (a list when no
  // watch runs, which fails when the cluster cannot be reached, and reports each node it finds
  // changed to that node's machine).
  let requeueAfterMs: number | undefined;
  if (cpInitialized) {
    const probeMs = env.settings.workloadProbeSeconds * 1000;
    try {
      const snap = await env.nodes.get(cluster, probeMs / 2);
      if (snap) {
        const notReady = [...snap.byName.values()]
          .filter((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True')
          .map((n) => n.metadata.name);
        conds.push(
          trueCondition(
            CapiConditions.RemoteConnectionProbe,
            'ProbeSucceeded',
            notReady.length === 0
              ? `${snap.byName.size} nodes ready`
              : `${snap.byName.size - notReady.length} of ${snap.byName.size} nodes ready; not ready: ${notReady.sort().join(', ')}`,
          ),
        );
      } else {
        conds.push(
          unknownCondition(
            CapiConditions.RemoteConnectionProbe,
            'NoEndpoint',
            'the workload cluster API endpoint is not known yet',
          ),
        );
      }
    } catch (err) {
      conds.push(
        falseCondition(
          CapiConditions.RemoteConnectionProbe,
          'ProbeFailed',
          `cannot reach the workload cluster API: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    }
    requeueAfterMs = probeMs;
  } else {
    conds.push(
      unknownCondition(
        CapiConditions.RemoteConnectionProbe,
        'NotInitialized',
        'the control plane is not initialized yet',
      ),
    );
  }

  const available = conds.every((c) =>
    [
      CapiConditions.InfrastructureReady,
      CapiConditions.ControlPlaneAvailable,
      CapiConditions.WorkersAvailable,
      CapiConditions.RemoteConnectionProbe,
    ].includes(c.type as never)
      ? c.status === 'True'
      : true,
  );
  conds.push(
    available
      ? trueCondition(CapiConditions.Available)
      : falseCondition(CapiConditions.Available, 'NotAvailable', notAvailableMessage(conds)),
  );

  const status: CapiClusterStatus = {
    phase: clusterPhase(cluster, infraProvisioned),
    initialization: { infrastructureProvisioned: infraProvisioned, controlPlaneInitialized: cpInitialized },
    ...(cpCounts ? { controlPlane: cpCounts } : {}),
    workers: {
      desiredReplicas: mds.reduce((n, md) => n + (md.spec.replicas ?? 1), 0),
      replicas: workers.length,
      readyReplicas: readyWorkers,
      availableReplicas: mds.reduce((n, md) => n + (md.status.availableReplicas ?? 0), 0),
      upToDateReplicas: mds.reduce((n, md) => n + (md.status.upToDateReplicas ?? 0), 0),
    },
    ...(failureDomains ? { failureDomains } : {}),
    conditions: buildConditions(cluster.status.conditions, conds, iso(now)),
    observedGeneration: cluster.metadata.generation,
  };
  await writeStatus(store, cluster, status);
  return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
}

function notAvailableMessage(conds: readonly ConditionInput[]): string {
  const bad = conds.filter((c) => c.status !== 'True' && c.type !== CapiConditions.Available);
  return bad.map((c) => `${c.type}: ${c.message ?? c.reason ?? c.status}`).join('; ') || 'not available';
}

/** Set the Cluster as controlling owner of its infrastructure and control plane, with the cluster label. */
async function adopt(
  env: Env,
  ctx: ReconcileContext,
  cluster: CapiClusterObject,
  obj: ApiObject,
): Promise<void> {
  void env;
  const hasOwner = obj.metadata.ownerReferences.some((r) => r.uid === cluster.metadata.uid);
  const hasLabel = obj.metadata.labels[CapiLabels.clusterName] === cluster.metadata.name;
  if (hasOwner && hasLabel) return;
  const next = withOwnerRef(obj, ownerRef(cluster));
  await writeObject(ctx.store, obj, {
    ...next,
    metadata: {
      ...next.metadata,
      labels: { ...next.metadata.labels, [CapiLabels.clusterName]: cluster.metadata.name },
    },
  });
}
