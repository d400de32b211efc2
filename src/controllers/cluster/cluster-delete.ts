import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  refTypeKey,
  type ApiObject,
  type CapiClusterObject,
  type MachineObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { buildConditions, falseCondition } from '../common/conditions.ts';
import type { Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { deleteObject, iso, removeFinalizer, writeStatus } from '../common/writes.ts';

/**
 * Deleting a Cluster, in Cluster API's order: worker MachineDeployments, MachineSets and
 * Machines first (wait), then the control plane (wait), then the infrastructure cluster
 * (wait), then the templates and health checks that have no cloud resources, then the
 * finalizer. Every step is safe to repeat.
 */
export async function reconcileClusterDelete(
  env: Env,
  ctx: ReconcileContext,
  cluster: CapiClusterObject,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const ns = cluster.metadata.namespace;
  const name = cluster.metadata.name;
  const say = async (message: string) => {
    await writeStatus(store, cluster, {
      ...cluster.status,
      phase: 'Deleting',
      conditions: buildConditions(
        cluster.status.conditions,
        [falseCondition(CapiConditions.Deleting, 'Deleting', message)],
        iso(env.deps.clock.now()),
        (cluster.status.conditions ?? []).map((c) => c.type).filter((t) => t !== CapiConditions.Deleting),
      ),
    });
  };

  const mds = await env.cache.listByCluster<ApiObject>(CapiTypes.MachineDeployment, ns, name);
  const sets = await env.cache.listByCluster<ApiObject>(CapiTypes.MachineSet, ns, name);
  const machines = await env.cache.listByCluster<MachineObject>(CapiTypes.Machine, ns, name);
  const workers = machines.filter(
    (m) => !(CapiLabels.controlPlane in m.metadata.labels) || !cluster.spec.controlPlaneRef,
  );
  for (const o of [...mds, ...sets, ...workers]) {
    if (!o.metadata.deletionTimestamp) await deleteObject(store, typeOf(o), ns, o.metadata.name);
  }
  for (const mhc of await env.cache.listByCluster<ApiObject>(CapiTypes.MachineHealthCheck, ns, name)) {
    await deleteObject(store, CapiTypes.MachineHealthCheck, ns, mhc.metadata.name);
  }
  if (mds.length + sets.length + workers.length > 0) {
    await say(
      `waiting for ${workers.length} worker machine(s), ${sets.length} machine set(s) and ${mds.length} machine deployment(s) to be deleted`,
    );
    return { requeueAfterMs: 5_000 };
  }
  const cp = cluster.spec.controlPlaneRef;
  if (cp && !(await deleteObject(store, refTypeKey(cp), ns, cp.name))) {
    await say(`waiting for ${cp.kind} ${cp.name} to be deleted`);
    return { requeueAfterMs: 5_000 };
  }
  const infra = cluster.spec.infrastructureRef;
  if (infra && !(await deleteObject(store, refTypeKey(infra), ns, infra.name))) {
    await say(`waiting for ${infra.kind} ${infra.name} to be deleted`);
    return { requeueAfterMs: 5_000 };
  }
  await deleteLeftovers(store, env, ns, name);
  env.nodes.forget(cluster);
  await removeFinalizer(store, cluster, CapiFinalizers.cluster);
}

/** Templates (no cloud resources, no finalizers) that belong to the cluster. */
async function deleteLeftovers(store: ObjectStore, env: Env, ns: string, name: string): Promise<void> {
  for (const type of [CapiTypes.OpenStackMachineTemplate, CapiTypes.KubeadmConfigTemplate]) {
    for (const o of await env.cache.listByCluster<ApiObject>(type, ns, name))
      await deleteObject(store, type, ns, o.metadata.name);
  }
}

function typeOf(o: ApiObject): string {
  const slash = o.apiVersion.indexOf('/');
  return slash < 0 ? o.kind : `${o.kind}.${o.apiVersion.slice(0, slash)}`;
}
