import type { ApiObject, NewObject, TypeKey } from '../domain/index.ts';
import type { LabelSelector } from '../domain/index.ts';

/**
 * Any stored object, whatever its spec and status types: the bound of the store's generic
 * methods, so that domain objects declared with interfaces (no index signature) fit.
 */
export type AnyObject = ApiObject<unknown, unknown>;

/** Options of {@link ObjectStore.list}. */
export interface ListOptions {
  /** Only objects of this namespace (project). All namespaces when absent. */
  namespace?: string;
  /** Only objects whose labels satisfy every requirement. */
  labelSelector?: LabelSelector;
  /** At most this many items (after filtering); 0 means no limit, as in Kubernetes. @default unlimited */
  limit?: number;
  /** Opaque token from a previous page's `continue`. */
  continue?: string;
  /** Start after the object with this uid, in creation order (Magnum's `marker`). */
  afterUid?: string;
  /** Newest first instead of oldest first (creation order). @default false */
  descending?: boolean;
}

/** One page of a list. */
export interface ListResult<T extends AnyObject = ApiObject> {
  items: T[];
  /** The store revision the list was read at; a watch from here misses nothing. */
  resourceVersion: string;
  /** Set when more items may follow; pass back as `continue`. */
  continue?: string;
}

/** One entry of the revision feed. */
export interface WatchEvent<T extends AnyObject = ApiObject> {
  /** Global, strictly increasing store revision of this change. */
  revision: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The object after the change (for DELETED: its last state, with the deletion's resourceVersion). */
  object: T;
}

/** A lease as {@link ObjectStore.listLeases} reports it. */
export interface LeaseInfo {
  name: string;
  holder: string;
  /** Expiry, milliseconds since the epoch (the clock of whoever took or renewed it). */
  expiresMs: number;
}

/** Options of {@link ObjectStore.delete}. */
export interface DeleteOptions {
  /** Refuse with ConflictError unless the stored object has this resourceVersion. */
  resourceVersion?: string;
  /** Refuse with ConflictError unless the stored object has this uid. */
  uid?: string;
  /** ISO time to record as deletionTimestamp. @default now */
  now?: string;
}

/** Options of {@link ObjectStore.update}. */
export interface UpdateOptions {
  /**
   * Replace the status as well, in the same write: one revision and one watch event for a
   * controller that learned a spec field and a status together. @default false
   */
  withStatus?: boolean;
}

/** One write of an atomic batch ({@link ObjectStore.commit}). */
export type WriteOp =
  | { op: 'create'; object: NewObject<unknown, unknown> }
  | { op: 'update'; object: AnyObject; options?: UpdateOptions }
  | { op: 'updateStatus'; object: AnyObject }
  | { op: 'delete'; type: TypeKey; namespace: string; name: string; options?: DeleteOptions };

/**
 * The object store: objects with metadata/spec/status, optimistic concurrency on
 * `resourceVersion`, finalizers, and a revision feed. Engines: SQLite and PostgreSQL.
 *
 * Semantics (both engines):
 * - `create` fails with ConflictError(code `AlreadyExists`) when (type, namespace, name) exists.
 * - `update` replaces metadata (labels, annotations, ownerReferences, finalizers) and spec; it keeps
 *   the stored status unless asked to replace it too (`withStatus`). It fails with ConflictError(code `Conflict`) when `metadata.resourceVersion`
 *   is not the stored one, and NotFoundError when the object is gone. `generation` is bumped when spec changes.
 *   Once an object has a deletionTimestamp, an update that leaves no finalizers removes it.
 * - `updateStatus` replaces status only, with the same resourceVersion check.
 * - `delete` of an object with finalizers only sets deletionTimestamp (once); without finalizers it
 *   removes the object. Deleting a missing object is NotFoundError.
 * - Every write takes the next global revision, records it as the object's resourceVersion and appends a
 *   {@link WatchEvent} to the feed.
 */
export interface ObjectStore {
  /** Which engine this is. */
  readonly engine: 'sqlite' | 'postgres';
  create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T>;
  get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined>;
  getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined>;
  /**
   * The resourceVersion of one object without reading the object, or undefined when it does not
   * exist: for callers that keep what they derived from an object until it changes.
   */
  versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined>;
  list<T extends AnyObject = ApiObject>(type: TypeKey, options?: ListOptions): Promise<ListResult<T>>;
  /** Number of objects of a type (in a namespace when given). */
  count(type: TypeKey, namespace?: string): Promise<number>;
  /**
   * How many objects of a type in a namespace carry each value of one label (objects without
   * the label are not counted): usage sums without reading every object.
   */
  countByLabel(type: TypeKey, namespace: string, key: string): Promise<Map<string, number>>;
  update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T>;
  updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T>;
  /** Returns the object with its deletionTimestamp when finalizers keep it, undefined when removed. */
  delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined>;
  /** Apply several writes atomically: all or none. Returns the results in order. */
  commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]>;

  /** The latest revision written. */
  currentRevision(): Promise<number>;
  /**
   * What {@link currentRevision} would answer, without waiting: for an engine that can tell at
   * once (SQLite, in process). Absent where finding out takes a round trip.
   */
  currentRevisionNow?(): number;
  /**
   * Feed entries with revision > `afterRevision`, oldest first, at most `limit` (@default 1000).
   * Throws ConflictError(code `Expired`) when entries after that revision were compacted away.
   */
  changes(afterRevision: number, options?: { types?: TypeKey[]; limit?: number }): Promise<WatchEvent[]>;
  /** Called (without arguments) after new revisions are committed, by this or, for PostgreSQL, any process. */
  onChange(listener: () => void): () => void;
  /** Drop feed entries older than `beforeRevision`. */
  compact(beforeRevision: number): Promise<void>;

  /**
   * Take or renew a named lease for `holder` until `nowMs + ttlMs`. Succeeds when the lease is free,
   * expired, or already held by `holder`.
   */
  acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;
  /** Current holder of a lease if it is unexpired at `nowMs`. */
  leaseHolder(name: string, nowMs: number): Promise<string | undefined>;
  /** Unexpired leases at `nowMs` whose name starts with `prefix`, by name (membership, shard maps). */
  listLeases(prefix: string, nowMs: number): Promise<LeaseInfo[]>;

  close(): Promise<void>;
}
