import { randomUUID, randomBytes } from 'node:crypto';
import { ConflictError, InputError, sameJson } from '../domain/index.ts';
import type { ApiObject, NewObject } from '../domain/index.ts';
import type { AnyObject, DeleteOptions, UpdateOptions } from './types.ts';

/**
 * Engine-independent rules of the object store: what create/update/delete do to an
 * object's metadata. Both engines call these inside their transactions.
 */

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** Five random characters for `generateName`, as Kubernetes does. */
export function randomSuffix(): string {
  const bytes = randomBytes(5);
  let s = '';
  for (const b of bytes) s += NAME_CHARS[b % NAME_CHARS.length];
  return s;
}

/** Build the stored form of a new object at `revision`. */
export function prepareCreate(input: NewObject<unknown, unknown>, revision: number, now: string): ApiObject {
  const m = input.metadata;
  const name = m.name && m.name !== '' ? m.name : m.generateName ? m.generateName + randomSuffix() : '';
  if (name === '')
    throw new InputError('metadata.name or metadata.generateName is required', { code: 'Invalid' });
  return {
    apiVersion: input.apiVersion,
    kind: input.kind,
    metadata: {
      name,
      namespace: m.namespace,
      uid: m.uid ?? randomUUID(),
      resourceVersion: String(revision),
      generation: 1,
      creationTimestamp: now,
      labels: { ...(m.labels ?? {}) },
      annotations: { ...(m.annotations ?? {}) },
      ownerReferences: [...(m.ownerReferences ?? [])],
      finalizers: [...(m.finalizers ?? [])],
    },
    spec: (input.spec ?? {}) as ApiObject['spec'],
    status: (input.status ?? {}) as ApiObject['status'],
  };
}

function checkVersion(stored: ApiObject, incoming: AnyObject): void {
  if (incoming.metadata.uid && incoming.metadata.uid !== stored.metadata.uid) {
    throw new ConflictError(
      `the object ${stored.metadata.namespace}/${stored.metadata.name} has been replaced (uid ${stored.metadata.uid}); read it again`,
      { code: 'Conflict' },
    );
  }
  if (incoming.metadata.resourceVersion !== stored.metadata.resourceVersion) {
    throw new ConflictError(
      `the object ${stored.kind} ${stored.metadata.namespace}/${stored.metadata.name} has been modified (resourceVersion ${stored.metadata.resourceVersion}, you sent ${incoming.metadata.resourceVersion}); read it again and retry`,
      { code: 'Conflict' },
    );
  }
}

/** Result of an update or delete: the new stored form, or removal. */
export interface WriteOutcome {
  object: ApiObject;
  removed: boolean;
}

/** Apply an update of metadata + spec. Status is kept from the stored object. */
export function prepareUpdate(
  stored: ApiObject,
  incoming: AnyObject,
  revision: number,
  options?: UpdateOptions,
): WriteOutcome {
  checkVersion(stored, incoming);
  const specChanged = !sameJson(stored.spec, incoming.spec);
  const im = incoming.metadata;
  const object: ApiObject = {
    apiVersion: stored.apiVersion,
    kind: stored.kind,
    metadata: {
      ...stored.metadata,
      labels: { ...(im.labels ?? {}) },
      annotations: { ...(im.annotations ?? {}) },
      ownerReferences: [...(im.ownerReferences ?? [])],
      finalizers: [...new Set(im.finalizers ?? [])],
      resourceVersion: String(revision),
      generation: stored.metadata.generation + (specChanged ? 1 : 0),
    },
    spec: incoming.spec as ApiObject['spec'],
    status: options?.withStatus ? ((incoming.status ?? {}) as ApiObject['status']) : stored.status,
  };
  const removed = object.metadata.deletionTimestamp !== undefined && object.metadata.finalizers.length === 0;
  return { object, removed };
}

/** Apply a status-only update. */
export function prepareUpdateStatus(stored: ApiObject, incoming: AnyObject, revision: number): ApiObject {
  checkVersion(stored, incoming);
  return {
    ...stored,
    metadata: { ...stored.metadata, resourceVersion: String(revision) },
    status: (incoming.status ?? {}) as ApiObject['status'],
  };
}

/** Apply a delete request: mark for deletion while finalizers remain, else remove. */
export function prepareDelete(
  stored: ApiObject,
  options: DeleteOptions | undefined,
  revision: number,
  now: string,
): WriteOutcome | 'unchanged' {
  if (options?.uid && options.uid !== stored.metadata.uid) {
    throw new ConflictError(`uid precondition failed for ${stored.metadata.name}`, { code: 'Conflict' });
  }
  if (options?.resourceVersion && options.resourceVersion !== stored.metadata.resourceVersion) {
    throw new ConflictError(`resourceVersion precondition failed for ${stored.metadata.name}`, {
      code: 'Conflict',
    });
  }
  if (stored.metadata.finalizers.length === 0) {
    return {
      object: { ...stored, metadata: { ...stored.metadata, resourceVersion: String(revision) } },
      removed: true,
    };
  }
  if (stored.metadata.deletionTimestamp) return 'unchanged';
  return {
    object: {
      ...stored,
      metadata: {
        ...stored.metadata,
        deletionTimestamp: options?.now ?? now,
        resourceVersion: String(revision),
      },
    },
    removed: false,
  };
}

/** Encode a list continuation (the last creation sequence seen). */
export function encodeContinue(seq: number): string {
  return Buffer.from(JSON.stringify({ s: seq })).toString('base64url');
}

/** Decode a list continuation; InputError when it is not one of ours. */
export function decodeContinue(token: string): number {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { s?: unknown };
    if (typeof v.s === 'number' && Number.isInteger(v.s)) return v.s;
  } catch {
    // fall through
  }
  throw new InputError('invalid continue token', { code: 'BadContinue' });
}
