import {
  BackupTypes,
  backupPhase,
  kubeMinor,
  type BackupObject,
  type BackupTrigger,
  type KubeadmControlPlaneObject,
  type MagnumClusterObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { isAlreadyExists } from '../common/writes.ts';
import type { BackupDeps } from './backup-deps.ts';
import { newBackup } from './backup-schedule.ts';

/** What the Magnum driver does about the snapshot before a control-plane change. */
export type PreChangeVerdict =
  { action: 'proceed' } | { action: 'wait'; reason: string } | { action: 'fail'; reason: string };

/** The control-plane change an operation makes, if it needs a snapshot first. */
export function controlPlaneChange(
  deps: BackupDeps,
  kcp: KubeadmControlPlaneObject | undefined,
  version: string,
  masterCount: number | undefined,
): BackupTrigger | undefined {
  if (!kcp?.status.initialization?.controlPlaneInitialized && !kcp?.status.readyReplicas) return undefined;
  const from = kubeMinor(kcp.spec.version);
  const to = kubeMinor(version);
  if (
    deps.policy.snapshotBeforeUpgrade &&
    kcp.spec.version !== version &&
    from !== undefined &&
    to !== undefined
  )
    return 'pre-upgrade';
  if (
    deps.policy.snapshotBeforeControlPlaneScaleDown &&
    masterCount !== undefined &&
    masterCount < (kcp.spec.replicas ?? 1)
  )
    return 'pre-scale-down';
  return undefined;
}

/**
 * The hook the Magnum driver calls before applying an operation: an upgrade or a control-plane
 * scale-down first takes a snapshot (one per operation, named after it) and waits until it is
 * COMPLETE; a FAILED snapshot fails the operation with its reason, before anything changed.
 */
export async function preChangeSnapshot(
  store: ObjectStore,
  deps: BackupDeps | undefined,
  input: {
    cluster: MagnumClusterObject;
    kcp: KubeadmControlPlaneObject | undefined;
    version: string;
    masterCount: number | undefined;
    operationKey: string;
    now: number;
  },
): Promise<PreChangeVerdict> {
  if (!deps) return { action: 'proceed' };
  const trigger = controlPlaneChange(deps, input.kcp, input.version, input.masterCount);
  if (!trigger) return { action: 'proceed' };
  const capi =
    input.kcp?.metadata.labels['cluster.x-k8s.io/cluster-name'] ?? input.cluster.status.stackId ?? 'cluster';
  const name = `${capi}-${trigger}-${input.operationKey}`.toLowerCase().slice(0, 200);
  const ns = input.cluster.metadata.namespace;
  let b = await store.get<BackupObject>(BackupTypes.Backup, ns, name);
  if (!b) {
    try {
      b = await store.create<BackupObject>(
        newBackup(deps.policy, input.cluster, trigger, { name, now: input.now }),
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      b = await store.get<BackupObject>(BackupTypes.Backup, ns, name);
    }
  }
  const what = trigger === 'pre-upgrade' ? 'upgrade' : 'control-plane scale-down';
  if (!b) return { action: 'wait', reason: `waiting for the etcd snapshot before the ${what}` };
  switch (backupPhase(b)) {
    case 'COMPLETE':
      return { action: 'proceed' };
    case 'FAILED':
      return {
        action: 'fail',
        reason: `The etcd snapshot before the ${what} failed, so nothing was changed: ${b.status.reason ?? 'unknown reason'}`,
      };
    case 'CREATE_IN_PROGRESS':
      return {
        action: 'wait',
        reason: `waiting for the etcd snapshot ${b.metadata.name} before the ${what}`,
      };
  }
}
