import {
  CapiAnnotations,
  CapiTypes,
  MagnumTypes,
  backupObjectName,
  magnumStatus,
  type BackupObject,
  type BackupStatus,
  type CapiClusterObject,
  type MagnumClusterObject,
} from '../../domain/index.ts';
import type { CloudClients } from '../../cloud/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { decryptSnapshot, encryptSnapshot, sha256Checksum } from '../../workload/index.ts';
import { cloudErrorMessage } from '../common/cloud-errors.ts';
import { iso } from '../common/writes.ts';
import type { BackupDeps, SnapshotTarget } from './backup-deps.ts';

/** A backup's outcome: the status to record. */
export type TakeOutcome = { ok: true; status: BackupStatus } | { ok: false; reason: string };

/** Statuses of a Magnum cluster in which its control plane is up and a snapshot can be taken. */
const RUNNING = /_(COMPLETE)$|^UPDATE_IN_PROGRESS$/;

/**
 * Why the cluster of a backup cannot be snapshotted now, or undefined when it can: it must
 * exist, not be deleting, be in a running status and have a serving control plane.
 */
export async function notRunningReason(
  store: ObjectStore,
  mc: MagnumClusterObject | undefined,
  clusterUid: string,
): Promise<{ reason: string; capi?: undefined } | { reason?: undefined; capi: CapiClusterObject }> {
  if (!mc) return { reason: `Cluster ${clusterUid} no longer exists.` };
  const status = magnumStatus(mc);
  if (mc.metadata.deletionTimestamp || !RUNNING.test(status))
    return { reason: `Cluster ${mc.metadata.name} is not running (status ${status}).` };
  const capiName = mc.status.stackId;
  const capi = capiName
    ? await store.get<CapiClusterObject>(CapiTypes.Cluster, mc.metadata.namespace, capiName)
    : undefined;
  if (!capi?.metadata.annotations[CapiAnnotations.workloadEndpoint] && !capi?.spec.controlPlaneEndpoint?.host)
    return { reason: `Cluster ${mc.metadata.name} is not running: its control plane has no API endpoint.` };
  return { capi };
}

/**
 * Take, encrypt, upload and verify one snapshot. Every failure is a reason a person can act on;
 * a half-uploaded object is removed.
 */
export async function takeBackup(
  store: ObjectStore,
  deps: BackupDeps,
  cloud: () => Promise<CloudClients>,
  backup: BackupObject,
  now: () => number,
): Promise<TakeOutcome> {
  const ns = backup.metadata.namespace;
  const mc = await store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, backup.spec.clusterUid);
  const running = await notRunningReason(store, mc, backup.spec.clusterUid);
  if (running.reason !== undefined) return { ok: false, reason: running.reason };
  const target: SnapshotTarget = {
    project: ns,
    capiName: backup.spec.capiName,
    clusterUid: backup.spec.clusterUid,
  };
  let snap;
  try {
    snap = await deps.snapshotter.take(target);
  } catch (err) {
    return { ok: false, reason: `Taking the snapshot failed: ${messageOf(err)}` };
  }
  const { key, keyId } = await deps.keys.ensure(ns, backup.spec.clusterUid);
  const file = encryptSnapshot(
    key,
    { clusterUid: backup.spec.clusterUid, backupUid: backup.metadata.uid, emulated: snap.status.emulated },
    snap.data,
  );
  const checksum = sha256Checksum(file);
  const container = deps.policy.container;
  const object = backupObjectName(backup);
  let objectStore;
  try {
    objectStore = (await cloud()).objectStore;
    await objectStore.createContainer(container);
  } catch (err) {
    return { ok: false, reason: `The object store refused the backup container: ${cloudErrorMessage(err)}` };
  }
  let etag: string;
  try {
    etag = (
      await objectStore.putObject(container, object, file, {
        metadata: {
          'cluster-uuid': backup.spec.clusterUid,
          'backup-uuid': backup.metadata.uid,
          'etcd-revision': String(snap.status.revision),
          encryption: 'AES-256-GCM',
          ...(snap.status.emulated ? { emulated: 'true' } : {}),
        },
      })
    ).etag;
  } catch (err) {
    await objectStore.deleteObject(container, object).catch(() => undefined);
    return { ok: false, reason: `Uploading the snapshot failed: ${cloudErrorMessage(err)}` };
  }
  // Verify what is stored, not what was sent: checksum, decrypt, snapshot status.
  try {
    const stored = await objectStore.getObject(container, object);
    if (sha256Checksum(stored.data) !== checksum)
      throw new Error('the stored object does not match the uploaded snapshot (checksum mismatch)');
    const { plaintext } = decryptSnapshot(key, stored.data);
    const status = deps.snapshotter.check(plaintext, backup.spec.clusterUid);
    if (status.hash !== snap.status.hash || status.totalKeys !== snap.status.totalKeys)
      throw new Error('the stored snapshot does not match the snapshot taken');
  } catch (err) {
    await objectStore.deleteObject(container, object).catch(() => undefined);
    return { ok: false, reason: `Verifying the stored snapshot failed: ${cloudErrorMessage(err)}` };
  }
  const at = iso(now());
  return {
    ok: true,
    status: {
      phase: 'COMPLETE',
      reason: `Snapshot at revision ${snap.status.revision} stored and verified`,
      container,
      object,
      storedBytes: file.length,
      checksum,
      etag,
      keyId,
      snapshot: snap.status,
      completedAt: at,
      verifiedAt: at,
    },
  };
}

/** The message of an error. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
