import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../domain/index.ts';

/**
 * Encryption at rest of the private keys of cluster CAs: AES-256-GCM with the deployment's
 * key, bound (as additional authenticated data) to the Secret and data key it is stored
 * under, so ciphertext copied to another Secret does not decrypt.
 *
 * Envelope: `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id is the first
 * 8 hex digits of SHA-256(key), so a wrong key gives a clear error instead of a tag mismatch.
 */

/** File name of the key in the data directory. */
export const KEY_FILE = 'workload-encryption.key';

const KEY_BYTES = 32;

/** Identifier of an encryption key (not secret: a truncated hash). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function checkKey(key: Buffer): void {
  if (key.length !== KEY_BYTES)
    throw new InputError(`the encryption key must be ${KEY_BYTES} bytes, got ${key.length}`);
}

/** Encrypt `plaintext` for storage under `context` (e.g. `<namespace>/<secret>/<data key>`). */
export function seal(key: Buffer, plaintext: string, context: string): string {
  checkKey(key);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    'v1',
    keyId(key),
    iv.toString('base64url'),
    tag.toString('base64url'),
    ct.toString('base64url'),
  ].join('.');
}

/** Error raised when stored key material cannot be decrypted (wrong key, tampering, wrong context). */
export class DecryptionError extends Error {}

/** Decrypt an envelope made by {@link seal} with the same key and context. */
export function open(key: Buffer, envelope: string, context: string): string {
  checkKey(key);
  const parts = envelope.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1')
    throw new DecryptionError('stored key material is not a v1 envelope');
  const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
  if (id !== keyId(key)) {
    throw new DecryptionError(
      `stored key material was encrypted with key ${id}, but the configured key is ${keyId(key)}`,
    );
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw new DecryptionError(`stored key material for ${context} failed authentication`, { cause });
  }
}

/**
 * The deployment's encryption key: read `<dataDir>/workload-encryption.key`, or create it
 * (32 random bytes, base64, file mode 0600) on first start. Throws when the file exists but
 * does not hold a 32-byte key.
 */
export function loadOrCreateKey(dataDir: string): Buffer {
  const path = join(dataDir, KEY_FILE);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(path, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process created it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    chmodSync(path, 0o600);
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES)
    throw new Error(`${path}: expected a base64 ${KEY_BYTES}-byte key, found ${key.length} bytes`);
  return key;
}
