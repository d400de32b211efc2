import { CapiLabels, type ApiObject } from '../../domain/index.ts';
import type { ObjectRef } from './types.ts';

/** Why a key is enqueued; decides whether a key stopped by a terminal error runs again. */
export type EnqueueCause =
  /** A feed event of the primary object (with the object), or a list (relist, resync). */
  | { kind: 'object'; object: ApiObject; deleted?: boolean }
  /** A watched object mapped to this key. */
  | { kind: 'mapped' }
  /** `ControllerManager.enqueue` by hand. */
  | { kind: 'manual' }
  /** A backoff or `requeueAfterMs` timer. */
  | { kind: 'timer' };

/** The string form of a key. */
export function keyOf(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function stable(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]),
      );
    }
    return v;
  });
}

/**
 * What counts as "the object changed" for a key stopped by a terminal error: everything but
 * status and resourceVersion. A reconciler records its failure in status, so its own write must
 * not count, or it would retry forever.
 */
export function fingerprint(obj: ApiObject): string {
  const m = obj.metadata;
  return stable({
    uid: m.uid,
    generation: m.generation,
    deletionTimestamp: m.deletionTimestamp ?? null,
    labels: m.labels,
    annotations: m.annotations,
    finalizers: m.finalizers,
    ownerReferences: m.ownerReferences,
  });
}

/**
 * The cluster an object belongs to (its Cluster API cluster-name label), else the object itself:
 * the group whose keys a work queue takes in the order the groups were first seen.
 */
export function groupOf(obj: ApiObject): string {
  const m = obj.metadata;
  return `${m.namespace}/${m.labels?.[CapiLabels.clusterName] ?? m.name}`;
}

/** A queued key: taken by its group's rank, then in the order it was queued. */
interface Entry {
  key: string;
  rank: number;
  seq: number;
}

/**
 * The work queue of one controller: distinct keys, the keys in flight (a key is never reconciled
 * twice at once: an event during its reconcile marks it dirty and it is queued again once
 * afterwards), failure counts, delayed requeues, and keys parked by a terminal error.
 *
 * Keys are taken cluster by cluster, not in plain arrival order: each key belongs to a group
 * ({@link groupOf}, decided when the key is first seen), groups are ranked in the order they were
 * first seen, and a queued key of an older group goes before one of a younger group; within a
 * group, first in, first out. Under a burst of creates a cluster's waiting steps then go before
 * those of the clusters asked for after it, so clusters asked for earlier complete earlier,
 * instead of all advancing step by step together and completing together at the end (the total
 * work is the same; while older clusters wait on the cloud, workers take younger clusters'
 * steps). One key is queued at most once, so a key that keeps coming back takes one place at a
 * time and younger clusters keep the other workers.
 */
export class WorkQueue {
  /** `ranks` may be shared by the queues of several controllers, so they agree on the order. */
  constructor(private readonly ranks = new GroupRanks()) {}

  private readonly heap: Entry[] = [];
  private seq = 0;
  private readonly groupOfKey = new Map<string, string>();
  private readonly queued = new Set<string>();
  readonly inFlight = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly refs = new Map<string, ObjectRef>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, () => void>();
  /** key → fingerprint of the object when its terminal error happened. */
  private readonly terminal = new Map<string, string>();
  reconciles = 0;
  errors = 0;

  /**
   * Add a key. Returns true when it was queued now (false: deduplicated, marked dirty, or
   * suppressed because it is parked by a terminal error and nothing changed).
   */
  add(ref: ObjectRef, cause: EnqueueCause): boolean {
    const key = keyOf(ref);
    const parked = this.terminal.get(key);
    if (parked !== undefined) {
      switch (cause.kind) {
        case 'object':
          if (!cause.deleted && fingerprint(cause.object) === parked) return false;
          break;
        case 'mapped':
        case 'manual':
          break;
        case 'timer':
          return false;
      }
      this.terminal.delete(key);
    }
    this.refs.set(key, ref);
    if (this.inFlight.has(key)) {
      this.dirty.add(key);
      return false;
    }
    if (this.queued.has(key)) return false;
    this.queued.add(key);
    this.push(key, this.rankOf(key, cause));
    return true;
  }

