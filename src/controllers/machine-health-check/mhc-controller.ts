import {
  CapiAnnotations,
  CapiConditions,
  CapiTypes,
  getCondition,
  matchesSelector,
  selectorFromSpec,
  type ApiObject,
  type MachineHealthCheckObject,
  type MachineHealthCheckStatus,
  type MachineObject,
} from '../../domain/index.ts';
import { buildConditions, falseCondition, trueCondition } from '../common/conditions.ts';
import { getCapiCluster, isPaused, type Env } from '../common/env.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { controllerOf, isConflict, iso, writeStatus } from '../common/writes.ts';
import { evaluateMachine, remediationAllowed } from './mhc-evaluate.ts';
import { machineForHealthChecks, specView } from '../common/views.ts';

/** One remediation the health check asked for (Magnetar status extension, newest last). */
export interface RemediationRecord {
  machine: string;
  reason: string;
  message: string;
  time: string;
}

/** MachineHealthCheck status with Magnetar's remediation history. */
export type MhcStatus = MachineHealthCheckStatus & { remediations?: RemediationRecord[] };

const HISTORY = 20;

/**
 * The MachineHealthCheck controller: marks machines owned by a MachineSet or a control plane
 * as needing remediation (`HealthCheckSucceeded=False`, `OwnerRemediated=False`) when their
 * server went to ERROR, their node never showed up or stays not ready past its timeout — unless
 * more machines are unhealthy than the short-circuit allows. The owners replace them.
 */
export function machineHealthCheckReconciler(env: Env): Reconciler {
  const checksOf = (namespace: string, cluster: string) =>
    env.cache.listByCluster<MachineHealthCheckObject>(CapiTypes.MachineHealthCheck, namespace, cluster);
  const refOf = (c: MachineHealthCheckObject): ObjectRef => ({
    namespace: c.metadata.namespace,
    name: c.metadata.name,
  });
  const toChecks = async (obj: ApiObject): Promise<ObjectRef[]> =>
    (await checksOf(obj.metadata.namespace, obj.metadata.name)).map(refOf);
  // a machine concerns the checks whose selector it matches (one per node group), and the ones
  // that still count it as a target (its labels may have just taken it out of their selector)
  const toSelectingChecks = async (obj: ApiObject): Promise<ObjectRef[]> => {
    const cluster = (obj.spec as { clusterName?: string }).clusterName ?? '';
    return (await checksOf(obj.metadata.namespace, cluster))
      .filter(
        (c) =>
          matchesSelector(obj.metadata.labels, selectorFromSpec(c.spec.selector)) ||
          (c.status.targets ?? []).includes(obj.metadata.name),
      )
      .map(refOf);
  };
  return {
    name: 'machinehealthcheck',
    coalesceMs: env.settings.coalesceMs,
    type: CapiTypes.MachineHealthCheck,
    // its status is its own output: writing it needs no second pass
    view: specView,
    watches: [
      { type: CapiTypes.Machine, map: toSelectingChecks, view: machineForHealthChecks },
      // it reads whether its cluster is paused or going: nodes' readiness comes through the machines
      { type: CapiTypes.Cluster, map: toChecks, view: specView },
    ],
    reconcile: (ctx, ref) => reconcileMhc(env, ctx, ref),
  };
}

async function reconcileMhc(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const mhc = await store.get<MachineHealthCheckObject>(
    CapiTypes.MachineHealthCheck,
    ref.namespace,
    ref.name,
  );
  if (!mhc || mhc.metadata.deletionTimestamp) return;
  const cluster = await getCapiCluster(store, mhc.metadata.namespace, mhc.spec.clusterName);
  if (!cluster || cluster.metadata.deletionTimestamp || isPaused(cluster, mhc)) return;
  const now = env.deps.clock.now();
  const selector = selectorFromSpec(mhc.spec.selector);
  const targets = (
    await env.cache.listByCluster<MachineObject>(
      CapiTypes.Machine,
      mhc.metadata.namespace,
      mhc.spec.clusterName,
    )
  ).filter(
    (m) =>
      !m.metadata.deletionTimestamp &&
      matchesSelector(m.metadata.labels, selector) &&
      (controllerOf(m, 'MachineSet') !== undefined || controllerOf(m, 'KubeadmControlPlane') !== undefined),
  );
  const verdicts = targets.map((m) => {
    const infra = getCondition(m.status.conditions, CapiConditions.InfrastructureReady);
    const since = infra?.status === 'True' ? Date.parse(infra.lastTransitionTime) : undefined;
    return evaluateMachine(m, mhc.spec, now, since);
  });
  const unhealthy = verdicts.filter((v) => !v.healthy);
  const gate = remediationAllowed(mhc.spec, targets.length, unhealthy.length);
  const history = [...((mhc.status as MhcStatus).remediations ?? [])];

  for (const v of verdicts) {
    const m = v.machine;
    const skip =
      CapiAnnotations.skipRemediation in m.metadata.annotations ||
      CapiAnnotations.paused in m.metadata.annotations;
    const prevOwner = getCondition(m.status.conditions, CapiConditions.OwnerRemediated);
    let conds = m.status.conditions ?? [];
    if (v.healthy) {
      conds = buildConditions(
        conds,
        [trueCondition(CapiConditions.HealthCheckSucceeded)],
        iso(now),
        conds.map((c) => c.type).filter((t) => t !== CapiConditions.HealthCheckSucceeded),
      );
    } else {
      const next = [
        falseCondition(
          CapiConditions.HealthCheckSucceeded,
          v.reason ?? 'Unhealthy',
          v.message ?? 'unhealthy',
        ),
      ];
      if (gate.allowed && !skip)
        next.push(
          falseCondition(
            CapiConditions.OwnerRemediated,
            'WaitingForRemediation',
            v.message ?? 'waiting for the owner to replace the machine',
          ),
        );
      conds = buildConditions(
        conds,
        next,
        iso(now),
        conds.map((c) => c.type).filter((t) => !next.some((n) => n.type === t)),
      );
      if (gate.allowed && !skip && prevOwner?.status !== 'False') {
        history.push({
          machine: m.metadata.name,
          reason: v.reason ?? 'Unhealthy',
          message: v.message ?? '',
          time: iso(now),
        });
      }
    }
    try {
      await writeStatus(store, m, { ...m.status, conditions: conds });
    } catch (err) {
      if (!isConflict(err)) throw err;
      return { requeueAfterMs: 200 };
    }
  }

  const status: MhcStatus = {
    expectedMachines: targets.length,
    currentHealthy: targets.length - unhealthy.length,
    remediationsAllowed: gate.remediationsAllowed,
    targets: targets.map((m) => m.metadata.name),
    remediations: history.slice(-HISTORY),
    conditions: buildConditions(
      mhc.status.conditions,
      [
        gate.allowed
          ? trueCondition(CapiConditions.RemediationAllowed)
          : falseCondition(
              CapiConditions.RemediationAllowed,
              'TooManyUnhealthy',
              gate.message ?? 'too many unhealthy machines',
            ),
      ],
      iso(now),
    ),
    observedGeneration: mhc.metadata.generation,
  };
  await writeStatus(store, mhc, status);
  const next = verdicts.map((v) => v.recheckAtMs).filter((t): t is number => t !== undefined);
  return next.length > 0 ? { requeueAfterMs: Math.max(100, Math.min(...next) - now) } : undefined;
}
