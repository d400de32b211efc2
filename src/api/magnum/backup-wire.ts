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
    restore_status: s.restore?.phase ?? (b.spec.restore ? 'RESTORE_IN_PROGRESS' : null),
    restore_status_reason: s.restore?.reason ?? null,
    restored_at: s.restore?.finishedAt ?? null,
    links: [
      { href: `${base}/v1/clusters/${b.spec.clusterUid}/backups/${b.metadata.uid}`, rel: 'self' },
      { href: `${base}/clusters/${b.spec.clusterUid}/backups/${b.metadata.uid}`, rel: 'bookmark' },
    ],
  };
}

/** Wire form of a backup. */
export type BackupView = ReturnType<typeof backupView>;
