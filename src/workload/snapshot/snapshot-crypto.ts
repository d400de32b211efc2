import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  BACKUP_API_VERSION,
  BackupTypes,
  ConflictError,
  NotFoundError,
  UnprocessableError,
  type BackupKeyObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { DecryptionError, keyId, open, seal } from '../pki/encryption.ts';

/**
 * Encryption of etcd snapshots before they leave Magnetar: AES-256-GCM with a per-cluster data
 * key. The data key is stored in Magnetar's store sealed with the deployment's encryption key
 * (the same envelope as the cluster CAs' private keys), so a stolen object-store account or
 * database alone reveals nothing.
 *
 * File layout: `MAGNETAR-ETCD-SNAPSHOT\n` + one JSON header line + ciphertext + 16-byte tag.
 * The magic line and the header are authenticated (GCM additional data), so the recorded
 * cluster and backup cannot be swapped.
 */

const MAGIC = 'MAGNETAR-ETCD-SNAPSHOT\n';
const TAG_BYTES = 16;

const HeaderSchema = z.object({
  v: z.literal(1),
  alg: z.literal('AES-256-GCM'),
  clusterUid: z.string(),
  backupUid: z.string(),
  keyId: z.string(),
  iv: z.string(),
  emulated: z.boolean(),
});
/** The authenticated header of an encrypted snapshot. */
export type SnapshotHeader = z.infer<typeof HeaderSchema>;

/** Why an encrypted snapshot cannot be used: the reason names what is wrong. */
export class SnapshotIntegrityError extends UnprocessableError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'SnapshotIntegrity', ...(cause === undefined ? {} : { cause }) });
  }
}

/** Encrypt snapshot bytes. */
export function encryptSnapshot(
  dataKey: Buffer,
  header: Omit<SnapshotHeader, 'v' | 'alg' | 'iv' | 'keyId'>,
  plaintext: Buffer,
): Buffer {
  const iv = randomBytes(12);
  const h: SnapshotHeader = {
    v: 1,
    alg: 'AES-256-GCM',
    ...header,
    keyId: keyId(dataKey),
    iv: iv.toString('base64'),
  };
  const prefix = Buffer.from(`${MAGIC}${JSON.stringify(h)}\n`, 'utf8');
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(prefix);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([prefix, ct, cipher.getAuthTag()]);
}

/** Read the header of an encrypted snapshot (not yet authenticated). */
export function readSnapshotHeader(file: Buffer): { header: SnapshotHeader; prefix: Buffer } {
  if (file.subarray(0, MAGIC.length).toString('utf8') !== MAGIC)
    throw new SnapshotIntegrityError('the stored object is not an encrypted Magnetar etcd snapshot');
  const end = file.indexOf(0x0a, MAGIC.length);
  if (end < 0) throw new SnapshotIntegrityError('the stored object is truncated (no header)');
  let header: unknown;
  try {
    header = JSON.parse(file.subarray(MAGIC.length, end).toString('utf8'));
  } catch (cause) {
    throw new SnapshotIntegrityError('the stored object has a corrupted header', cause);
  }
  const r = HeaderSchema.safeParse(header);
  if (!r.success) throw new SnapshotIntegrityError('the stored object has an unexpected header');
  return { header: r.data, prefix: file.subarray(0, end + 1) };
}

/** Decrypt and authenticate an encrypted snapshot. SnapshotIntegrityError when it was altered or truncated. */
export function decryptSnapshot(
  dataKey: Buffer,
  file: Buffer,
): { header: SnapshotHeader; plaintext: Buffer } {
  const { header, prefix } = readSnapshotHeader(file);
  if (header.keyId !== keyId(dataKey))
    throw new SnapshotIntegrityError(
      `the snapshot was encrypted with data key ${header.keyId}, but the cluster's data key is ${keyId(dataKey)}`,
    );
  const body = file.subarray(prefix.length);
  if (body.length < TAG_BYTES) throw new SnapshotIntegrityError('the stored object is truncated');
  try {
    const d = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(header.iv, 'base64'));
    d.setAAD(prefix);
    d.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const plaintext = Buffer.concat([d.update(body.subarray(0, body.length - TAG_BYTES)), d.final()]);
    return { header, plaintext };
  } catch (cause) {
    throw new SnapshotIntegrityError(
      'the stored object failed authentication (corrupted, truncated or tampered with)',
      cause,
    );
  }
}

/** `sha256:<hex>` of bytes. */
export function sha256Checksum(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/**
 * The per-cluster data keys, as `EtcdBackupKey` objects named after the cluster uuid in its
 * project. They outlive the cluster (its backups stay restorable) and go with its last backup.
 */
export class BackupKeys {
  constructor(
    private readonly store: ObjectStore,
    /** The deployment's 32-byte encryption key (`workload-encryption.key`). */
    private readonly encryptionKey: Buffer,
  ) {}

  private context(project: string, clusterUid: string): string {
    return `${project}/${BackupTypes.DataKey}/${clusterUid}`;
  }

  /** The data key of a cluster, created on first use. */
  async ensure(project: string, clusterUid: string): Promise<{ key: Buffer; keyId: string }> {
    const existing = await this.find(project, clusterUid);
    if (existing) return existing;
    const key = randomBytes(32);
    try {
      await this.store.create<BackupKeyObject>({
        apiVersion: BACKUP_API_VERSION,
        kind: 'EtcdBackupKey',
        metadata: { name: clusterUid, namespace: project },
        spec: {
          clusterUid,
          keyId: keyId(key),
          sealedKey: seal(this.encryptionKey, key.toString('base64'), this.context(project, clusterUid)),
        },
      });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      const raced = await this.find(project, clusterUid);
      if (raced) return raced;
      throw err;
    }
    return { key, keyId: keyId(key) };
  }

  /** The data key of a cluster; NotFoundError when it is missing, UnprocessableError when it cannot be unsealed. */
  async get(project: string, clusterUid: string): Promise<{ key: Buffer; keyId: string }> {
    const found = await this.find(project, clusterUid);
    if (!found)
      throw new NotFoundError(
        `The encryption key of the backups of cluster ${clusterUid} is missing, so they cannot be decrypted.`,
        { code: 'BackupKeyMissing' },
      );
    return found;
  }

  private async find(
    project: string,
    clusterUid: string,
  ): Promise<{ key: Buffer; keyId: string } | undefined> {
    const o = await this.store.get<BackupKeyObject>(BackupTypes.DataKey, project, clusterUid);
    if (!o) return undefined;
    try {
      const key = Buffer.from(
        open(this.encryptionKey, o.spec.sealedKey, this.context(project, clusterUid)),
        'base64',
      );
      return { key, keyId: keyId(key) };
    } catch (err) {
      if (err instanceof DecryptionError)
        throw new UnprocessableError(
          `The backup data key of cluster ${clusterUid} cannot be unsealed: ${err.message}`,
          {
            code: 'BackupKeyUnusable',
            cause: err,
          },
        );
      throw err;
    }
  }

  /** Remove a cluster's data key (its last backup is gone). */
  async delete(project: string, clusterUid: string): Promise<void> {
    try {
      await this.store.delete(BackupTypes.DataKey, project, clusterUid);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
