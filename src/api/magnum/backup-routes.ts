import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  BackupTypes,
  CapiAnnotations,
  CapiTypes,
  ConflictError,
  InputError,
  LABEL_BACKUP_CLUSTER,
  MagnumTypes,
  NotFoundError,
  backupPhase,
  defaultBackupPolicy,
  magnumStatus,
  newBackupObject,
  type BackupObject,
  type BackupPolicy,
  type CapiClusterObject,
  type MagnumClusterObject,
} from '../../domain/index.ts';
import { backupView } from './backup-wire.ts';
import { requireRole, stateOf, type Caller, type Env } from './context.ts';
import { findCluster } from './lookup.ts';
import { isUuidLike } from './pagination.ts';
import { retryOnConflict } from './writes.ts';

/**
 * etcd backups, a Magnetar extension beside the Magnum v1 API (same token, policy and error
 * shape): `/v1/clusters/{cluster}/backups` (POST on demand, GET list), `/{backup}` (GET, DELETE),
 * `/{backup}/actions/restore` (POST), and `/v1/backups` (every backup of the project, also of
 * deleted clusters) with `/v1/backups/{backup}` (GET, DELETE). See docs/adr/0007-etcd-backups.md.
 */
export function backupRoutes(
  app: FastifyInstance,
  env: Env,
  policy: BackupPolicy = defaultBackupPolicy,
): void {
  const base = () => env.deps.baseUrl();
  const raw = env.deps.store;

  const projectBackups = async (project: string): Promise<BackupObject[]> =>
    (await raw.list<BackupObject>(BackupTypes.Backup, { namespace: project })).items;

  const backupsOf = async (cluster: MagnumClusterObject): Promise<BackupObject[]> =>
    (
      await raw.list<BackupObject>(BackupTypes.Backup, {
        namespace: cluster.metadata.namespace,
        labelSelector: [{ key: LABEL_BACKUP_CLUSTER, operator: 'In', values: [cluster.metadata.uid] }],
      })
    ).items;

  const notFound = (ident: string) =>
    new NotFoundError(`Backup ${ident} could not be found.`, { code: 'BackupNotFound' });

  /** A backup of the caller's project by uuid or name. */
  const findBackup = async (caller: Caller, ident: string): Promise<BackupObject> => {
    const b = isUuidLike(ident)
      ? await raw.getByUid<BackupObject>(BackupTypes.Backup, ident.toLowerCase())
      : await raw.get<BackupObject>(BackupTypes.Backup, caller.projectId, ident);
    if (!b || (b.metadata.namespace !== caller.projectId && !caller.isAdmin)) throw notFound(ident);
    return b;
  };

  const requireRunning = async (cluster: MagnumClusterObject, what: string): Promise<void> => {
    const status = magnumStatus(cluster);
    if (!status.endsWith('_COMPLETE') || cluster.metadata.deletionTimestamp) {
      throw new InputError(
        `${what} cluster ${cluster.metadata.name} is not possible while its status is "${status}": its control plane must be running (a *_COMPLETE status).`,
        { code: 'ClusterNotRunning' },
      );
    }
    const capi = cluster.status.stackId
      ? await raw.get<CapiClusterObject>(
          CapiTypes.Cluster,
          cluster.metadata.namespace,
          cluster.status.stackId,
        )
      : undefined;
    if (
      !capi?.metadata.annotations[CapiAnnotations.workloadEndpoint] &&
      !capi?.spec.controlPlaneEndpoint?.host
    ) {
      throw new InputError(
        `${what} cluster ${cluster.metadata.name} is not possible: its control plane has no API endpoint.`,
        { code: 'ClusterNotRunning' },
      );
    }
  };

  const sorted = (items: BackupObject[]) =>
    items.sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp));

  app.get('/backups', async (req) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'reader', 'backup:get_all');
    return { backups: sorted(await projectBackups(caller.projectId)).map((b) => backupView(b, base())) };
  });

  app.get<{ Params: { backup: string } }>('/backups/:backup', async (req) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'reader', 'backup:get');
    return backupView(await findBackup(caller, req.params.backup), base());
  });

  const deleteBackup = async (caller: Caller, b: BackupObject): Promise<void> => {
    if (b.status.restore?.phase === 'RESTORE_IN_PROGRESS' || (b.spec.restore && !b.status.restore))
      throw new ConflictError(
        `Backup ${b.metadata.name} is being restored; delete it once the restore finished.`,
        {
          code: 'BackupBusy',
        },
      );
    void caller;
    await raw.delete(BackupTypes.Backup, b.metadata.namespace, b.metadata.name).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
  };

  app.delete<{ Params: { backup: string } }>('/backups/:backup', async (req, reply) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'member', 'backup:delete');
    await deleteBackup(caller, await findBackup(caller, req.params.backup));
    return reply.code(204).send();
  });

  app.post<{ Params: { ident: string } }>('/clusters/:ident/backups', async (req, reply) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'member', 'backup:create');
    const cluster = await findCluster(env, caller, req.params.ident, caller.isAdmin, true);
    await requireRunning(cluster, 'Backing up');
    const busy = (await backupsOf(cluster)).find((b) => backupPhase(b) === 'CREATE_IN_PROGRESS');
    if (busy)
      throw new ConflictError(
        `A backup of cluster ${cluster.metadata.name} is already in progress (${busy.metadata.name}).`,
        {
          code: 'BackupInProgress',
        },
      );
    const created = await raw.create<BackupObject>(
      newBackupObject(policy, cluster, 'on-demand', { userId: caller.userId, now: env.deps.clock.now() }),
    );
    return reply.code(202).send(backupView(created, base()));
  });

  app.get<{ Params: { ident: string } }>('/clusters/:ident/backups', async (req) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'reader', 'backup:get_all');
    const cluster = await findCluster(env, caller, req.params.ident, caller.isAdmin);
    return { backups: sorted(await backupsOf(cluster)).map((b) => backupView(b, base())) };
  });

  const clusterBackup = async (caller: Caller, ident: string, backup: string) => {
    const cluster = await findCluster(env, caller, ident, caller.isAdmin, true);
    const b = await findBackup(caller, backup);
    return { cluster, b };
  };

  app.get<{ Params: { ident: string; backup: string } }>('/clusters/:ident/backups/:backup', async (req) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'reader', 'backup:get');
    const { cluster, b } = await clusterBackup(caller, req.params.ident, req.params.backup);
    if (b.spec.clusterUid !== cluster.metadata.uid) throw notFound(req.params.backup);
    return backupView(b, base());
  });

  app.delete<{ Params: { ident: string; backup: string } }>(
    '/clusters/:ident/backups/:backup',
    async (req, reply) => {
      const { caller } = stateOf(req);
      requireRole(caller, 'member', 'backup:delete');
      const { cluster, b } = await clusterBackup(caller, req.params.ident, req.params.backup);
      if (b.spec.clusterUid !== cluster.metadata.uid) throw notFound(req.params.backup);
      await deleteBackup(caller, b);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { ident: string; backup: string } }>(
    '/clusters/:ident/backups/:backup/actions/restore',
    async (req, reply) => {
      const { caller } = stateOf(req);
      requireRole(caller, 'member', 'backup:restore');
      const result = await retryOnConflict(async () => {
        const { cluster, b } = await clusterBackup(caller, req.params.ident, req.params.backup);
        if (b.spec.clusterUid !== cluster.metadata.uid) {
          const source = await raw.getByUid(MagnumTypes.Cluster, b.spec.clusterUid);
          if (source || b.metadata.namespace !== cluster.metadata.namespace)
            throw new ConflictError(
              `Backup ${b.metadata.name} is a snapshot of another cluster (${b.spec.clusterName}); a backup restores into its own cluster, or into a new cluster once its own was deleted.`,
              { code: 'BackupOfAnotherCluster' },
            );
        }
        if (backupPhase(b) !== 'COMPLETE' || b.metadata.deletionTimestamp)
          throw new ConflictError(
            `Backup ${b.metadata.name} is ${backupPhase(b)}; only a COMPLETE backup can be restored.`,
            { code: 'BackupNotComplete' },
          );
        if (
          b.status.restore?.phase === 'RESTORE_IN_PROGRESS' ||
          (b.spec.restore && b.status.restore?.requestId !== b.spec.restore.requestId)
        )
          throw new ConflictError(`Backup ${b.metadata.name} is already being restored.`, {
            code: 'BackupBusy',
          });
        await requireRunning(cluster, 'Restoring');
        const request = {
          requestId: randomUUID(),
          targetClusterUid: cluster.metadata.uid,
          requestedAt: new Date(env.deps.clock.now()).toISOString(),
          userId: caller.userId,
        };
        const stored = await raw.update<BackupObject>({ ...b, spec: { ...b.spec, restore: request } });
        return { stored };
      });
      return reply.code(202).send(backupView(result.stored, base()));
    },
  );
}
