import { ConflictError, type ApiObject, type Clock, type Logger, type NewObject } from '../domain/index.ts';
import type { ObjectStore, WriteOp } from '../store/index.ts';
import type { ServiceCatalog } from './catalog.ts';
import { claimName, IDENTITY_API_VERSION, identityType, type IdentityKind } from './kinds.ts';
import type { ScryptCost } from './secrets.ts';
import type { SecretVerifier } from './secret-verifier.ts';
import type { IdentityView } from './view.ts';

/** What every identity operation works with. Built once by {@link LocalIdentity}. */
export interface IdentityCore {
  store: ObjectStore;
  view: IdentityView;
  clock: Clock;
  logger: Logger;
  catalog: ServiceCatalog;
  /** Public base URL of the server, e.g. `http://127.0.0.1:9511`. */
  baseUrl: () => string;
  tokenTtlMs: number;
  scryptCost: ScryptCost;
  /** Checks passwords and application-credential secrets at login. */
  secrets: SecretVerifier;
  /** Name of Magnetar's own service user (protected from deletion and disabling). */
  serviceUserName: string;
}

/** A new identity object. */
export function newIdentityObject<S extends object>(kind: IdentityKind, name: string, spec: S): NewObject {
  return {
    apiVersion: IDENTITY_API_VERSION,
    kind,
    metadata: { name, namespace: '' },
    spec: spec as unknown as Record<string, unknown>,
  };
}

/** The write op that reserves a unique name (fails the whole commit when taken). */
export function claimOp(
  kind: Parameters<typeof claimName>[0],
  scope: string,
  name: string,
  ownerId: string,
): WriteOp {
  return { op: 'create', object: newIdentityObject('NameClaim', claimName(kind, scope, name), { ownerId }) };
}

/** The write op that releases a name claim. */
export function releaseOp(kind: Parameters<typeof claimName>[0], scope: string, name: string): WriteOp {
  return { op: 'delete', type: identityType('NameClaim'), namespace: '', name: claimName(kind, scope, name) };
}

/** Delete op for an identity object. */
export function deleteOp(kind: IdentityKind, name: string): WriteOp {
  return { op: 'delete', type: identityType(kind), namespace: '', name };
}

/** Read one stored identity object (for a write under its resourceVersion). */
export function getStored(
  core: IdentityCore,
  kind: IdentityKind,
  name: string,
): Promise<ApiObject | undefined> {
  return core.store.get(identityType(kind), '', name);
}

/**
 * Commit writes atomically, then bring the view up to date so the caller's next request
 * sees them. A taken name claim becomes `onDuplicate()`.
 */
export async function commitAndSync(
  core: IdentityCore,
  ops: WriteOp[],
  onDuplicate: () => Error = () =>
    new ConflictError('Conflict occurred attempting to store the entity: duplicate entry.'),
): Promise<void> {
  try {
    await core.store.commit(ops);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'AlreadyExists') throw onDuplicate();
    throw err;
  } finally {
    await core.view.sync();
  }
}

/** ISO time with Keystone's microsecond precision: `2030-01-01T00:00:00.000000Z`. */
export function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
