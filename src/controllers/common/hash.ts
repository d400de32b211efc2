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

/**
 * Whether two JSON values are equal as canonicalJson sees them (object key order and
 * `undefined` members do not count), without building either string: the change check of
 * every write, so it must not allocate.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // JSON.stringify writes NaN and ±Infinity as null
    return typeof a === 'number' && typeof b === 'number' && !Number.isFinite(a) && !Number.isFinite(b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
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
