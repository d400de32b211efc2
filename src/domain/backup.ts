import { z } from 'zod';
import type { ApiObject, NewObject } from './object.ts';
import { capiClusterName, type MagnumClusterObject } from './magnum.ts';

/**
 * etcd backups as a service: one `EtcdBackup` object per snapshot, in the cluster's project.
 * The API creates it (on demand), the schedule and the Magnum driver create it (scheduled,
 * before an upgrade or a control-plane scale-down); the backup controller takes the snapshot,
 * encrypts it with the cluster's data key, uploads it to the object store, verifies it and
 * records the outcome. A restore is a request on the backup (`spec.restore`), carried out by
 * the same controller after everything has been validated.
 */

/** API group/version of the backup kinds. */
export const BACKUP_API_VERSION = 'backup.magnetar.io/v1';
/** Store type keys of the backup kinds. */
export const BackupTypes = {
  /** One snapshot of one cluster. */
  Backup: 'EtcdBackup.backup.magnetar.io',
  /** The per-cluster data key, encrypted at rest with the deployment's key (store name: cluster uuid). */
  DataKey: 'EtcdBackupKey.backup.magnetar.io',
} as const;

/** Finalizer the backup controller keeps until the stored object is deleted. */
export const BACKUP_FINALIZER = 'backup.magnetar.io/object';
/** Label on backups: the Magnum cluster uuid they were taken from. */
export const LABEL_BACKUP_CLUSTER = 'backup.magnetar.io/cluster-uuid';

/** Why a backup was taken. */
export type BackupTrigger = 'on-demand' | 'scheduled' | 'pre-upgrade' | 'pre-scale-down';

/** Status of a backup (Magnum-style strings). */
export type BackupPhase = 'CREATE_IN_PROGRESS' | 'COMPLETE' | 'FAILED';

/** Status of the last restore requested from a backup. */
export type RestorePhase = 'RESTORE_IN_PROGRESS' | 'RESTORE_COMPLETE' | 'RESTORE_FAILED';

/** What etcd's `snapshot status` reports (the emulation computes the same fields). */
export interface SnapshotStatus {
  /** Store revision the snapshot was taken at. */
  revision: number;
  /** Number of keys in the snapshot. */
  totalKeys: number;
  /** 32-bit hash of the content (etcd: CRC-32 of the database; emulation: first 32 bits of SHA-256). */
  hash: number;
  /** Size of the snapshot before encryption, bytes. */
  sizeBytes: number;
  /** True when the snapshot was produced by the emulated control plane (embedded cloud). */
  emulated: boolean;
}

/** A restore asked for through the API. */
export interface RestoreRequest {
  /** Fresh id per request (a new request bumps the generation). */
  requestId: string;
  /** Magnum cluster uuid to restore into. */
  targetClusterUid: string;
  requestedAt: string;
  userId: string;
}

/** What the user (or the schedule, or the driver) asked for. */
export interface BackupSpec {
  /** Magnum cluster uuid (kept after the cluster is deleted). */
  clusterUid: string;
  /** Magnum cluster name at the time of the backup. */
  clusterName: string;
  /** CAPI Cluster name (Magnum's `stack_id`). */
  capiName: string;
  trigger: BackupTrigger;
  /** Who asked (the cluster owner for automatic backups). */
  userId: string;
  /** Delete this backup (and its stored object) once its cluster is gone. */
  deleteWithCluster: boolean;
  restore?: RestoreRequest;
}

/** Observed state of a restore. */
export interface RestoreStatus {
  requestId: string;
  phase: RestorePhase;
  reason: string;
  targetClusterUid: string;
  startedAt: string;
  finishedAt?: string;
  /** Time after which control-plane machines count as rebuilt from the snapshot. */
  rolloutAfter?: string;
}

