import {
  CAPI_API_VERSION,
  CapiAnnotations,
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  type MachineDeploymentObject,
  type MachineDeploymentStatus,
  type MachineSetObject,
  type NewObject,
} from '../../domain/index.ts';
import { buildConditions, falseCondition, trueCondition, type ConditionInput } from '../common/conditions.ts';
import { getCapiCluster, isPaused, type Env } from '../common/env.ts';
import { shortHash } from '../common/hash.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import {
  deleteObject,
  isAlreadyExists,
  iso,
  ownerRef,
  removeFinalizer,
  writeObject,
  writeStatus,
} from '../common/writes.ts';
import { ownedBy } from '../machine/machine-controller.ts';
import { planRollout, rolloutBounds, type SetView } from './md-rollout.ts';

/**
 * The MachineDeployment controller: one MachineSet per template (named by the template's
 * hash); a template change creates a new MachineSet and moves machines over with a rolling
 * update (maxSurge 1, maxUnavailable 0 unless told otherwise); emptied old sets are removed.
 */
export function machineDeploymentReconciler(env: Env): Reconciler {
  return {
    name: 'machinedeployment',
    coalesceMs: env.settings.coalesceMs,
    type: CapiTypes.MachineDeployment,
    watches: [{ type: CapiTypes.MachineSet, map: ownedBy('MachineDeployment') }],
    reconcile: (ctx, ref) => reconcileMachineDeployment(env, ctx, ref),
  };
}

/** Hash of what a MachineDeployment's machines are made from. */
export function templateHash(md: MachineDeploymentObject): string {
  return shortHash(
    {
      labels: md.spec.template.metadata?.labels ?? {},
      spec: md.spec.template.spec,
      after: md.spec.rollout?.after ?? null,
    },
    8,
  );
}

