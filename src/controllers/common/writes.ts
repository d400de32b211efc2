import {
  ConflictError,
  NotFoundError,
  type ApiObject,
  type OwnerReference,
  type TypeKey,
} from '../../domain/index.ts';
import type { AnyObject, ObjectStore } from '../../store/index.ts';
import { sameJson } from '../../domain/index.ts';

/**
 * Store writes every reconciler needs, each guarded by the object's resourceVersion: a
 * conflict means someone else wrote first, and the reconcile is simply run again.
 */

/** True for the store's optimistic-concurrency conflict (stale resourceVersion). */
export function isConflict(err: unknown): boolean {
  return err instanceof ConflictError && err.code === 'Conflict';
}

/** True when a create lost against an existing object of the same name. */
export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ConflictError && err.code === 'AlreadyExists';
}

/** Add a finalizer and persist it; returns the stored object (unchanged when present). */
export async function ensureFinalizer<T extends AnyObject>(
  store: ObjectStore,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (obj.metadata.finalizers.includes(finalizer)) return obj;
  return store.update<T>({
    ...obj,
    metadata: { ...obj.metadata, finalizers: [...obj.metadata.finalizers, finalizer] },
  });
}

/** Remove a finalizer (which removes a deleting object when it was the last). Gone already → fine. */
export async function removeFinalizer<T extends AnyObject>(
  store: ObjectStore,
  obj: T,
  finalizer: string,
): Promise<void> {
  if (!obj.metadata.finalizers.includes(finalizer)) return;
  try {
    await store.update<T>({
      ...obj,
      metadata: { ...obj.metadata, finalizers: obj.metadata.finalizers.filter((f) => f !== finalizer) },
    });
  } catch (err) {
    if (err instanceof NotFoundError) return;
    throw err;
  }
}

/**
 * Write `status` when it differs from the stored one (no write, no watch event otherwise:
 * an idle system stays idle). Returns the object as stored afterwards.
 */
export async function writeStatus<T extends AnyObject>(
  store: ObjectStore,
  obj: T,
  status: T['status'],
): Promise<T> {
  if (sameJson(obj.status, status)) return obj;
  return store.updateStatus<T>({ ...obj, status });
}

/** True when `after` has the metadata and spec `before` has (an update would change nothing). */
function sameObject(before: AnyObject, after: AnyObject): boolean {
  return (
    sameJson(before.spec, after.spec) &&
    sameJson(before.metadata.labels, after.metadata.labels) &&
    sameJson(before.metadata.annotations, after.metadata.annotations) &&
    sameJson(before.metadata.ownerReferences, after.metadata.ownerReferences) &&
    sameJson(before.metadata.finalizers, after.metadata.finalizers)
  );
}

/** Write metadata/spec changes when they differ. */
export async function writeObject<T extends AnyObject>(store: ObjectStore, before: T, after: T): Promise<T> {
  if (sameObject(before, after)) return before;
  return store.update<T>(after);
}

/**
 * Write metadata/spec changes and a status learned in the same pass: one write when the object
 * changes (one revision, one watch event), else the status alone when it differs. `status` is
 * built for the generation the object has after the write, for its `observedGeneration`.
 */
export async function writeObjectAndStatus<T extends AnyObject>(
  store: ObjectStore,
  before: T,
  after: T,
  status: (generation: number) => T['status'],
): Promise<T> {
  if (sameObject(before, after)) return writeStatus(store, before, status(before.metadata.generation));
  const generation = before.metadata.generation + (sameJson(before.spec, after.spec) ? 0 : 1);
  return store.update<T>({ ...after, status: status(generation) }, { withStatus: true });
}

/** Delete, treating "already gone" as done. Returns true when the object no longer exists. */
export async function deleteObject(
  store: ObjectStore,
  type: TypeKey,
  namespace: string,
  name: string,
): Promise<boolean> {
  try {
    const left = await store.delete(type, namespace, name);
    return left === undefined;
  } catch (err) {
    if (err instanceof NotFoundError) return true;
    throw err;
  }
}

/** An owner reference to `owner`. */
export function ownerRef(owner: ApiObject, controller = true): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

/** True when `obj` has an owner reference to `owner`'s uid. */
export function isOwnedBy(obj: ApiObject, owner: { metadata: { uid: string } }): boolean {
  return obj.metadata.ownerReferences.some((r) => r.uid === owner.metadata.uid);
}

/** The controlling owner reference of `obj` of a given kind, if any. */
export function controllerOf(obj: ApiObject, kind?: string): OwnerReference | undefined {
  return obj.metadata.ownerReferences.find(
    (r) => r.controller === true && (kind === undefined || r.kind === kind),
  );
}

/** `obj` with `ref` added to its owner references (replacing one with the same uid). */
export function withOwnerRef<T extends AnyObject>(obj: T, ref: OwnerReference): T {
  const others = obj.metadata.ownerReferences.filter(
    (r) => r.uid !== ref.uid && !(ref.controller && r.controller),
  );
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [...others, ref] } };
}

let lastIsoMs = Number.NaN;
let lastIso = '';

/**
 * ISO time string of a clock reading. The last one is kept: a reconcile stamps each condition it
 * builds with the same reading, and so do the reconciles of one moment.
 */
export function iso(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIso = new Date(ms).toISOString();
    lastIsoMs = ms;
  }
  return lastIso;
}
