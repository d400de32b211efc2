import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiTypes,
  type KubeadmControlPlaneObject,
  type MachineObject,
} from '../../domain/index.ts';
import { buildConditions, falseCondition } from '../common/conditions.ts';
import type { Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { deleteObject, iso, removeFinalizer, writeStatus } from '../common/writes.ts';

/**
 * Deleting a control plane: wait until the cluster's worker machines are gone (they need the
 * API to drain), then delete every control-plane machine and wait for them.
 */
export async function reconcileKcpDelete(
  env: Env,
  ctx: ReconcileContext,
  kcp: KubeadmControlPlaneObject,
  all: readonly MachineObject[],
  machines: readonly MachineObject[],
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const workers = all.filter((m) => !(CapiLabels.controlPlane in m.metadata.labels));
  const say = async (message: string) => {
    await writeStatus(store, kcp, {
      ...kcp.status,
      conditions: buildConditions(
        kcp.status.conditions,
        [falseCondition(CapiConditions.Deleting, 'Deleting', message)],
        iso(env.deps.clock.now()),
        (kcp.status.conditions ?? []).map((c) => c.type).filter((t) => t !== CapiConditions.Deleting),
      ),
    });
  };
  if (workers.length > 0) {
    await say(`waiting for ${workers.length} worker machine(s) to be deleted`);
    return { requeueAfterMs: 5_000 };
  }
  if (machines.length > 0) {
    for (const m of machines) {
      if (!m.metadata.deletionTimestamp)
        await deleteObject(store, CapiTypes.Machine, m.metadata.namespace, m.metadata.name);
    }
    await say(`waiting for ${machines.length} control plane machine(s) to be deleted`);
    return;
  }
  await removeFinalizer(store, kcp, CapiFinalizers.kubeadmControlPlane);
}
