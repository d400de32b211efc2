import {
  CapiTypes,
  MAGNUM_FINALIZER,
  type MagnumClusterObject,
  type NodeGroupObject,
  type OpenStackClusterObject,
} from '../../domain/index.ts';
import type { Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { deleteObject, removeFinalizer, writeStatus } from '../common/writes.ts';
import { releaseKeypairCopy } from './magnum-checks.ts';
import { findTemplate, type MagnumNames } from './magnum-names.ts';

/**
 * Deleting a Magnum cluster in any state: delete its CAPI Cluster (which removes machines,
 * control plane and infrastructure in order), wait until it and its infrastructure are gone,
 * then remove the keypair copy and the cluster's CAs, and finally let the node groups and the
 * cluster go. `status.reason` says what is being waited for.
 */
export async function reconcileMagnumDelete(
  env: Env,
  ctx: ReconcileContext,
  mc: MagnumClusterObject,
  nodeGroups: readonly NodeGroupObject[],
  names: MagnumNames,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const ns = mc.metadata.namespace;
  const say = async (reason: string) => {
    if (mc.status.reason === reason && !mc.status.deleteFailed) return;
    mc = await writeStatus(store, mc, { ...mc.status, reason, deleteFailed: false });
  };
  if (!mc.spec.missingRequiredFields?.length) {
    const capiGone = await deleteObject(store, CapiTypes.Cluster, ns, names.capi);
    if (!capiGone) {
      const osc = await store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, ns, names.capi);
      const cond = osc?.status.conditions?.find((c) => c.type === 'Deleting');
      const machines = await env.cache.listByCluster(CapiTypes.Machine, ns, names.capi);
      await say(
        machines.length > 0
          ? `deleting ${machines.length} machine(s)`
          : osc
            ? `deleting cluster infrastructure${cond?.message ? `: ${cond.message}` : ''}`
            : 'deleting cluster',
      );
      return { requeueAfterMs: 10_000 };
    }
    // Anything a half-finished create left without a Cluster owning it.
    for (const type of [CapiTypes.OpenStackCluster, CapiTypes.KubeadmControlPlane]) {
      const name = type === CapiTypes.KubeadmControlPlane ? names.controlPlane : names.capi;
      if (!(await deleteObject(store, type, ns, name))) {
        await say(`deleting ${type.split('.')[0]} ${name}`);
        return { requeueAfterMs: 5_000 };
      }
    }
    for (const type of [
      CapiTypes.MachineDeployment,
      CapiTypes.MachineHealthCheck,
      CapiTypes.OpenStackMachineTemplate,
      CapiTypes.KubeadmConfigTemplate,
    ]) {
      for (const o of await env.cache.listByCluster(type, ns, names.capi)) {
        if (!(await deleteObject(store, type, ns, o.metadata.name))) {
          await say(`deleting ${o.kind} ${o.metadata.name}`);
          return { requeueAfterMs: 5_000 };
        }
      }
    }
    const cloud = await env.deps.cloud(ns);
    await releaseKeypairCopy(store, cloud, mc, await findTemplate(store, mc), names.capi);
    await env.deps.pki.deleteCluster({ namespace: ns, name: names.capi });
  }
  for (const ng of nodeGroups) await removeFinalizer(store, ng, MAGNUM_FINALIZER);
  await removeFinalizer(store, mc, MAGNUM_FINALIZER);
}
