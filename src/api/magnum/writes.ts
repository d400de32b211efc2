import { randomUUID } from 'node:crypto';
import {
  ANNOTATION_MAGNUM_UPDATED_AT,
  ConflictError,
  InputError,
  magnumStatus,
  type ApiObject,
  type MagnumAction,
  type MagnumClusterObject,
  type MagnumStatus,
  type NodeGroupObject,
} from '../../domain/index.ts';

/**
 * How the façade writes Magnum objects. It never writes a status string: an accepted
 * operation writes the spec with a fresh `operationId` and its `action`, so the store bumps
 * `metadata.generation` and `magnumStatus()` reads `<action>_IN_PROGRESS` until the driver
 * records that generation as observed.
 */

/** A copy of `obj` with `updated_at` set to `now`. */
export function stamped<T extends ApiObject<unknown, unknown>>(obj: T, now: string): T {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [ANNOTATION_MAGNUM_UPDATED_AT]: now },
    },
  };
}

/** A copy of a cluster or nodegroup asking for a new operation (fresh operationId → new generation). */
export function withOperation<T extends MagnumClusterObject | NodeGroupObject>(
  obj: T,
  action: MagnumAction,
  now: string,
  spec: Partial<T['spec']> = {},
): T {
  return stamped({ ...obj, spec: { ...obj.spec, ...spec, action, operationId: randomUUID() } }, now);
}

/** Statuses in which Magnum's conductor accepts update/upgrade (the `*_COMPLETE` family). */
const COMPLETE: ReadonlySet<MagnumStatus> = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'RESUME_COMPLETE',
  'RESTORE_COMPLETE',
  'ROLLBACK_COMPLETE',
  'SNAPSHOT_COMPLETE',
  'CHECK_COMPLETE',
  'ADOPT_COMPLETE',
]);

/** Resize also accepts these (the autoscaler calls often, and to recover from a failed update). */
const RESIZABLE: ReadonlySet<MagnumStatus> = new Set([...COMPLETE, 'UPDATE_FAILED', 'UPDATE_IN_PROGRESS']);

/**
 * Refuse (400) an operation in a status Magnum's conductor refuses. Magnum accepts the request
 * and drops it in the conductor; here the caller learns it at once.
 */
export function requireStatus(
  obj: MagnumClusterObject | NodeGroupObject,
  kind: 'complete' | 'resizable',
  operation: string,
): void {
  const status = magnumStatus(obj);
  const allowed = kind === 'complete' ? COMPLETE : RESIZABLE;
  if (!allowed.has(status)) {
    const what = 'clusterId' in obj.spec ? 'node group' : 'cluster';
    throw new InputError(
      `${operation} a ${what} when status is "${status}" is not supported: wait until the ${what} reaches a *_COMPLETE status${kind === 'resizable' ? ' (or UPDATE_FAILED / UPDATE_IN_PROGRESS)' : ''} and retry.`,
      { code: 'NotSupported' },
    );
  }
}

/**
 * Run a read-modify-write, retrying when the store reports that the object changed in between
 * (the driver writes status concurrently).
 */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i < attempts && err instanceof ConflictError && err.code === 'Conflict') continue;
      throw err;
    }
  }
}
