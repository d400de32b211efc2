import type { ApiObject } from '../domain/index.ts';
import type { AnyObject, WatchEvent } from './types.ts';

/**
 * What the engines read back from their tables is checked before it is handed out as an
 * object: a row written by an older or foreign writer must fail loudly here, not deep
 * inside a reconciler. Unknown fields pass through untouched. Every read goes through this,
 * so it checks in place, without copying the object.
 */
function storedObjectProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  if (typeof value.apiVersion !== 'string') return 'apiVersion is not a string';
  if (typeof value.kind !== 'string') return 'kind is not a string';
  const m = value.metadata;
  if (!isRecord(m)) return 'metadata is not an object';
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp'] as const)
    if (typeof m[k] !== 'string') return `metadata.${k} is not a string`;
  if (typeof m.generation !== 'number') return 'metadata.generation is not a number';
  for (const k of ['labels', 'annotations'] as const) {
    const map = m[k];
    if (!isRecord(map)) return `metadata.${k} is not an object`;
    for (const key in map) if (typeof map[key] !== 'string') return `metadata.${k}.${key} is not a string`;
  }
  const owners = m.ownerReferences;
  if (!Array.isArray(owners)) return 'metadata.ownerReferences is not a list';
  for (const o of owners as unknown[]) {
    if (!isRecord(o)) return 'an owner reference is not an object';
    for (const k of ['apiVersion', 'kind', 'name', 'uid'] as const)
      if (typeof o[k] !== 'string') return `an owner reference's ${k} is not a string`;
  }
  const finalizers = m.finalizers;
  if (!Array.isArray(finalizers) || !(finalizers as unknown[]).every((f) => typeof f === 'string'))
    return 'metadata.finalizers is not a list of strings';
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Thrown for a stored row that is not an object of this store's shape. */
export class InvalidStoredObjectError extends Error {
  override readonly name = 'InvalidStoredObjectError';
}

const EVENT_TYPES: ReadonlySet<unknown> = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/** Validate a stored object (already JSON-decoded). */
export function parseStoredObject<T extends AnyObject = ApiObject>(value: unknown): T {
  const problem = storedObjectProblem(value);
  if (problem !== undefined) throw new InvalidStoredObjectError(`stored object is invalid: ${problem}`);
  return value as T;
}

/** Validate a stored object kept as JSON text. */
export function parseStoredJson<T extends AnyObject = ApiObject>(text: string): T {
  return parseStoredObject<T>(JSON.parse(text));
}

/** Validate a feed entry's event type. */
export function parseEventType(value: unknown): WatchEvent['type'] {
  if (!EVENT_TYPES.has(value)) throw new InvalidStoredObjectError(`unknown feed event type ${String(value)}`);
  return value as WatchEvent['type'];
}

/** A BIGINT column as a JS number (PostgreSQL drivers hand them out as strings). */
export function toSafeInteger(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer: ${String(value)}`);
  return n;
}
