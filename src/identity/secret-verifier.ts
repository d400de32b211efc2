import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../domain/index.ts';
import { verifySecret, type ScryptCost } from './secrets.ts';

/** Options of {@link SecretVerifier}. */
export interface SecretVerifierOptions {
  /** How long a successful check is remembered. @default 300000 (5 minutes) */
  ttlMs?: number;
  /** Most remembered checks; the least recently used go first. @default 10000 */
  maxEntries?: number;
}

/**
 * Password and application-credential checks with a short memory of recent successes.
 *
 * Every `openstack` command authenticates afresh, so the same secret is checked again and again;
 * scrypt makes each check cost tens of milliseconds of CPU. After a successful check the verifier
 * remembers an HMAC of (stored hash, secret) under a key that lives only in this process, and
 * answers the same pair from memory until the entry expires. Failures are never remembered, so
 * guessing still pays the full scrypt price; a changed password changes the stored hash, so the
 * old secret is no longer found. Nothing here is ever written to disk.
 */
export class SecretVerifier {
  private readonly key = randomBytes(32);
  /** HMAC digest → expiry time; insertion order is recency order. */
  private readonly seen = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly cost: ScryptCost,
    private readonly clock: Clock,
    options: SecretVerifierOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 300_000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** Whether `secret` matches `stored` (an scrypt hash; undefined for an unknown user). */
  async verify(secret: string, stored: string | undefined): Promise<boolean> {
    if (stored === undefined) return verifySecret(secret, stored, this.cost);
    const digest = createHmac('sha256', this.key)
      .update(stored)
      .update('\0')
      .update(secret)
      .digest('base64url');
    const now = this.clock.now();
    const expires = this.seen.get(digest);
    if (expires !== undefined) {
      this.seen.delete(digest);
      if (expires > now) {
        this.seen.set(digest, expires);
        return true;
      }
    }
    const ok = await verifySecret(secret, stored, this.cost);
    if (ok) {
      this.seen.set(digest, now + this.ttlMs);
      while (this.seen.size > this.maxEntries) {
        const oldest = this.seen.keys().next().value;
        if (oldest === undefined) break;
        this.seen.delete(oldest);
      }
    }
    return ok;
  }
}
