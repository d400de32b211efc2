import {
  CapiConditions,
  CapiLabels,
  type KubeadmControlPlaneObject,
  type KubeadmControlPlaneStatus,
  type MachineObject,
} from '../../domain/index.ts';
import { buildConditions, falseCondition, trueCondition, type ConditionInput } from '../common/conditions.ts';
import { machineIsAvailable, machineIsReady } from '../machine/machine-controller.ts';

/** Lowest Kubernetes version among `versions` (`v1.30.2` < `v1.31.0`). */
export function lowestVersion(versions: readonly string[]): string | undefined {
  const parse = (v: string) => (/^v?(\d+)\.(\d+)\.(\d+)/.exec(v) ?? []).slice(1).map(Number);
  return [...versions].sort((a, b) => {
    const pa = parse(a);
    const pb = parse(b);
    for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
    return 0;
  })[0];
}

/** Status of a KubeadmControlPlane rebuilt from its machines. */
export function kcpStatus(
  kcp: KubeadmControlPlaneObject,
  live: readonly MachineObject[],
  deleting: readonly MachineObject[],
  initialized: boolean,
  outdated: (m: MachineObject) => boolean,
  nowIso: string,
  activity?: { type: string; reason: string; message: string },
): KubeadmControlPlaneStatus {
  const desired = kcp.spec.replicas ?? 1;
  const ready = live.filter(machineIsReady);
  const available = live.filter(machineIsAvailable);
  const upToDate = live.filter((m) => !outdated(m));
  const quorum = Math.floor(desired / 2) + 1;
  const isAvailable = initialized && ready.length >= Math.min(quorum, Math.max(1, live.length));
  const conds: ConditionInput[] = [
    initialized
      ? trueCondition(CapiConditions.Initialized)
      : falseCondition(
          CapiConditions.Initialized,
          'NotInitialized',
          'the control plane is not initialized yet',
        ),
    isAvailable
      ? trueCondition(CapiConditions.Available)
      : falseCondition(
          CapiConditions.Available,
          'NotAvailable',
          `${ready.length} of ${desired} control plane machines ready`,
        ),
    trueCondition(CapiConditions.CertificatesAvailable),
    ready.length === live.length && live.length > 0
      ? trueCondition(CapiConditions.MachinesReady)
      : falseCondition(
          CapiConditions.MachinesReady,
          'NotReady',
          `${ready.length} of ${live.length} machines ready`,
        ),
    upToDate.length === live.length
      ? trueCondition(CapiConditions.MachinesUpToDate)
      : falseCondition(
          CapiConditions.MachinesUpToDate,
          'NotUpToDate',
          `${live.length - upToDate.length} machines need a rollout`,
        ),
    upToDate.length < live.length
      ? {
          type: CapiConditions.RollingOut,
          status: 'True',
          reason: 'RollingOut',
          message: `${upToDate.length} of ${desired} machines up to date`,
        }
      : falseCondition(CapiConditions.RollingOut, 'NotRollingOut', 'all machines are up to date'),
    live.length < desired
      ? {
          type: CapiConditions.ScalingUp,
          status: 'True',
          reason: 'ScalingUp',
          message: `${live.length} of ${desired} machines`,
        }
      : falseCondition(CapiConditions.ScalingUp, 'NotScalingUp', 'at the desired number of machines'),
    live.length > desired || deleting.length > 0
      ? {
          type: CapiConditions.ScalingDown,
          status: 'True',
          reason: 'ScalingDown',
          message: `${live.length} machines, ${deleting.length} being deleted, ${desired} wanted`,
        }
      : falseCondition(CapiConditions.ScalingDown, 'NotScalingDown', 'at the desired number of machines'),
  ];
  if (activity) {
    const i = conds.findIndex((c) => c.type === activity.type);
    const c: ConditionInput = {
      type: activity.type,
      status: 'True',
      reason: activity.reason,
      message: activity.message,
    };
    if (i >= 0) conds[i] = c;
    else conds.push(c);
  }
  const readyVersions = ready.map((m) => m.spec.version).filter((v): v is string => !!v);
  const version = lowestVersion(readyVersions);
  return {
    ...(kcp.status.lastRemediation ? { lastRemediation: kcp.status.lastRemediation } : {}),
    initialization: { controlPlaneInitialized: initialized },
    desiredReplicas: desired,
    replicas: live.length,
    readyReplicas: ready.length,
    availableReplicas: available.length,
    upToDateReplicas: upToDate.length,
    ...(version ? { version } : {}),
    selector: `${CapiLabels.clusterName}=${kcp.metadata.labels[CapiLabels.clusterName] ?? ''},${CapiLabels.controlPlaneName}=${kcp.metadata.name}`,
    conditions: buildConditions(kcp.status.conditions, conds, nowIso),
    observedGeneration: kcp.metadata.generation,
  };
}
