import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  ConflictError,
  sameJson,
  silentLogger,
  systemClock,
  typeOf,
  type ApiObject,
  type Clock,
  type Logger,
  type TypeKey,
} from '../../domain/index.ts';
import type { ObjectStore, WatchEvent } from '../../store/index.ts';
import { backoffDelay } from './backoff.ts';
import { ServiceHeartbeat } from './service-heartbeat.ts';
import { ShardOwnership } from './shards.ts';
import { TerminalError } from './terminal-error.ts';
import type { ControllerStats, ManagerOptions, ObjectRef, ObjectView, Reconciler } from './types.ts';
import { GroupRanks, WorkQueue, fingerprint, keyOf, type EnqueueCause } from './work-queue.ts';

interface Controller {
  r: Reconciler;
  q: WorkQueue;
  log: Logger;
}

const FEED_PAGE = 500;
const LIST_PAGE = 500;
/**
 * Keys of one controller a periodic resync enqueues at once. A resync that finds more spreads
 * them in slices of this size over the first half of the period, so a large region has no
 * burst of reconciles every period (1 000 clusters are about 30 000 keys).
 */
const RESYNC_SLICE = 100;

/**
 * Runs reconcilers: watches the store's revision feed, turns changes into a de-duplicated work
 * queue per controller, reconciles with bounded concurrency, retries failures with backoff, and
 * splits the keys between processes sharing one store with leases
 * (docs/adr/0002-controller-leases.md). All timing goes through the injected clock.
 */
export class ControllerManager {
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly log: Logger;
  /** Identity of this process in leases. */
  readonly holder: string;
  private readonly workers: number;
  private readonly resyncMs: number;
  private readonly leaseTtlMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffCapMs: number;
  private readonly pollMs: number;
  private readonly heartbeatMs: number;
  private readonly random: () => number;
  private readonly controllers = new Map<string, Controller>();
  /** One order of clusters for every controller's queue (see {@link WorkQueue}). */
  private readonly ranks = new GroupRanks();
  private readonly shards: ShardOwnership;
  private readonly heartbeat: ServiceHeartbeat;

  private running = false;
  private feedReady = false;
  private abort = new AbortController();
  /** Feed position: every change up to here has been dispatched. */
  private after = 0;
  private feedTypes: TypeKey[] = [];
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private listing = 0;
  /** Periodic tasks (lease ticks, resyncs, heartbeats) running now. */
  private readonly periodic = new Set<Promise<void>>();
  private readonly inflight = new Set<Promise<void>>();
  private timers: (() => void)[] = [];
  private unsubscribe: (() => void) | undefined;
  /** Unsubscribers of the controllers' event sources while running. */
  private sourceStops: (() => void)[] = [];
  private waiters: (() => void)[] = [];
  /** Keys waiting out their controller's coalescing window: shard key → cancel. */
  private readonly coalescing = new Map<string, () => void>();
  /** Timers of the resync slices still to come (see spread). */
  private readonly resyncSlices = new Set<() => void>();
  /**
   * Last view seen per view function and object, for watches and reconcilers with a view.
   * Controllers that read an object the same way share one function (see views.ts): its view of
   * each event is computed and compared once, however many watch with it.
   */
  private readonly views = new Map<ObjectView, Map<string, unknown>>();

  constructor(options: ManagerOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLogger;
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.workers = Math.max(1, options.workers ?? 4);
    this.resyncMs = options.resyncMs ?? 600_000;
    this.leaseTtlMs = options.leaseTtlMs ?? 15_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffCapMs = options.backoffCapMs ?? 300_000;
    this.pollMs = options.pollMs ?? 2_000;
    this.heartbeatMs = options.serviceHeartbeatMs ?? 10_000;
    this.random = options.random ?? Math.random;
    this.shards = new ShardOwnership({
      store: this.store,
      clock: this.clock,
      log: this.log,
      holder: this.holder,
      shards: Math.max(1, options.shards ?? 16),
      ttlMs: this.leaseTtlMs,
      prefix: options.leasePrefix ?? 'controllers/',
      inFlight: (shard) => this.inFlightInShard(shard),
    });
    this.heartbeat = new ServiceHeartbeat(this.store, this.clock, this.log, options.host ?? hostname());
  }

