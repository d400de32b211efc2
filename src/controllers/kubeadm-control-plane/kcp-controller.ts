import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  getCondition,
  type ApiObject,
  type KubeadmConfigSpec,
  type KubeadmControlPlaneObject,
  type MachineObject,
} from '../../domain/index.ts';
import { KCP_CONFIG_HASH, OPENSTACK_MACHINE_CLONED_FROM } from '../common/annotations.ts';
import { getCapiCluster, isPaused, type Env } from '../common/env.ts';
import { randomSuffix, shortHash } from '../common/hash.ts';
import { createMachine, getInfraTemplate } from '../common/machine-factory.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { controllerOf, deleteObject, iso, writeStatus } from '../common/writes.ts';
import { machineIsReady } from '../machine/machine-controller.ts';
import { reconcileKcpDelete } from './kcp-delete.ts';
import { controlPlaneDomains, nextFailureDomain, selectControlPlaneVictim } from './kcp-placement.ts';
import { kcpStatus } from './kcp-status.ts';
import { clusterForMembers, machineForOwners } from '../common/views.ts';

/**
 * The KubeadmControlPlane controller: keeps `spec.replicas` (odd) control-plane machines at
 * `spec.version`, one operation at a time — the first machine runs `kubeadm init`, the others
 * join one by one, each in the failure domain with the fewest control-plane machines; a
 * version, config or template change rolls the machines one at a time (surge 1: add a new one,
 * then remove an outdated one); unhealthy machines marked by a health check are replaced while
 * etcd keeps its quorum.
 */
export function kcpReconciler(env: Env): Reconciler {
  return {
    name: 'kubeadmcontrolplane',
    coalesceMs: env.settings.coalesceMs,
    type: CapiTypes.KubeadmControlPlane,
    watches: [
      {
        type: CapiTypes.Machine,
        view: machineForOwners,
        map: (obj: ApiObject) => {
          const name = obj.metadata.labels[CapiLabels.controlPlaneName];
          return name ? [{ namespace: obj.metadata.namespace, name }] : [];
        },
      },
      {
        type: CapiTypes.Cluster,
        view: clusterForMembers,
        map: (obj: ApiObject) => {
          const ref = (obj.spec as { controlPlaneRef?: { kind: string; name: string } }).controlPlaneRef;
          return ref?.kind === 'KubeadmControlPlane'
            ? [{ namespace: obj.metadata.namespace, name: ref.name }]
            : [];
        },
      },
    ],
    reconcile: (ctx, ref) => reconcileKcp(env, ctx, ref),
  };
}

/** Config hashes of the frozen (shared, read-only) specs read lately: each machine is checked against it. */
const configHashes = new WeakMap<object, string>();

/** Hash of the parts of a KubeadmControlPlane that, when changed, roll its machines. */
export function kcpConfigHash(kcp: KubeadmControlPlaneObject): string {
  const spec = kcp.spec.kubeadmConfigSpec;
  const shared = typeof spec === 'object' && spec !== null && Object.isFrozen(spec);
  let hash = shared ? configHashes.get(spec) : undefined;
  if (hash === undefined) {
    hash = shortHash({ kubeadm: spec });
    if (shared) configHashes.set(spec, hash);
  }
  return hash;
}

/** True when a control-plane machine no longer matches its KubeadmControlPlane. */
export function isOutdated(kcp: KubeadmControlPlaneObject, m: MachineObject, infraName?: string): boolean {
  if (m.spec.version !== kcp.spec.version) return true;
  if (m.metadata.annotations[KCP_CONFIG_HASH] !== kcpConfigHash(kcp)) return true;
  const from = infraName ?? m.metadata.annotations[OPENSTACK_MACHINE_CLONED_FROM];
  if (from !== undefined && from !== kcp.spec.machineTemplate.spec.infrastructureRef.name) return true;
  const after = kcp.spec.rollout?.after;
  if (after && Date.parse(m.metadata.creationTimestamp) < Date.parse(after)) return true;
  return false;
}