/** Observed state of a backup, written by the backup controller only. */
export interface BackupStatus {
  phase?: BackupPhase;
  /** Progress while in progress, the cause when failed. */
  reason?: string;
  container?: string;
  object?: string;
  /** Size of the stored (encrypted) object, bytes. */
  storedBytes?: number;
  /** `sha256:<hex>` of the stored object. */
  checksum?: string;
  /** Swift's ETag (MD5) of the stored object. */
  etag?: string;
  /** Id of the cluster data key the snapshot is encrypted with. */
  keyId?: string;
  snapshot?: SnapshotStatus;
  completedAt?: string;
  verifiedAt?: string;
  restore?: RestoreStatus;
}

export type BackupObject = ApiObject<BackupSpec, BackupStatus>;

/** The per-cluster data key object. */
export interface BackupKeySpec {
  clusterUid: string;
  /** The 32-byte key, sealed with the deployment's encryption key (`v1.<key id>.<iv>.<tag>.<ct>`). */
  sealedKey: string;
  /** Identifier of the data key (first 8 hex digits of its SHA-256). */
  keyId: string;
}
export type BackupKeyObject = ApiObject<BackupKeySpec, Record<string, never>>;

/** The Magnum status-like string of a backup. */
export function backupPhase(b: BackupObject): BackupPhase {
  return b.status.phase ?? 'CREATE_IN_PROGRESS';
}

/** Cluster labels that control backups. */
export const BACKUP_LABELS = {
  /** `off`, or an interval such as `30m`, `6h`, `1d`, `1d12h`. */
  schedule: 'etcd_backup_schedule',
  /** How many COMPLETE backups to keep (the oldest go first). */
  retention: 'etcd_backup_retention',
  /** `true` (default) keeps backups after the cluster is deleted; `false` deletes them with it. */
  keepOnDelete: 'etcd_backup_keep_on_delete',
} as const;

/** Shortest schedule interval accepted. */
export const MIN_BACKUP_INTERVAL_MS = 15 * 60_000;

/**
 * Parse a schedule: `off` (or `none`, `0`) → null; an interval `<n>d<n>h<n>m` (at least one part,
 * e.g. `30m`, `6h`, `1d`, `1d12h`) → milliseconds. Returns an error message when invalid or
 * shorter than 15 minutes.
 */
export function parseBackupSchedule(value: string): { intervalMs: number | null } | { error: string } {
  const v = value.trim().toLowerCase();
  if (v === 'off' || v === 'none' || v === '0') return { intervalMs: null };
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(v);
  if (!m || v === '') {
    return {
      error: `${BACKUP_LABELS.schedule} "${value}" is not an interval: use off, or a number of days, hours and minutes such as 30m, 6h, 1d or 1d12h.`,
    };
  }
  const ms = (Number(m[1] ?? 0) * 24 * 60 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) * 60_000;
  if (ms < MIN_BACKUP_INTERVAL_MS) {
    return { error: `${BACKUP_LABELS.schedule} "${value}" is shorter than the minimum of 15m.` };
  }
  return { intervalMs: ms };
}

/** Parse a retention count (a whole number ≥ 1), or an error message. */
export function parseBackupRetention(value: string): { count: number } | { error: string } {
  const v = value.trim();
  if (!/^\d+$/.test(v) || Number(v) < 1) {
    return { error: `${BACKUP_LABELS.retention} "${value}" must be a whole number of backups, at least 1.` };
  }
  return { count: Number(v) };
}