async function reconcileMachineDeployment(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let md = await store.get<MachineDeploymentObject>(CapiTypes.MachineDeployment, ref.namespace, ref.name);
  if (!md) return;
  let sets = await env.cache.listByOwner<MachineSetObject>(CapiTypes.MachineSet, md.metadata.uid);
  if (md.metadata.deletionTimestamp) {
    for (const s of sets)
      if (!s.metadata.deletionTimestamp)
        await deleteObject(store, CapiTypes.MachineSet, s.metadata.namespace, s.metadata.name);
    if (sets.length === 0) await removeFinalizer(store, md, CapiFinalizers.machineDeployment);
    return;
  }
  const cluster = await getCapiCluster(store, md.metadata.namespace, md.spec.clusterName);
  if (!cluster || isPaused(cluster, md) || md.spec.paused) return;
  if (
    !md.metadata.finalizers.includes(CapiFinalizers.machineDeployment) ||
    md.metadata.labels[CapiLabels.clusterName] !== md.spec.clusterName
  ) {
    md = await store.update<MachineDeploymentObject>({
      ...md,
      metadata: {
        ...md.metadata,
        labels: { ...md.metadata.labels, [CapiLabels.clusterName]: md.spec.clusterName },
        finalizers: [...new Set([...md.metadata.finalizers, CapiFinalizers.machineDeployment])],
      },
    });
  }
  const now = env.deps.clock.now();
  const desired = md.spec.replicas ?? 1;
  const hash = templateHash(md);
  sets = sets.filter((s) => !s.metadata.deletionTimestamp);
  let newSet = sets.find((s) => s.metadata.labels[CapiLabels.templateHash] === hash);
  const oldSets = sets.filter((s) => s !== newSet);
  if (!newSet) {
    const name = `${md.metadata.name}-${hash}`;
    const revision = String(
      1 + Math.max(0, ...sets.map((s) => Number(s.metadata.annotations[CapiAnnotations.revision] ?? '0'))),
    );
    const obj: NewObject = {
      apiVersion: CAPI_API_VERSION,
      kind: 'MachineSet',
      metadata: {
        name,
        namespace: md.metadata.namespace,
        labels: {
          ...(md.spec.template.metadata?.labels ?? {}),
          [CapiLabels.clusterName]: md.spec.clusterName,
          [CapiLabels.deploymentName]: md.metadata.name,
          [CapiLabels.templateHash]: hash,
        },
        annotations: { ...md.metadata.annotations, [CapiAnnotations.revision]: revision },
        ownerReferences: [ownerRef(md)],
        finalizers: [CapiFinalizers.machineSet],
      },
      spec: {
        clusterName: md.spec.clusterName,
        replicas: oldSets.length === 0 ? desired : 0,
        selector: {
          matchLabels: { [CapiLabels.deploymentName]: md.metadata.name, [CapiLabels.templateHash]: hash },
        },
        template: {
          metadata: {
            labels: {
              ...(md.spec.template.metadata?.labels ?? {}),
              [CapiLabels.deploymentName]: md.metadata.name,
              [CapiLabels.templateHash]: hash,
            },
            annotations: md.spec.template.metadata?.annotations ?? {},
          },
          spec: md.spec.template.spec,
        },
        ...(md.spec.deletion ? { deletion: md.spec.deletion } : {}),
      },
    };
    try {
      newSet = await store.create<MachineSetObject>(
        obj as NewObject<MachineSetObject['spec'], MachineSetObject['status']>,
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      newSet = await store.get<MachineSetObject>(CapiTypes.MachineSet, md.metadata.namespace, name);
      if (!newSet) throw err;
    }
  }

  const view = (s: MachineSetObject): SetView => {
    const current = (s.status.observedGeneration ?? 0) >= s.metadata.generation;
    return {
      name: s.metadata.name,
      replicas: s.spec.replicas ?? 0,
      available: current ? Math.min(s.status.availableReplicas ?? 0, s.spec.replicas ?? 0) : 0,
      created: s.metadata.creationTimestamp,
    };
  };
  const bounds = rolloutBounds(desired, md.spec.rollout?.strategy?.rollingUpdate);
  const plan = planRollout(desired, view(newSet), oldSets.map(view), bounds);
  for (const s of [newSet, ...oldSets]) {
    const target = plan.get(s.metadata.name);
    if (target !== undefined) await writeObject(store, s, { ...s, spec: { ...s.spec, replicas: target } });
  }
  // Old sets with no machines left are removed.
  for (const s of oldSets) {
    if (
      (plan.get(s.metadata.name) ?? s.spec.replicas ?? 0) === 0 &&
      (s.status.replicas ?? 0) === 0 &&
      (s.status.observedGeneration ?? 0) >= s.metadata.generation
    ) {
      await deleteObject(store, CapiTypes.MachineSet, s.metadata.namespace, s.metadata.name);
    }
  }

  const all = [newSet, ...oldSets];
  const replicas = all.reduce((n, s) => n + (s.status.replicas ?? 0), 0);
  const ready = all.reduce((n, s) => n + (s.status.readyReplicas ?? 0), 0);
  const available = all.reduce((n, s) => n + (s.status.availableReplicas ?? 0), 0);
  const newCurrent = (newSet.status.observedGeneration ?? 0) >= newSet.metadata.generation;
  const upToDate = newCurrent ? (newSet.status.replicas ?? 0) : 0;
  const rolling = oldSets.length > 0;
  const conds: ConditionInput[] = [
    available >= desired - bounds.maxUnavailable
      ? trueCondition(CapiConditions.Available)
      : falseCondition(
          CapiConditions.Available,
          'NotAvailable',
          `${available} of ${desired} machines available`,
        ),
    rolling
      ? {
          type: CapiConditions.RollingOut,
          status: 'True',
          reason: 'RollingOut',
          message: `${upToDate} of ${desired} machines up to date`,
        }
      : falseCondition(CapiConditions.RollingOut, 'NotRollingOut', 'all machines are up to date'),
    ready === replicas && replicas > 0
      ? trueCondition(CapiConditions.MachinesReady)
      : falseCondition(CapiConditions.MachinesReady, 'NotReady', `${ready} of ${replicas} machines ready`),
    upToDate === replicas
      ? trueCondition(CapiConditions.MachinesUpToDate)
      : falseCondition(
          CapiConditions.MachinesUpToDate,
          'NotUpToDate',
          `${replicas - upToDate} machines need a rollout`,
        ),
  ];
  const status: MachineDeploymentStatus = {
    desiredReplicas: desired,
    replicas,
    readyReplicas: ready,
    availableReplicas: available,
    upToDateReplicas: upToDate,
    phase: replicas < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running',
    selector: `${CapiLabels.deploymentName}=${md.metadata.name}`,
    conditions: buildConditions(md.status.conditions, conds, iso(now)),
    observedGeneration: md.metadata.generation,
  };
  await writeStatus(store, md, status);
}