  /** Add a controller. Controllers are registered before {@link start}. */
  register(reconciler: Reconciler): void {
    if (this.running) throw new Error(`register controller ${reconciler.name} before start()`);
    if (this.controllers.has(reconciler.name))
      throw new Error(`controller ${reconciler.name} is registered twice`);
    this.controllers.set(reconciler.name, {
      r: reconciler,
      q: new WorkQueue(this.ranks),
      log: this.log.child({ controller: reconciler.name }),
    });
  }

  /**
   * Take leases, list every primary object (work survives restarts: nothing is remembered
   * between processes, everything is observed again), then follow the feed from the list's
   * revision.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    const types = new Set<TypeKey>();
    for (const c of this.controllers.values()) {
      types.add(c.r.type);
      for (const w of c.r.watches ?? []) types.add(w.type);
    }
    this.feedTypes = [...types];
    this.unsubscribe = this.store.onChange(() => void this.pump());
    for (const c of this.controllers.values()) {
      for (const source of c.r.sources ?? [])
        this.sourceStops.push(source((ref) => this.add(c, ref, { kind: 'mapped' })));
    }
    try {
      await this.shards.tick();
      await this.relist(true);
    } catch (err) {
      this.running = false;
      this.unsubscribe();
      this.unsubscribe = undefined;
      this.stopSources();
      await this.shards.releaseAll();
      throw err;
    }
    this.feedReady = true;
    this.every(Math.max(1, Math.floor(this.leaseTtlMs / 3)), async () => {
      const gained = await this.shards.tick();
      if (gained.length > 0) await this.relist(false);
    });
    this.every(this.pollMs, () => this.pump());
    this.every(this.resyncMs, () => this.relist(false, { paced: true }));
    if (this.heartbeatMs > 0) {
      await this.heartbeat.beat();
      this.every(this.heartbeatMs, () => this.heartbeat.beat());
    }
    void this.pump();
  }

  /**
   * Stop: no new reconciles, abort the signal of running ones and wait for them, then give the
   * leases back so other processes take over at once. `releaseLeases: false` keeps them in the
   * store (as a crash would), so others take over only after the TTL.
   */
  async stop(options: { releaseLeases?: boolean } = {}): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.feedReady = false;
    this.abort.abort(new Error('controller manager stopping'));
    for (const cancel of this.timers) cancel();
    this.timers = [];
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopSources();
    for (const c of this.controllers.values()) {
      c.q.cancelAllTimers();
      c.q.clearQueued();
    }
    for (const cancel of this.coalescing.values()) cancel();
    this.coalescing.clear();
    for (const cancel of this.resyncSlices) cancel();
    this.resyncSlices.clear();
    await Promise.allSettled([...this.inflight, ...this.periodic]);
    await this.pumping?.catch(() => undefined);
    if (options.releaseLeases === false) this.shards.forget();
    else await this.shards.releaseAll();
    this.progress();
  }

  /**
   * One resync now: every object of every controller enqueued at once, as the periodic resync
   * does but not spread over the period. `waitIdle` then waits for all of it. For benchmarks
   * (what a resync costs) and diagnostics.
   */
  resyncAll(): Promise<void> {
    return this.relist(false);
  }

  /**
   * Resolves when no key is queued or in flight, no periodic task (lease tick, resync, heartbeat)
   * is running, and the feed has been read up to the store's revision. Timers for later requeues
   * may remain. For tests and benchmarks.
   */
  async waitIdle(): Promise<void> {
    for (;;) {
      if (!this.running) {
        await Promise.allSettled([...this.inflight]);
        return;
      }
      const rev = await this.store.currentRevision();
      await this.pump();
      if (this.idle()) {
        if ((await this.store.currentRevision()) === rev && this.idle()) return;
        continue;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private stopSources(): void {
    for (const stop of this.sourceStops.splice(0)) stop();
  }

  /** Enqueue a key by hand (also wakes a key parked by a terminal error). */
  enqueue(controller: string, ref: ObjectRef): void {
    const c = this.controllers.get(controller);
    if (!c) throw new Error(`no controller named ${controller}`);
    this.add(c, ref, { kind: 'manual' });
  }

  /** Counters: reconciles, errors, queue depth per controller (for metrics and benchmarks). */
  stats(): Record<string, ControllerStats> {
    const out: Record<string, ControllerStats> = {};
    for (const [name, c] of this.controllers) {
      out[name] = {
        reconciles: c.q.reconciles,
        errors: c.q.errors,
        queued: c.q.depth,
        inFlight: c.q.inFlight.size,
      };
    }
    return out;
  }

  /** Shards this process holds now (metrics, tests). */
  ownedShards(): number[] {
    return this.shards.owned();
  }

  // --- internals ---

  private every(ms: number, fn: () => Promise<void>): void {
    let busy = false;
    let cancel: () => void = () => undefined;
    const fire = () => {
      if (!this.running) return;
      cancel = this.clock.setTimer(fire, ms);
      // A slow round (a store under load) is skipped, not stacked.
      if (busy) return;
      busy = true;
      const task = fn()
        .catch((err: unknown) => this.log.warn({ err }, 'periodic controller task failed'))
        .finally(() => {
          busy = false;
          this.periodic.delete(task);
          this.progress();
        });
      this.periodic.add(task);
    };
    cancel = this.clock.setTimer(fire, ms);
    this.timers.push(() => cancel());
  }

  /** Wakes `waitIdle` callers once nothing is left to do (or the manager stopped), not at every step. */
  private progress(): void {
    if (this.waiters.length === 0 || (this.running && !this.idle())) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private idle(): boolean {
    if (this.listing > 0 || this.periodic.size > 0 || this.pumping || this.coalescing.size > 0) return false;
    for (const c of this.controllers.values()) if (c.q.depth > 0 || c.q.inFlight.size > 0) return false;
    return true;
  }

  private shardKey(c: Controller, key: string): string {
    return `${c.r.name}/${key}`;
  }

  private inFlightInShard(shard: number): number {
    let n = 0;
    for (const c of this.controllers.values()) {
      for (const key of c.q.inFlight) if (this.shards.shardOf(this.shardKey(c, key)) === shard) n++;
    }
    return n;
  }

  private add(c: Controller, ref: ObjectRef, cause: EnqueueCause): void {
    if (!this.running) return;
    const key = this.shardKey(c, keyOf(ref));
    if (!this.shards.canRun(key)) return;
    const window = c.r.coalesceMs ?? 0;
    if (cause.kind === 'mapped' && window > 0) {
      if (this.coalescing.has(key)) return;
      const cancel = this.clock.setTimer(() => {
        this.coalescing.delete(key);
        if (this.running && c.q.add(ref, cause)) this.drain(c);
        this.progress();
      }, window);
      this.coalescing.set(key, cancel);
      return;
    }
    if (c.q.add(ref, cause)) {
      // a reconcile that starts now also sees the changes a pending window was gathering
      const pending = this.coalescing.get(key);
      if (pending) {
        pending();
        this.coalescing.delete(key);
      }
      this.drain(c);
    }
  }

  private drain(c: Controller): void {
    while (this.running && c.q.inFlight.size < this.workers) {
      const next = c.q.take();
      if (!next) return;
      if (!this.shards.canRun(this.shardKey(c, next.key))) {
        c.q.drop(next.key);
        continue;
      }
      const run = this.run(c, next.key, next.ref);
      this.inflight.add(run);
      void run.finally(() => this.inflight.delete(run));
    }
  }

  private later(c: Controller, key: string, ref: ObjectRef, ms: number): void {
    const cancel = this.clock.setTimer(() => {
      c.q.timerFired(key);
      this.add(c, ref, { kind: 'timer' });
    }, ms);
    c.q.setTimer(key, cancel);
  }

  /**
   * Enqueue a resync's remaining keys in slices of {@link RESYNC_SLICE}, evenly over the first
   * half of the resync period. The slices' timers do not count as work in progress.
   */
  private spread(c: Controller, refs: ObjectRef[]): void {
    const slices = Math.ceil(refs.length / RESYNC_SLICE);
    for (let i = 0; i < slices; i++) {
      const slice = refs.slice(i * RESYNC_SLICE, (i + 1) * RESYNC_SLICE);
      const cancel = this.clock.setTimer(
        () => {
          this.resyncSlices.delete(cancel);
          for (const ref of slice) {
            if (!c.q.isParked(keyOf(ref))) this.add(c, ref, { kind: 'manual' });
          }
          this.progress();
        },
        Math.round(((i + 1) * this.resyncMs) / 2 / slices),
      );
      this.resyncSlices.add(cancel);
    }
  }

  /** One reconcile of one key. Never rejects. */
  private async run(c: Controller, key: string, ref: ObjectRef): Promise<void> {
    const log = c.log.child({ key });
    let parkedAs: string | undefined;
    let retryNow = false;
    let gone = false;
    let before: ApiObject | undefined;
    try {
      before = await (c.r.read
        ? c.r.read(this.store, ref)
        : this.store.get(c.r.type, ref.namespace, ref.name));
      const result = await c.r.reconcile(
        { store: this.store, clock: this.clock, log, signal: this.abort.signal },
        ref,
      );
      c.q.succeeded(key);
      c.q.cancelTimer(key);
      const after = result ? result.requeueAfterMs : undefined;
      if (after !== undefined && after >= 0 && this.running) this.later(c, key, ref, after);
      else gone = before === undefined;
    } catch (err) {
      if (this.running) {
        c.q.errors++;
        if (err instanceof TerminalError) {
          const outcome = await this.terminalOutcome(c, ref, before);
          if (outcome === 'gone') gone = true;
          else if (outcome === 'retry') retryNow = true;
          else parkedAs = outcome.fingerprint;
          log.error(
            { err, reason: err.reason },
            `reconcile failed terminally (${err.reason}): ${err.message}`,
          );
        } else {
          const failures = c.q.failed(key);
          const delay = backoffDelay(failures, this.backoffBaseMs, this.backoffCapMs, this.random);
          this.later(c, key, ref, delay);
          // a stale write is how optimistic concurrency says "read again": not worth a warning
          const level = err instanceof ConflictError && err.code !== 'Expired' ? 'debug' : 'warn';
          log[level]({ err, failures, retryInMs: delay }, 'reconcile failed; retrying with backoff');
        }
      }
    } finally {
      c.q.reconciles++;
      const again = c.q.finish(key, parkedAs);
      if (retryNow) c.q.add(ref, { kind: 'manual' });
      else if (gone && !again) c.q.forget(key);
      this.drain(c);
      this.progress();
    }
  }

  /**
   * After a terminal error: park the key unless the object changed (beyond status) while it was
   * reconciled, in which case the reconcile may have judged a stale object: retry at once.
   */
  private async terminalOutcome(
    c: Controller,
    ref: ObjectRef,
    before: ApiObject | undefined,
  ): Promise<'gone' | 'retry' | { fingerprint: string }> {
    let now: ApiObject | undefined;
    try {
      now = await this.store.get(c.r.type, ref.namespace, ref.name);
    } catch {
      if (!before) return 'retry';
      return { fingerprint: fingerprint(before) };
    }
    if (!now) return 'gone';
    if (before && fingerprint(before) !== fingerprint(now)) return 'retry';
    return { fingerprint: fingerprint(now) };
  }

  /** List every primary object and enqueue it; with `setFeed`, restart the feed at the lists' revision. */
  private async relist(setFeed: boolean, options: { paced?: boolean } = {}): Promise<void> {
    this.listing++;
    try {
      let from: number | undefined;
      if (setFeed && this.controllers.size === 0) from = await this.store.currentRevision();
      for (const c of this.controllers.values()) {
        let cont: string | undefined;
        let first = true;
        let seen = 0;
        const later: ObjectRef[] = [];
        do {
          const page = await this.store.list(c.r.type, {
            limit: LIST_PAGE,
            ...(cont ? { continue: cont } : {}),
          });
          if (first) {
            const rv = Number(page.resourceVersion);
            from = from === undefined ? rv : Math.min(from, rv);
            first = false;
          }
          for (const obj of page.items) {
            const ref = { namespace: obj.metadata.namespace, name: obj.metadata.name };
            // a parked key is judged on the object now (see WorkQueue.add), never later
            if (options.paced && seen++ >= RESYNC_SLICE && !c.q.isParked(keyOf(ref))) later.push(ref);
            else this.add(c, ref, { kind: 'object', object: obj });
          }
          cont = page.continue;
        } while (cont && this.running);
        this.spread(c, later);
      }
      if (setFeed && from !== undefined) {
        this.after = from;
        // deletions missed while the feed was behind would leave stale views
        this.views.clear();
      }
    } finally {
      this.listing--;
      this.progress();
    }
  }

  /** Read the feed until caught up. Concurrent calls share one reader that goes round once more. */
  private pump(): Promise<void> {
    if (!this.feedReady || !this.running) return Promise.resolve();
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.pumpAgain = false;
          await this.readFeed();
        } while (this.pumpAgain && this.running);
      } finally {
        this.pumping = undefined;
        this.progress();
      }
    })();
    return this.pumping;
  }

  private async readFeed(): Promise<void> {
    if (this.feedTypes.length === 0) return;
    for (;;) {
      let events: WatchEvent[];
      try {
        events = await this.store.changes(this.after, { types: this.feedTypes, limit: FEED_PAGE });
      } catch (err) {
        if (err instanceof ConflictError && err.code === 'Expired') {
          this.log.warn(
            { after: this.after },
            'revision feed compacted past our position; listing everything again',
          );
          try {
            await this.relist(true);
            continue;
          } catch (listErr) {
            this.log.warn({ err: listErr }, 'relist failed; retrying at the next poll');
            return;
          }
        }
        this.log.warn({ err }, 'reading the revision feed failed; retrying at the next poll');
        return;
      }
      for (const ev of events) {
        if (!this.running) return;
        await this.dispatch(ev);
        this.after = ev.revision;
      }
      if (events.length < FEED_PAGE) return;
    }
  }

  private async dispatch(ev: WatchEvent): Promise<void> {
    const type = typeOf(ev.object);
    const m = ev.object.metadata;
    const key = `${type}\0${m.namespace}\0${m.name}`;
    const verdicts = new Map<ObjectView, boolean>();
    const changed = (view: ObjectView | undefined): boolean => {
      if (!view) return true;
      let verdict = verdicts.get(view);
      if (verdict === undefined) {
        verdict = this.viewChanged(view, key, ev);
        verdicts.set(view, verdict);
      }
      return verdict;
    };
    for (const c of this.controllers.values()) {
      if (c.r.type === type && changed(c.r.view)) {
        const ref = { namespace: m.namespace, name: m.name };
        this.add(c, ref, { kind: 'object', object: ev.object, deleted: ev.type === 'DELETED' });
      }
      for (const w of c.r.watches ?? []) {
        if (w.type !== type || !changed(w.view)) continue;
        let refs: ObjectRef[];
        try {
          refs = await w.map(ev.object);
        } catch (err) {
          c.log.warn({ err, type }, 'watch mapping failed');
          continue;
        }
        for (const ref of refs) this.add(c, ref, { kind: 'mapped' });
      }
    }
  }

  /**
   * Whether an event changes what a view reads. Additions and deletions always count; so does
   * the first change this process sees of an object (it has no earlier view to compare with).
   */
  private viewChanged(view: ObjectView, key: string, ev: WatchEvent): boolean {
    let byObject = this.views.get(view);
    if (!byObject) this.views.set(view, (byObject = new Map<string, unknown>()));
    if (ev.type === 'DELETED') {
      byObject.delete(key);
      return true;
    }
    const next = view(ev.object);
    const had = byObject.has(key);
    const prev = byObject.get(key);
    byObject.set(key, next);
    return ev.type === 'ADDED' || !had || !sameJson(prev, next);
  }
}
