import { createHash, randomBytes } from 'node:crypto';

/** Stable JSON (object keys sorted) for change detection and hashing. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .filter((k) => o[k] !== undefined)
          .map((k) => [k, o[k]]),
      );
    }
    return v;
  });
}

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A short DNS-safe hash of a value (template hashes, deterministic names). */
export function shortHash(value: unknown, length = 10): string {
  const digest = createHash('sha256').update(canonicalJson(value)).digest();
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[digest[i]! % ALPHABET.length];
  return s;
}

/** Five random DNS-safe characters, as Kubernetes' generateName appends. */
export function randomSuffix(length = 5): string {
  const bytes = randomBytes(length);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return s;
}
