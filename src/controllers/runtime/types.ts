import type { ApiObject, Clock, Logger, TypeKey } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';

/** The key a reconciler works on: one object of its primary kind. */
export interface ObjectRef {
  namespace: string;
  name: string;
}

/** Everything a reconcile may use; nothing else (no module singletons). */
export interface ReconcileContext {
  store: ObjectStore;
  clock: Clock;
  /** Bound to the controller and the key. */
  log: Logger;
  /** Aborted when the manager stops: wrap up, do not start new long waits. */
  signal: AbortSignal;
}

/** What a successful reconcile asks for next. */
export interface ReconcileResult {
  /** Reconcile this key again after this long (polling a slow external resource), even without a change. */
  requeueAfterMs?: number;
}

/** A watch of a secondary kind: its changes enqueue the primary objects `map` returns. */
export interface WatchSpec {
  type: TypeKey;
  map: (obj: ApiObject) => ObjectRef[] | Promise<ObjectRef[]>;
  /**
   * The part of the watched object the reconciler reads (a predicate, in controller-runtime's
   * terms). A change that leaves it equal (as JSON) is not mapped, so a status counter the
   * reconciler never looks at does not wake it. Absent: every change maps.
   */
  view?: ObjectView;
}

/**
 * Changes from outside the store that concern primary objects (a workload cluster's node watch
 * telling which machine's node changed): the manager calls it once when it starts, with the
 * function that enqueues a key, and calls what it returns when it stops. A source channel, in
 * controller-runtime's terms.
 */
export type EventSource = (enqueue: (ref: ObjectRef) => void) => () => void;

/** The fields of an object a reconciler depends on, as a JSON value. */
export type ObjectView = (obj: ApiObject) => unknown;

/**
 * One controller. `reconcile` must be safe to interrupt and to run again: it is called after
 * every change of its object (or of a watched object that maps to it), after failures with
 * backoff, on `requeueAfterMs`, and on periodic resync. Throw to retry with backoff; throw a
 * {@link TerminalError} to stop retrying until the object changes.
 */
export interface Reconciler {
  /** Unique controller name, e.g. 'machine'. */
  name: string;
  /** Store type key of the primary kind (e.g. 'Machine.cluster.x-k8s.io'). */
  type: TypeKey;
  /** Other kinds whose changes enqueue primary objects (e.g. owner refs, label lookups). */
  watches?: WatchSpec[];
  /** Changes from outside the store that enqueue primary objects. */
  sources?: EventSource[];
  /**
   * The part of its own object the reconciler reads, when its own status writes (or others')
   * need not wake it: changes of the primary object that leave this equal are skipped.
   * Absent: every change of the primary object enqueues it.
   */
  view?: ObjectView;
  /**
   * Changes of watched objects are gathered for this long before the key they map to is
   * reconciled (one reconcile for a burst): for controllers that sum up many objects (a
   * Cluster over its machines), whose every child's write would otherwise be a full reconcile.
   * Changes of the primary object itself are never delayed. @default 0
   */
  coalesceMs?: number;
  reconcile(ctx: ReconcileContext, ref: ObjectRef): Promise<ReconcileResult | void>;
  /**
   * How the manager reads the primary object before a reconcile (to know whether it still
   * exists), given the manager's store: a reconciler that reads through a cache gives its cached
   * read, which answers as the store would. Absent: `store.get`.
   */
  read?(store: ObjectStore, ref: ObjectRef): Promise<ApiObject | undefined>;
}

/** Options of {@link ControllerManager}. */
export interface ManagerOptions {
  store: ObjectStore;
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  log?: Logger;
  /** Identity of this process for leases. @default hostname:pid:random */
  holder?: string;
  /** Concurrent reconciles per controller. @default 4 */
  workers?: number;
  /** Periodic full resync; above a hundred keys per controller it is spread over the first half of the period. @default 600_000 */
  resyncMs?: number;
  /** Lease TTL for multi-process operation. @default 15_000 */
  leaseTtlMs?: number;
  /** Backoff base for failing reconciles. @default 500 */
  backoffBaseMs?: number;
  /** Backoff cap for failing reconciles. @default 300_000 */
  backoffCapMs?: number;
  /** Read the feed at least this often even without a change notification. @default 2_000 */
  pollMs?: number;
  /** Number of shards keys are hashed into; each is leased by one process at a time. @default 16 */
  shards?: number;
  /** Prefix of the lease names (members and shards). @default 'controllers/' */
  leasePrefix?: string;
  /** Host name reported in the MService heartbeat. @default os.hostname() */
  host?: string;
  /** Interval of the MService heartbeat; 0 disables it. @default 10_000 */
  serviceHeartbeatMs?: number;
  /** Source of randomness for backoff jitter, in [0, 1). @default Math.random */
  random?: () => number;
}

/** Counters of one controller. */
export interface ControllerStats {
  /** Reconciles finished (successfully or not). */
  reconciles: number;
  /** Reconciles that threw. */
  errors: number;
  /** Keys waiting for a worker. */
  queued: number;
  /** Keys being reconciled now. */
  inFlight: number;
}
