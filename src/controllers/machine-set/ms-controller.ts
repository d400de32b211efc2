import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  getCondition,
  refTypeKey,
  type KubeadmConfigTemplateObject,
  type MachineObject,
  type MachineSetObject,
  type MachineSetStatus,
} from '../../domain/index.ts';
import { buildConditions, falseCondition, trueCondition, type ConditionInput } from '../common/conditions.ts';
import { getCapiCluster, isPaused, type Env } from '../common/env.ts';
import { randomSuffix } from '../common/hash.ts';
import { createMachine, getInfraTemplate } from '../common/machine-factory.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { controllerOf, deleteObject, iso, removeFinalizer, writeStatus } from '../common/writes.ts';
import { machineIsAvailable, machineIsReady, ownedBy } from '../machine/machine-controller.ts';
import { machinesToDelete } from './ms-deletion.ts';
import { machineForOwners } from '../common/views.ts';

/**
 * The MachineSet controller: keeps `spec.replicas` machines from its template. Scale-down
 * removes machines marked for deletion first, then unhealthy ones, then the oldest; machines a
 * health check marked for remediation are deleted and replaced.
 */
export function machineSetReconciler(env: Env): Reconciler {
  return {
    name: 'machineset',
    coalesceMs: env.settings.coalesceMs,
    type: CapiTypes.MachineSet,
    watches: [{ type: CapiTypes.Machine, map: ownedBy('MachineSet'), view: machineForOwners }],
    reconcile: (ctx, ref) => reconcileMachineSet(env, ctx, ref),
  };
}

async function reconcileMachineSet(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let ms = await store.get<MachineSetObject>(CapiTypes.MachineSet, ref.namespace, ref.name);
  if (!ms) return;
  const machines = await env.cache.listByOwner<MachineObject>(CapiTypes.Machine, ms.metadata.uid);
  if (ms.metadata.deletionTimestamp) {
    for (const m of machines)
      if (!m.metadata.deletionTimestamp)
        await deleteObject(store, CapiTypes.Machine, m.metadata.namespace, m.metadata.name);
    if (machines.length === 0) await removeFinalizer(store, ms, CapiFinalizers.machineSet);
    return;
  }
  const cluster = await getCapiCluster(store, ms.metadata.namespace, ms.spec.clusterName);
  if (!cluster || isPaused(cluster, ms)) return;
  if (
    !ms.metadata.finalizers.includes(CapiFinalizers.machineSet) ||
    ms.metadata.labels[CapiLabels.clusterName] !== ms.spec.clusterName
  ) {
    ms = await store.update<MachineSetObject>({
      ...ms,
      metadata: {
        ...ms.metadata,
        labels: { ...ms.metadata.labels, [CapiLabels.clusterName]: ms.spec.clusterName },
        finalizers: [...new Set([...ms.metadata.finalizers, CapiFinalizers.machineSet])],
      },
    });
  }
  const now = env.deps.clock.now();
  const desired = ms.spec.replicas ?? 1;
  let live = machines.filter((m) => !m.metadata.deletionTimestamp);
  let problem: ConditionInput | undefined;

  // Machines a health check asked their owner to replace.
  for (const m of live) {
    if (getCondition(m.status.conditions, CapiConditions.OwnerRemediated)?.status === 'False') {
      await deleteObject(store, CapiTypes.Machine, m.metadata.namespace, m.metadata.name);
    }
  }
  live = live.filter(
    (m) => getCondition(m.status.conditions, CapiConditions.OwnerRemediated)?.status !== 'False',
  );

  if (live.length < desired) {
    const tpl = ms.spec.template.spec;
    const infra = await getInfraTemplate(store, ms.metadata.namespace, tpl.infrastructureRef.name);
    const bootRef = tpl.bootstrap.configRef;
    const boot = bootRef
      ? await store.get<KubeadmConfigTemplateObject>(refTypeKey(bootRef), ms.metadata.namespace, bootRef.name)
      : undefined;
    if (!infra || (bootRef && !boot)) {
      problem = falseCondition(
        CapiConditions.ScalingUp,
        'TemplateNotFound',
        !infra
          ? `OpenStackMachineTemplate ${tpl.infrastructureRef.name} does not exist`
          : `KubeadmConfigTemplate ${bootRef?.name ?? ''} does not exist`,
      );
    } else {
      const md = controllerOf(ms, 'MachineDeployment');
      for (let i = live.length; i < desired; i++) {
        await createMachine(store, {
          namespace: ms.metadata.namespace,
          name: `${ms.metadata.name}-${randomSuffix()}`,
          clusterName: ms.spec.clusterName,
          owner: ms,
          labels: {
            ...(ms.spec.template.metadata?.labels ?? {}),
            [CapiLabels.setName]: ms.metadata.name,
            ...(md ? { [CapiLabels.deploymentName]: md.name } : {}),
          },
          annotations: { ...(ms.spec.template.metadata?.annotations ?? {}) },
          ...(tpl.version ? { version: tpl.version } : {}),
          ...(tpl.failureDomain ? { failureDomain: tpl.failureDomain } : {}),
          ...(tpl.deletion ? { deletion: tpl.deletion } : {}),
          ...(tpl.minReadySeconds !== undefined ? { minReadySeconds: tpl.minReadySeconds } : {}),
          bootstrap: boot ? structuredClone(boot.spec.template.spec) : {},
          infraTemplate: infra,
        });
      }
    }
  } else if (live.length > desired) {
    for (const m of machinesToDelete(live, live.length - desired, ms.spec.deletion?.order ?? 'Oldest')) {
      await deleteObject(store, CapiTypes.Machine, m.metadata.namespace, m.metadata.name);
    }
  }

  const after = (await env.cache.listByOwner<MachineObject>(CapiTypes.Machine, ms.metadata.uid)).filter(
    (m) => !m.metadata.deletionTimestamp,
  );
  const ready = after.filter(machineIsReady).length;
  const available = after.filter(machineIsAvailable).length;
  const deleting = machines.length - live.length;
  const conds: ConditionInput[] = [
    ready === after.length && after.length > 0
      ? trueCondition(CapiConditions.MachinesReady)
      : falseCondition(
          CapiConditions.MachinesReady,
          'NotReady',
          `${ready} of ${after.length} machines ready`,
        ),
    trueCondition(CapiConditions.MachinesUpToDate),
    after.length < desired
      ? {
          type: CapiConditions.ScalingUp,
          status: 'True',
          reason: 'ScalingUp',
          message: `${after.length} of ${desired} machines`,
        }
      : falseCondition(CapiConditions.ScalingUp, 'NotScalingUp', 'at the desired number of machines'),
    after.length > desired || deleting > 0
      ? {
          type: CapiConditions.ScalingDown,
          status: 'True',
          reason: 'ScalingDown',
          message: `${deleting} machine(s) being deleted`,
        }
      : falseCondition(CapiConditions.ScalingDown, 'NotScalingDown', 'at the desired number of machines'),
  ];
  if (problem) conds.push(problem);
  const status: MachineSetStatus = {
    desiredReplicas: desired,
    replicas: after.length,
    readyReplicas: ready,
    availableReplicas: available,
    upToDateReplicas: after.length,
    selector: `${CapiLabels.setName}=${ms.metadata.name}`,
    conditions: buildConditions(ms.status.conditions, conds, iso(now)),
    observedGeneration: ms.metadata.generation,
  };
  await writeStatus(store, ms, status);
}
