import { z } from 'zod';
import type { ApiObject } from '../domain/index.ts';
import type { AnyObject, WatchEvent } from './types.ts';

/**
 * What the engines read back from their tables is checked before it is handed out as an
 * object: a row written by an older or foreign writer must fail loudly here, not deep
 * inside a reconciler. Unknown fields pass through untouched.
 */
const StoredObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string(),
    uid: z.string(),
    resourceVersion: z.string(),
    generation: z.number(),
    creationTimestamp: z.string(),
    labels: z.record(z.string(), z.string()),
    annotations: z.record(z.string(), z.string()),
    ownerReferences: z.array(
      z.looseObject({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string() }),
    ),
    finalizers: z.array(z.string()),
  }),
  spec: z.unknown(),
  status: z.unknown(),
});

const EventTypeSchema = z.enum(['ADDED', 'MODIFIED', 'DELETED']);

/** Validate a stored object (already JSON-decoded). */
export function parseStoredObject<T extends AnyObject = ApiObject>(value: unknown): T {
  return StoredObjectSchema.parse(value) as unknown as T;
}

/** Validate a stored object kept as JSON text. */
export function parseStoredJson<T extends AnyObject = ApiObject>(text: string): T {
  return parseStoredObject<T>(JSON.parse(text));
}

/** Validate a feed entry's event type. */
export function parseEventType(value: unknown): WatchEvent['type'] {
  return EventTypeSchema.parse(value);
}

/** A BIGINT column as a JS number (PostgreSQL drivers hand them out as strings). */
export function toSafeInteger(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer: ${String(value)}`);
  return n;
}
