/**
 * Whether two JSON values are equal as their sorted-key JSON would be (object key order and
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

/**
 * A deep copy of a JSON value (plain objects, arrays, primitives). Several times faster than a
 * JSON round trip or `structuredClone` for the small objects the controllers read, which is
 * why the object cache hands out its copies with it.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i] as unknown);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  const from = value as Record<string, unknown>;
  for (const k in from) out[k] = cloneJson(from[k]);
  return out as T;
}

/**
 * Freeze a JSON value and everything in it, so one decoded copy can be handed to many readers:
 * a reader that tries to change it throws (modules run in strict mode) instead of changing what
 * the others see. Returns the value; a value already frozen at the top is taken as frozen through.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i] as unknown);
  } else {
    const from = value as Record<string, unknown>;
    for (const k in from) deepFreeze(from[k]);
  }
  return Object.freeze(value);
}
