import {
  CapiLabels,
  CapiTypes,
  MagnumTypes,
  backupPhase,
  type BackupObject,
  type KubeadmControlPlaneObject,
  type MachineObject,
  type MagnumClusterObject,
  type RestoreRequest,
  type RestoreStatus,
} from '../../domain/index.ts';
import type { CloudClients } from '../../cloud/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { decryptSnapshot, sha256Checksum } from '../../workload/index.ts';
import { cloudErrorMessage } from '../common/cloud-errors.ts';
import { iso } from '../common/writes.ts';
import { magnumNames } from '../magnum-driver/magnum-names.ts';
import type { BackupDeps } from './backup-deps.ts';
import { messageOf, notRunningReason } from './backup-take.ts';

/**
 * Restore a cluster from a backup, as etcd's restore procedure does: validate everything first
 * (the backup is complete, the target is the backup's cluster — or a new cluster when the
 * original is gone —, the stored object's checksum, its authenticated header, decryption with
 * the cluster's data key, the snapshot's status), and only then replace the cluster's state
 * in one atomic write and roll out a new control plane (`KubeadmControlPlane.spec.rollout.after`).
 * Any failure before that leaves the cluster untouched.
 */
export async function startRestore(
  store: ObjectStore,
  deps: BackupDeps,
  cloud: () => Promise<CloudClients>,
  backup: BackupObject,
  request: RestoreRequest,
  now: number,
): Promise<RestoreStatus> {
  const base = {
    requestId: request.requestId,
    targetClusterUid: request.targetClusterUid,
    startedAt: iso(now),
  };
  const fail = (reason: string): RestoreStatus => ({
    ...base,
    phase: 'RESTORE_FAILED',
    reason: `Restore refused, the cluster was not changed: ${reason}`,
    finishedAt: iso(now),
  });
  if (backupPhase(backup) !== 'COMPLETE') return fail(`backup ${backup.metadata.name} is not COMPLETE.`);
  const target = await store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, request.targetClusterUid);
  const running = await notRunningReason(store, target, request.targetClusterUid);
  if (running.reason !== undefined || !target) return fail(running.reason ?? 'the cluster is gone.');
  if (request.targetClusterUid !== backup.spec.clusterUid) {
    const source = await store.getByUid(MagnumTypes.Cluster, backup.spec.clusterUid);
    if (source)
      return fail(
        `backup ${backup.metadata.name} is a snapshot of another cluster (${backup.spec.clusterName}, ${backup.spec.clusterUid}).`,
      );
    if (target.metadata.namespace !== backup.metadata.namespace)
      return fail('the backup belongs to another project.');
  }
  const { container, object, checksum } = backup.status;
  if (!container || !object || !checksum) return fail('the backup has no stored object recorded.');
  let file: Buffer;
  try {
    file = (await (await cloud()).objectStore.getObject(container, object)).data;
  } catch (err) {
    return fail(`downloading ${container}/${object} failed: ${cloudErrorMessage(err)}`);
  }
  if (sha256Checksum(file) !== checksum)
    return fail(
      `the stored object ${container}/${object} does not match its recorded checksum (corrupted or truncated).`,
    );
  let plaintext: Buffer;
  try {
    const { key } = await deps.keys.get(backup.metadata.namespace, backup.spec.clusterUid);
    const opened = decryptSnapshot(key, file);
    if (
      opened.header.clusterUid !== backup.spec.clusterUid ||
      opened.header.backupUid !== backup.metadata.uid
    )
      return fail('the stored object belongs to another backup.');
    plaintext = opened.plaintext;
    const status = deps.snapshotter.check(plaintext, backup.spec.clusterUid);
    const rec = backup.status.snapshot;
    if (
      rec &&
      (status.hash !== rec.hash || status.totalKeys !== rec.totalKeys || status.revision !== rec.revision)
    )
      return fail('the snapshot status does not match the one recorded when the backup was taken.');
  } catch (err) {
    return fail(messageOf(err));
  }

  // Validated: replace the state (atomic), then a new control plane from it.
  const names = magnumNames(target);
  await deps.snapshotter.restore(
    { project: target.metadata.namespace, capiName: names.capi, clusterUid: target.metadata.uid },
    plaintext,
  );
  const after = iso(now);
  const kcp = await store.get<KubeadmControlPlaneObject>(
    CapiTypes.KubeadmControlPlane,
    target.metadata.namespace,
    names.controlPlane,
  );
  if (kcp) {
    await store.update<KubeadmControlPlaneObject>({
      ...kcp,
      spec: { ...kcp.spec, rollout: { ...(kcp.spec.rollout ?? {}), after } },
    });
  }
  return {
    ...base,
    phase: 'RESTORE_IN_PROGRESS',
    reason: `State restored from revision ${backup.status.snapshot?.revision ?? '?'}; replacing the control plane`,
    rolloutAfter: after,
  };
}

/** Progress of a restore whose state was applied: done once every control-plane machine is newer than the restore and joined. */
export async function restoreProgress(
  store: ObjectStore,
  status: RestoreStatus,
  now: number,
): Promise<RestoreStatus> {
  const target = await store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, status.targetClusterUid);
  if (!target || target.metadata.deletionTimestamp)
    return {
      ...status,
      phase: 'RESTORE_FAILED',
      reason: 'The cluster was deleted during the restore',
      finishedAt: iso(now),
    };
  const names = magnumNames(target);
  const kcp = await store.get<KubeadmControlPlaneObject>(
    CapiTypes.KubeadmControlPlane,
    target.metadata.namespace,
    names.controlPlane,
  );
  const machines = (
    await store.list<MachineObject>(CapiTypes.Machine, {
      namespace: target.metadata.namespace,
      labelSelector: [
        { key: CapiLabels.clusterName, operator: 'In', values: [names.capi] },
        { key: CapiLabels.controlPlane, operator: 'Exists', values: [] },
      ],
    })
  ).items;
  const after = Date.parse(status.rolloutAfter ?? status.startedAt);
  // Done when only machines built after the restore remain (the old ones are gone, not just leaving).
  const fresh = machines.filter(
    (m) =>
      !m.metadata.deletionTimestamp && Date.parse(m.metadata.creationTimestamp) >= after && m.status.nodeRef,
  );
  const want = kcp?.spec.replicas ?? 1;
  if (!kcp || (fresh.length >= want && fresh.length === machines.length)) {
    return {
      ...status,
      phase: 'RESTORE_COMPLETE',
      reason: `Restored; ${fresh.length} control-plane machine(s) rebuilt from the snapshot`,
      finishedAt: iso(now),
    };
  }
  return {
    ...status,
    reason: `State restored; control plane being replaced (${fresh.length}/${want} new machines joined)`,
  };
}
