import {
  BACKUP_FINALIZER,
  BackupTypes,
  LABEL_BACKUP_CLUSTER,
  type BackupObject,
  type BackupStatus,
} from '../../domain/index.ts';
import { CloudError } from '../../cloud/index.ts';
import type { Env } from '../common/env.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { ensureFinalizer, removeFinalizer, writeStatus } from '../common/writes.ts';
import type { BackupDeps } from './backup-deps.ts';
import { restoreProgress, startRestore } from './backup-restore.ts';
import { takeBackup } from './backup-take.ts';

/** How often a restore in progress checks the control plane's replacement, ms. */
const RESTORE_POLL_MS = 2000;

/**
 * The backup controller: takes each `EtcdBackup`'s snapshot (take → encrypt → upload → verify →
 * COMPLETE or FAILED with a reason), carries out restores asked for on it, and on delete removes
 * the stored object (and the cluster's data key with its last backup).
 */
export function backupReconciler(env: Env, deps: BackupDeps): Reconciler {
  return {
    name: 'etcd-backup',
    type: BackupTypes.Backup,
    reconcile: (ctx, ref) => reconcileBackup(env, deps, ctx, ref),
  };
}

async function reconcileBackup(
  env: Env,
  deps: BackupDeps,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let b = await store.get<BackupObject>(BackupTypes.Backup, ref.namespace, ref.name);
  if (!b) return;
  const cloud = async () => env.deps.cloud(ref.namespace);
  if (b.metadata.deletionTimestamp) return reconcileDelete(env, deps, ctx, b);
  b = await ensureFinalizer(store, b, BACKUP_FINALIZER);

  if (!b.status.phase || b.status.phase === 'CREATE_IN_PROGRESS') {
    const outcome = await takeBackup(store, deps, cloud, b, () => ctx.clock.now());
    const status: BackupStatus = outcome.ok ? outcome.status : { phase: 'FAILED', reason: outcome.reason };
    b = await writeStatus(store, b, { ...b.status, ...status });
    ctx.log.info(
      { backup: b.metadata.name, phase: status.phase, reason: status.reason },
      'etcd backup finished',
    );
  }

  const request = b.spec.restore;
  if (!request) return;
  const current = b.status.restore;
  if (current?.requestId !== request.requestId) {
    const started = await startRestore(store, deps, cloud, b, request, ctx.clock.now());
    b = await writeStatus(store, b, { ...b.status, restore: started });
    ctx.log.info({ backup: b.metadata.name, phase: started.phase, reason: started.reason }, 'etcd restore');
    return started.phase === 'RESTORE_IN_PROGRESS' ? { requeueAfterMs: RESTORE_POLL_MS } : undefined;
  }
  if (current.phase === 'RESTORE_IN_PROGRESS') {
    const next = await restoreProgress(store, current, ctx.clock.now());
    await writeStatus(store, b, { ...b.status, restore: next });
    return next.phase === 'RESTORE_IN_PROGRESS' ? { requeueAfterMs: RESTORE_POLL_MS } : undefined;
  }
}

async function reconcileDelete(
  env: Env,
  deps: BackupDeps,
  ctx: ReconcileContext,
  b: BackupObject,
): Promise<void> {
  const { store } = ctx;
  if (b.status.container && b.status.object) {
    try {
      await (
        await env.deps.cloud(b.metadata.namespace)
      ).objectStore.deleteObject(b.status.container, b.status.object);
    } catch (err) {
      // Not found counts as deleted; anything else is retried with backoff.
      if (!(err instanceof CloudError && err.kind === 'not-found')) throw err;
    }
  }
  const siblings = await store.list<BackupObject>(BackupTypes.Backup, {
    namespace: b.metadata.namespace,
    labelSelector: [{ key: LABEL_BACKUP_CLUSTER, operator: 'In', values: [b.spec.clusterUid] }],
  });
  if (siblings.items.every((s) => s.metadata.uid === b.metadata.uid))
    await deps.keys.delete(b.metadata.namespace, b.spec.clusterUid);
  await removeFinalizer(store, b, BACKUP_FINALIZER);
}
