import {
  BackupTypes,
  LABEL_BACKUP_CLUSTER,
  MagnumTypes,
  backupPhase,
  clusterBackupSettings,
  newBackupObject,
  magnumStatus,
  type ApiObject,
  type BackupObject,
  type MagnumClusterObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { Env } from '../common/env.ts';
import { specView } from '../common/views.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { deleteObject } from '../common/writes.ts';
import type { BackupDeps } from './backup-deps.ts';

/** While a cluster is not running, look again this often for its schedule, ms. */
const NOT_RUNNING_RECHECK_MS = 5 * 60_000;

/** A new backup of a cluster (not yet stored). */
export const newBackup = newBackupObject;

/** The backups of a cluster, oldest first. */
export async function backupsOf(
  store: ObjectStore,
  namespace: string,
  clusterUid: string,
): Promise<BackupObject[]> {
  const r = await store.list<BackupObject>(BackupTypes.Backup, {
    namespace,
    labelSelector: [{ key: LABEL_BACKUP_CLUSTER, operator: 'In', values: [clusterUid] }],
  });
  return r.items.sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp));
}

/**
 * Schedules and retention, per Magnum cluster: a `scheduled` backup every
 * `etcd_backup_schedule` (the interval counts from the last scheduled backup, or from the
 * cluster's creation), the oldest COMPLETE backups pruned beyond `etcd_backup_retention`, and
 * a deleted cluster's backups removed when it asked for that (`etcd_backup_keep_on_delete=false`).
 * Time comes from the injected clock.
 */
export function backupScheduleReconciler(env: Env, deps: BackupDeps): Reconciler {
  return {
    name: 'etcd-backup-schedule',
    type: MagnumTypes.Cluster,
    view: clusterForSchedule,
    watches: [
      {
        type: BackupTypes.Backup,
        map: async (o) => {
          const spec = o.spec as Partial<BackupObject['spec']>;
          const mc = spec.clusterUid
            ? await env.store.getByUid(MagnumTypes.Cluster, spec.clusterUid)
            : undefined;
          if (mc) return [{ namespace: mc.metadata.namespace, name: mc.metadata.name }];
          return spec.clusterName ? [{ namespace: o.metadata.namespace, name: spec.clusterName }] : [];
        },
      },
    ],
    reconcile: (ctx, ref) => reconcileSchedule(deps, ctx, ref),
  };
}

/**
 * A Magnum cluster as its backup schedule reads it: metadata and spec (the backup labels) and
 * whether it is at rest (`*_COMPLETE`); not each step of its status while it is being built,
 * which the schedule waits out with a timer of its own.
 */
function clusterForSchedule(o: ApiObject): unknown {
  return [specView(o), magnumStatus(o as unknown as MagnumClusterObject).endsWith('_COMPLETE')];
}

async function reconcileSchedule(
  deps: BackupDeps,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  const mc = await store.get<MagnumClusterObject>(MagnumTypes.Cluster, ref.namespace, ref.name);
  if (!mc) return pruneOrphans(ctx, ref);
  if (mc.metadata.deletionTimestamp) return;
  const settings = clusterBackupSettings(deps.policy, mc.spec.labels);
  for (const p of settings.problems) ctx.log.info({ cluster: mc.metadata.name }, `${p} Using the default.`);
  const backups = await backupsOf(store, mc.metadata.namespace, mc.metadata.uid);

  // Retention: the oldest COMPLETE backups beyond the count go (their objects with them).
  const complete = backups.filter((b) => !b.metadata.deletionTimestamp && backupPhase(b) === 'COMPLETE');
  for (const old of complete.slice(0, Math.max(0, complete.length - settings.retention))) {
    if (old.spec.restore && old.status.restore?.phase === 'RESTORE_IN_PROGRESS') continue;
    await deleteObject(store, BackupTypes.Backup, old.metadata.namespace, old.metadata.name);
  }

  if (settings.intervalMs === null) return;
  const now = ctx.clock.now();
  const status = magnumStatus(mc);
  if (!status.endsWith('_COMPLETE'))
    return { requeueAfterMs: Math.min(settings.intervalMs, NOT_RUNNING_RECHECK_MS) };
  const scheduled = backups.filter((b) => b.spec.trigger === 'scheduled');
  const last = scheduled.at(-1)?.metadata.creationTimestamp ?? mc.metadata.creationTimestamp;
  const due = Date.parse(last) + settings.intervalMs;
  if (now < due) return { requeueAfterMs: due - now };
  await store.create<BackupObject>(newBackup(deps.policy, mc, 'scheduled', { now }));
  ctx.log.info({ cluster: mc.metadata.name }, 'scheduled etcd backup created');
  return { requeueAfterMs: settings.intervalMs };
}

/** A cluster that is gone: delete the backups that asked to go with it. */
async function pruneOrphans(ctx: ReconcileContext, ref: ObjectRef): Promise<void> {
  const { store } = ctx;
  const all = await store.list<BackupObject>(BackupTypes.Backup, { namespace: ref.namespace });
  for (const b of all.items) {
    if (b.spec.clusterName !== ref.name || !b.spec.deleteWithCluster || b.metadata.deletionTimestamp)
      continue;
    if (await store.getByUid(MagnumTypes.Cluster, b.spec.clusterUid)) continue;
    await deleteObject(store, BackupTypes.Backup, b.metadata.namespace, b.metadata.name);
  }
}
