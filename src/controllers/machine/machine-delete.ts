import {
  CapiAnnotations,
  CapiConditions,
  CapiFinalizers,
  CapiReasons,
  refTypeKey,
  type CapiClusterObject,
  type MachineObject,
} from '../../domain/index.ts';
import { buildConditions, falseCondition } from '../common/conditions.ts';
import { workloadClient, type Env } from '../common/env.ts';
import type { ReconcileContext, ReconcileResult } from '../common/runtime-types.ts';
import { deleteObject, iso, removeFinalizer, writeStatus } from '../common/writes.ts';

/**
 * Deleting a Machine, in Cluster API's order: drain the node (cordon, evict respecting
 * disruption budgets, until done or the drain timeout), delete the infrastructure (the
 * server) and wait for it to be gone, delete the bootstrap config, delete the node, then let
 * the Machine go. Drain and node deletion are skipped when the whole cluster is being deleted.
 */
export async function reconcileMachineDelete(
  env: Env,
  ctx: ReconcileContext,
  m: MachineObject,
  cluster: CapiClusterObject | undefined,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const now = env.deps.clock.now();
  const live = cluster && cluster.metadata.deletionTimestamp === undefined ? cluster : undefined;
  const setDeleting = async (reason: string, message: string, extra?: Partial<MachineObject['status']>) => {
    const conditions = buildConditions(
      m.status.conditions,
      [falseCondition(CapiConditions.Deleting, reason, message)],
      iso(now),
      m.status.conditions?.map((c) => c.type).filter((t) => t !== CapiConditions.Deleting) ?? [],
    );
    m = await writeStatus(store, m, { ...m.status, ...extra, phase: 'Deleting', conditions });
  };

  const nodeName = m.status.nodeRef?.name;
  if (nodeName && live && !(CapiAnnotations.excludeNodeDraining in m.metadata.annotations)) {
    const started = m.status.deletion?.nodeDrainStartTime;
    if (!started) {
      await setDeleting(CapiReasons.DrainingNode, `draining node ${nodeName}`, {
        deletion: { ...m.status.deletion, nodeDrainStartTime: iso(now) },
      });
    }
    const startMs = Date.parse(m.status.deletion?.nodeDrainStartTime ?? iso(now));
    const timeoutS = m.spec.deletion?.nodeDrainTimeoutSeconds ?? env.settings.nodeDrainTimeoutSeconds;
    const expired = timeoutS > 0 && now - startMs >= timeoutS * 1000;
    if (!expired) {
      const client = await workloadClient(env, live);
      if (client) {
        const result = await client.drain(nodeName, { timeoutMs: 0, signal: ctx.signal });
        if (!result.done) {
          const left = result.remaining.slice(0, 5).join(', ');
          await setDeleting(
            CapiReasons.DrainingNode,
            `draining node ${nodeName}: ${result.remaining.length} pod(s) not evicted yet (${left}); disruption budgets are respected for up to ${timeoutS} s`,
          );
          return { requeueAfterMs: 5_000 };
        }
      }
    }
  }

  // The server goes first, then the bootstrap config; each is waited for (watch events bring us back).
  const infra = m.spec.infrastructureRef;
  if (!(await deleteObject(store, refTypeKey(infra), m.metadata.namespace, infra.name))) {
    await setDeleting(
      CapiReasons.WaitingForInfrastructureDeletion,
      `waiting for ${infra.kind} ${infra.name} to be deleted`,
    );
    return;
  }
  const boot = m.spec.bootstrap.configRef;
  if (boot && !(await deleteObject(store, refTypeKey(boot), m.metadata.namespace, boot.name))) {
    await setDeleting(
      CapiReasons.WaitingForBootstrapDeletion,
      `waiting for ${boot.kind} ${boot.name} to be deleted`,
    );
    return;
  }
  if (nodeName && live) {
    const timeoutS = m.spec.deletion?.nodeDeletionTimeoutSeconds ?? 10;
    const since = Date.parse(
      m.status.deletion?.nodeDrainStartTime ?? m.metadata.deletionTimestamp ?? iso(now),
    );
    try {
      const client = await workloadClient(env, live);
      await client?.deleteNode(nodeName);
    } catch (err) {
      if (
        now - since <
        timeoutS * 1000 +
          (m.spec.deletion?.nodeDrainTimeoutSeconds ?? env.settings.nodeDrainTimeoutSeconds) * 1000
      )
        throw err;
      env.deps.log.warn({ machine: m.metadata.name, err: String(err) }, 'giving up deleting the node');
    }
    env.nodes.invalidate(live);
  }
  await removeFinalizer(store, m, CapiFinalizers.machine);
}
