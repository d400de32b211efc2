import type { ApiObject } from '../../domain/index.ts';
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
 * The work queue of one controller: a FIFO of distinct keys, the keys in flight (a key is never
 * reconciled twice at once: an event during its reconcile marks it dirty and it is queued again
 * once afterwards), failure counts, delayed requeues, and keys parked by a terminal error.
 */
export class WorkQueue {
  private readonly fifo: string[] = [];
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
    this.fifo.push(key);
    return true;
  }

  /** Take the next key to reconcile, marking it in flight. */
  take(): { key: string; ref: ObjectRef } | undefined {
    for (;;) {
      const key = this.fifo.shift();
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
        this.fifo.push(key);
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
    this.fifo.length = 0;
    this.queued.clear();
  }

  get depth(): number {
    return this.fifo.length;
  }

  /** Release per-key memory of a key that is gone and idle. */
  forget(key: string): void {
    if (this.inFlight.has(key) || this.queued.has(key) || this.timers.has(key)) return;
    this.refs.delete(key);
    this.failures.delete(key);
    this.terminal.delete(key);
  }
}