async function reconcileKcp(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let kcp = await store.get<KubeadmControlPlaneObject>(
    CapiTypes.KubeadmControlPlane,
    ref.namespace,
    ref.name,
  );
  if (!kcp) return;
  const clusterName = kcp.metadata.labels[CapiLabels.clusterName] ?? controllerOf(kcp, 'Cluster')?.name;
  const cluster = clusterName ? await getCapiCluster(store, kcp.metadata.namespace, clusterName) : undefined;
  const all = clusterName
    ? await env.cache.listByCluster<MachineObject>(CapiTypes.Machine, kcp.metadata.namespace, clusterName)
    : [];
  const machines = all.filter((m) => m.metadata.labels[CapiLabels.controlPlaneName] === kcp!.metadata.name);
  if (kcp.metadata.deletionTimestamp) return reconcileKcpDelete(env, ctx, kcp, all, machines);
  if (!cluster || !clusterName || isPaused(cluster, kcp)) return;

  if (
    !kcp.metadata.finalizers.includes(CapiFinalizers.kubeadmControlPlane) ||
    kcp.metadata.labels[CapiLabels.clusterName] !== clusterName
  ) {
    kcp = await store.update<KubeadmControlPlaneObject>({
      ...kcp,
      metadata: {
        ...kcp.metadata,
        labels: { ...kcp.metadata.labels, [CapiLabels.clusterName]: clusterName },
        finalizers: [...new Set([...kcp.metadata.finalizers, CapiFinalizers.kubeadmControlPlane])],
      },
    });
  }
  const now = env.deps.clock.now();
  const desired = kcp.spec.replicas ?? 1;
  const live = machines.filter((m) => !m.metadata.deletionTimestamp);
  const deleting = machines.filter((m) => m.metadata.deletionTimestamp);
  const outdated = live.filter((m) => isOutdated(kcp!, m));
  const ready = live.filter(machineIsReady);
  const initialized =
    kcp.status.initialization?.controlPlaneInitialized === true ||
    machines.some((m) => m.status.nodeRef !== undefined);

  const writeKcpStatus = async (activity?: { type: string; reason: string; message: string }) => {
    const status = kcpStatus(
      kcp!,
      live,
      deleting,
      initialized,
      (m) => isOutdated(kcp!, m),
      iso(now),
      activity,
    );
    kcp = await writeStatus(store, kcp!, status);
  };

  const infraReady =
    cluster.status.initialization?.infrastructureProvisioned === true &&
    !!cluster.spec.controlPlaneEndpoint?.host;
  if (!infraReady) {
    await writeKcpStatus({
      type: CapiConditions.ScalingUp,
      reason: 'WaitingForInfrastructure',
      message: 'waiting for the cluster infrastructure and its API endpoint',
    });
    return;
  }
  if (desired % 2 === 0) {
    await writeKcpStatus({
      type: CapiConditions.ScalingUp,
      reason: 'InvalidReplicas',
      message: `replicas ${desired} is even: an odd number keeps etcd's quorum`,
    });
    return;
  }

  // Remediation: one unhealthy machine at a time, only while quorum survives it.
  const toRemediate = live.find(
    (m) => getCondition(m.status.conditions, CapiConditions.OwnerRemediated)?.status === 'False',
  );
  if (toRemediate && deleting.length === 0) {
    const healthyOthers = ready.filter((m) => m !== toRemediate).length;
    const quorum = Math.floor(desired / 2) + 1;
    // Never remove the last working control plane: a machine that never joined can always go.
    const allowed =
      !initialized || !toRemediate.status.nodeRef || (live.length > 1 && healthyOthers >= quorum);
    if (allowed) {
      await deleteObject(store, CapiTypes.Machine, toRemediate.metadata.namespace, toRemediate.metadata.name);
      const retry = kcp.status.lastRemediation?.retryCount ?? -1;
      kcp = await writeStatus(store, kcp, {
        ...kcp.status,
        lastRemediation: { machine: toRemediate.metadata.name, time: iso(now), retryCount: retry + 1 },
      });
      await writeKcpStatus({
        type: CapiConditions.Remediating,
        reason: 'Remediating',
        message: `replacing unhealthy machine ${toRemediate.metadata.name}`,
      });
      return;
    }
  }

  // One operation at a time: wait for deletions and for every machine to be ready.
  if (deleting.length > 0) {
    await writeKcpStatus({
      type: CapiConditions.ScalingDown,
      reason: 'WaitingForMachineDeletion',
      message: `waiting for ${deleting.map((m) => m.metadata.name).join(', ')} to be deleted`,
    });
    return;
  }
  const notReady = live.filter((m) => !machineIsReady(m));
  if (notReady.length > 0) {
    await writeKcpStatus();
    return;
  }

  const surge = (kcp.spec.rollout?.strategy?.rollingUpdate?.maxSurge ?? 1) === 1;
  if (live.length < desired || (outdated.length > 0 && live.length === desired && surge)) {
    const template = await getInfraTemplate(
      store,
      kcp.metadata.namespace,
      kcp.spec.machineTemplate.spec.infrastructureRef.name,
    );
    if (!template) {
      await writeKcpStatus({
        type: CapiConditions.ScalingUp,
        reason: 'InfrastructureTemplateNotFound',
        message: `OpenStackMachineTemplate ${kcp.spec.machineTemplate.spec.infrastructureRef.name} does not exist`,
      });
      return;
    }
    if (live.length > 0 && !initialized) {
      await writeKcpStatus();
      return;
    }
    const fd = nextFailureDomain(controlPlaneDomains(cluster.status.failureDomains), live);
    const first = live.length === 0 && !initialized;
    const name = `${kcp.metadata.name}-${randomSuffix()}`;
    await createMachine(store, {
      namespace: kcp.metadata.namespace,
      name,
      clusterName,
      owner: kcp,
      labels: {
        ...(kcp.spec.machineTemplate.metadata?.labels ?? {}),
        [CapiLabels.controlPlane]: '',
        [CapiLabels.controlPlaneName]: kcp.metadata.name,
      },
      annotations: {
        ...(kcp.spec.machineTemplate.metadata?.annotations ?? {}),
        [KCP_CONFIG_HASH]: kcpConfigHash(kcp),
      },
      version: kcp.spec.version,
      ...(fd ? { failureDomain: fd } : {}),
      ...(kcp.spec.machineTemplate.spec.deletion ? { deletion: kcp.spec.machineTemplate.spec.deletion } : {}),
      bootstrap: bootstrapSpec(kcp, first),
      infraTemplate: template,
    });
    await writeKcpStatus({
      type: CapiConditions.ScalingUp,
      reason: 'ScalingUp',
      message:
        outdated.length > 0
          ? `rolling out: created ${name}`
          : `scaling up to ${desired}: created ${name}${fd ? ` in ${fd}` : ''}`,
    });
    return;
  }
  if (live.length > desired) {
    const victim = selectControlPlaneVictim(live, (m) => isOutdated(kcp!, m));
    if (victim) {
      await deleteObject(store, CapiTypes.Machine, victim.metadata.namespace, victim.metadata.name);
      await writeKcpStatus({
        type: CapiConditions.ScalingDown,
        reason: 'ScalingDown',
        message: `removing ${victim.metadata.name}`,
      });
      return;
    }
  }
  if (outdated.length > 0 && !surge && live.length === desired && desired >= 3) {
    const victim = selectControlPlaneVictim(live, (m) => isOutdated(kcp!, m));
    if (victim) await deleteObject(store, CapiTypes.Machine, victim.metadata.namespace, victim.metadata.name);
  }
  await writeKcpStatus();
}

/** The KubeadmConfig spec of a new control-plane machine: init for the first, join for the rest. */
function bootstrapSpec(kcp: KubeadmControlPlaneObject, first: boolean): KubeadmConfigSpec {
  const s = structuredClone(kcp.spec.kubeadmConfigSpec);
  const common: KubeadmConfigSpec = {
    ...(s.files ? { files: s.files } : {}),
    ...(s.preKubeadmCommands ? { preKubeadmCommands: s.preKubeadmCommands } : {}),
    ...(s.postKubeadmCommands ? { postKubeadmCommands: s.postKubeadmCommands } : {}),
    ...(s.users ? { users: s.users } : {}),
    ...(s.ntp ? { ntp: s.ntp } : {}),
    ...(s.format ? { format: s.format } : {}),
  };
  if (first) {
    return {
      ...common,
      clusterConfiguration: { ...(s.clusterConfiguration ?? {}), kubernetesVersion: kcp.spec.version },
      initConfiguration: s.initConfiguration ?? {},
    };
  }
  return {
    ...common,
    joinConfiguration: {
      ...(s.joinConfiguration ?? {}),
      controlPlane: s.joinConfiguration?.controlPlane ?? {},
    },
  };
}