/** The operator's backup settings, with their defaults. */
export const BackupPolicySchema = z
  .object({
    /** Schedule of clusters without an `etcd_backup_schedule` label. @default "24h" */
    defaultSchedule: z
      .string()
      .default('24h')
      .refine((s) => !('error' in parseBackupSchedule(s)), 'not a valid schedule (off, 30m, 6h, 1d…)'),
    /** Retention of clusters without an `etcd_backup_retention` label. @default 7 */
    defaultRetention: z.number().int().min(1).default(7),
    /** Take a snapshot before every upgrade; the upgrade waits for it. @default true */
    snapshotBeforeUpgrade: z.boolean().default(true),
    /** Take a snapshot before the control plane is scaled down; the resize waits for it. @default true */
    snapshotBeforeControlPlaneScaleDown: z.boolean().default(true),
    /** Swift container (in the cluster's project) holding the encrypted snapshots. @default magnetar-etcd-backups */
    container: z.string().min(1).max(256).default('magnetar-etcd-backups'),
    /** Keep backups when a cluster without an `etcd_backup_keep_on_delete` label is deleted. @default true */
    keepOnClusterDelete: z.boolean().default(true),
  })
  .strict();

/** The operator's backup settings. */
export type BackupPolicy = z.infer<typeof BackupPolicySchema>;

/** Every default of {@link BackupPolicySchema}. */
export const defaultBackupPolicy: BackupPolicy = Object.freeze(BackupPolicySchema.parse({}));

/**
 * The effective schedule, retention and keep-on-delete of a cluster: labels over the policy. An
 * invalid label is reported in `problems` and the policy's value is used, so a typo never leaves a
 * cluster without backups.
 */
export function clusterBackupSettings(
  policy: BackupPolicy,
  labels: Readonly<Record<string, string>>,
): { intervalMs: number | null; retention: number; keepOnDelete: boolean; problems: string[] } {
  const problems: string[] = [];
  const fallback = parseBackupSchedule(policy.defaultSchedule);
  let intervalMs = 'error' in fallback ? null : fallback.intervalMs;
  const label = labels[BACKUP_LABELS.schedule];
  if (label !== undefined) {
    const sched = parseBackupSchedule(label);
    if ('error' in sched) problems.push(sched.error);
    else intervalMs = sched.intervalMs;
  }
  let retention = policy.defaultRetention;
  const ret = labels[BACKUP_LABELS.retention];
  if (ret !== undefined) {
    const r = parseBackupRetention(ret);
    if ('error' in r) problems.push(r.error);
    else retention = r.count;
  }
  const keep = labels[BACKUP_LABELS.keepOnDelete];
  const keepOnDelete = keep === undefined ? policy.keepOnClusterDelete : keep.toLowerCase() !== 'false';
  return { intervalMs, retention, keepOnDelete, problems };
}

/** The object name of a backup in the container: `<capi name>/<backup name>.etcd-snapshot.enc`. */
export function backupObjectName(b: { metadata: { name: string }; spec: { capiName: string } }): string {
  return `${b.spec.capiName}/${b.metadata.name}.etcd-snapshot.enc`;
}

/** A compact UTC stamp for backup names: `20260101t120000`. */
export function backupStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').toLowerCase();
}

/** A new backup object of a Magnum cluster (not yet stored); names are generated unless given. */
export function newBackupObject(
  policy: BackupPolicy,
  mc: MagnumClusterObject,
  trigger: BackupTrigger,
  options: { name?: string; userId?: string; now: number },
): NewObject<BackupObject['spec'], BackupObject['status']> {
  const capi = mc.status.stackId ?? capiClusterName(mc);
  const keep = clusterBackupSettings(policy, mc.spec.labels).keepOnDelete;
  return {
    apiVersion: BACKUP_API_VERSION,
    kind: 'EtcdBackup',
    metadata: {
      ...(options.name ? { name: options.name } : { generateName: `${capi}-${backupStamp(options.now)}-` }),
      namespace: mc.metadata.namespace,
      labels: { [LABEL_BACKUP_CLUSTER]: mc.metadata.uid },
    },
    spec: {
      clusterUid: mc.metadata.uid,
      clusterName: mc.metadata.name,
      capiName: capi,
      trigger,
      userId: options.userId ?? mc.spec.userId,
      deleteWithCluster: !keep,
    },
    status: { phase: 'CREATE_IN_PROGRESS', reason: 'Taking the snapshot' },
  };
}
