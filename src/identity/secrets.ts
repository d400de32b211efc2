import { randomBytes, randomUUID, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Ids, generated secrets and password hashing. Passwords and application-credential secrets
 * are stored only as scrypt hashes with a per-secret salt:
 * `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>`.
 */

/** A Keystone-style id: 32 lowercase hex characters. */
export function newId(): string {
  return randomUUID().replace(/-/g, '');
}

/** A token audit id: 22 characters of URL-safe base64, as Keystone's. */
export function newAuditId(): string {
  return randomBytes(16).toString('base64url');
}

/** A random password people can copy: 24 URL-safe characters (144 bits). */
export function newPassword(): string {
  return randomBytes(18).toString('base64url');
}

/** A random application-credential secret: 86 URL-safe characters, as Keystone generates. */
export function newSecret(): string {
  return randomBytes(64).toString('base64url');
}

/** scrypt cost parameters. */
export interface ScryptCost {
  /** CPU/memory cost, a power of two. @default 16384 */
  N: number;
  /** Block size. @default 8 */
  r: number;
  /** Parallelism. @default 1 */
  p: number;
}

/** The default cost: about 16 MiB and a few tens of milliseconds per hash. */
export const DEFAULT_SCRYPT_COST: ScryptCost = { N: 16384, r: 8, p: 1 };

const KEY_LENGTH = 32;

function derive(secret: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = {
    N: cost.N,
    r: cost.r,
    p: cost.p,
    maxmem: 256 * cost.N * cost.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hash a password or secret for storage. */
export async function hashSecret(secret: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * Check a secret against a stored hash in constant time. With no hash (unknown user), a
 * dummy hash is still computed so that response times do not reveal which users exist.
 */
export async function verifySecret(
  secret: string,
  stored: string | undefined,
  cost: ScryptCost = DEFAULT_SCRYPT_COST,
): Promise<boolean> {
  const parts = stored?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') {
    await derive(secret, Buffer.alloc(16), cost);
    return false;
  }
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(secret, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