  /** The rank of the key's group, which is decided (and counted) when the key is first seen. */
  private rankOf(key: string, cause?: EnqueueCause): number {
    let group = this.groupOfKey.get(key);
    if (group === undefined) {
      group = cause?.kind === 'object' ? groupOf(cause.object) : key;
      this.groupOfKey.set(key, group);
      return this.ranks.retain(group);
    }
    return this.ranks.rankOf(group);
  }

  private push(key: string, rank: number): void {
    const heap = this.heap;
    const entry = { key, rank, seq: this.seq++ };
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent]!;
      if (!before(entry, above)) break;
      heap[i] = above;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): Entry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
      const below = heap[child]!;
      if (!before(below, last)) break;
      heap[i] = below;
      i = child;
    }
    heap[i] = last;
    return top;
  }

  /** Take the next key to reconcile, marking it in flight. */
  take(): { key: string; ref: ObjectRef } | undefined {
    for (;;) {
      const key = this.pop()?.key;
      if (key === undefined) return undefined;
      this.queued.delete(key);
      const ref = this.refs.get(key);
      if (!ref) continue;
      this.inFlight.add(key);
      return { key, ref };
    }
  }

  /** Drop a queued key this process may not run (its shard is elsewhere). */
  drop(key: string): void {
    this.inFlight.delete(key);
    this.dirty.delete(key);
  }

  /**
   * A reconcile ended. Returns true when the key was changed meanwhile and must run again.
   * `parkedAs` parks the key after a terminal error (dirty marks are then ignored: the decision
   * to retry was made by comparing fingerprints).
   */
  finish(key: string, parkedAs?: string): boolean {
    this.inFlight.delete(key);
    const wasDirty = this.dirty.delete(key);
    if (parkedAs !== undefined) {
      this.terminal.set(key, parkedAs);
      this.failures.delete(key);
      this.cancelTimer(key);
      return false;
    }
    if (wasDirty) {
      const ref = this.refs.get(key);
      if (ref && !this.queued.has(key)) {
        this.queued.add(key);
        this.push(key, this.rankOf(key));
      }
    }
    return wasDirty;
  }

  /** Count a failure; returns the number of consecutive failures of the key. */
  failed(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    return n;
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  isParked(key: string): boolean {
    return this.terminal.has(key);
  }

  ref(key: string): ObjectRef | undefined {
    return this.refs.get(key);
  }

  /** Replace the key's delayed requeue. */
  setTimer(key: string, cancel: () => void): void {
    this.cancelTimer(key);
    this.timers.set(key, cancel);
  }

  timerFired(key: string): void {
    this.timers.delete(key);
  }

  cancelTimer(key: string): void {
    const cancel = this.timers.get(key);
    if (cancel) cancel();
    this.timers.delete(key);
  }

  cancelAllTimers(): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }

  /** Forget queued keys (stop). */
  clearQueued(): void {
    this.heap.length = 0;
    this.queued.clear();
  }

  get depth(): number {
    return this.heap.length;
  }

  /** Release per-key memory of a key that is gone and idle. */
  forget(key: string): void {
    if (this.inFlight.has(key) || this.queued.has(key) || this.timers.has(key)) return;
    this.refs.delete(key);
    this.failures.delete(key);
    this.terminal.delete(key);
    const group = this.groupOfKey.get(key);
    if (group === undefined) return;
    this.groupOfKey.delete(key);
    this.ranks.release(group);
  }
}

/**
 * The ranks of groups, in the order they were first seen, with the number of keys that belong
 * to each: a group no key belongs to any more is forgotten.
 */
export class GroupRanks {
  private next = 0;
  private readonly groups = new Map<string, { rank: number; keys: number }>();

  /** Count one more key of the group; returns the group's rank. */
  retain(group: string): number {
    const known = this.groups.get(group);
    if (known) {
      known.keys++;
      return known.rank;
    }
    const rank = this.next++;
    this.groups.set(group, { rank, keys: 1 });
    return rank;
  }

  /** The group's rank; a group no key belongs to (any more) ranks after every other. */
  rankOf(group: string): number {
    return this.groups.get(group)?.rank ?? this.next;
  }

  release(group: string): void {
    const known = this.groups.get(group);
    if (known && --known.keys === 0) this.groups.delete(group);
  }

  /** Groups some key belongs to. */
  get size(): number {
    return this.groups.size;
  }
}

/** Whether `a` is taken before `b`. */
function before(a: Entry, b: Entry): boolean {
  return a.rank !== b.rank ? a.rank < b.rank : a.seq < b.seq;
}
