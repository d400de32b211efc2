import { backupPhase, type BackupObject } from '../../domain/index.ts';

/** A backup in the extension's wire form (snake_case, Magnum style). */
export function backupView(b: BackupObject, base: string) {
  const s = b.status;
  return {
    uuid: b.metadata.uid,
    name: b.metadata.name,
    cluster_uuid: b.spec.clusterUid,
    cluster_name: b.spec.clusterName,
    trigger: b.spec.trigger,
    status: b.metadata.deletionTimestamp ? 'DELETE_IN_PROGRESS' : backupPhase(b),
    status_reason: s.reason ?? null,
    etcd_revision: s.snapshot?.revision ?? null,
    total_keys: s.snapshot?.totalKeys ?? null,
    hash: s.snapshot?.hash ?? null,
    size: s.snapshot?.sizeBytes ?? null,
    emulated: s.snapshot?.emulated ?? null,
    stored_bytes: s.storedBytes ?? null,
    checksum: s.checksum ?? null,
    container: s.container ?? null,
    object: s.object ?? null,
    encryption: 'AES-256-GCM',
    key_id: s.keyId ?? null,
    delete_with_cluster: b.spec.deleteWithCluster,
    created_at: b.metadata.creationTimestamp,
    completed_at: s.completedAt ?? null,
    verified_at: s.verifiedAt ?? null,
    ...restoreView(b),
    links: [
      { href: `${base}/v1/clusters/${b.spec.clusterUid}/backups/${b.metadata.uid}`, rel: 'self' },
      { href: `${base}/clusters/${b.spec.clusterUid}/backups/${b.metadata.uid}`, rel: 'bookmark' },
    ],
  };
}

/** The last restore: a request the controller has not taken up yet counts as in progress. */
function restoreView(b: BackupObject) {
  const req = b.spec.restore;
  const s = b.status.restore;
  if (req && s?.requestId !== req.requestId) {
    return {
      restore_status: 'RESTORE_IN_PROGRESS',
      restore_status_reason: 'Restore requested',
      restore_request_id: req.requestId,
      restore_cluster_uuid: req.targetClusterUid,
      restored_at: null,
    };
  }
  return {
    restore_status: s?.phase ?? null,
    restore_status_reason: s?.reason ?? null,
    restore_request_id: s?.requestId ?? null,
    restore_cluster_uuid: s?.targetClusterUid ?? null,
    restored_at: s?.finishedAt ?? null,
  };
}

/** Wire form of a backup. */
export type BackupView = ReturnType<typeof backupView>;
