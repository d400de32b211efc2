import type { Clock, Logger } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';

/** Options of {@link ShardOwnership}. */
export interface ShardOwnershipOptions {
  store: ObjectStore;
  clock: Clock;
  log: Logger;
  holder: string;
  shards: number;
  ttlMs: number;
  prefix: string;
  /** How many keys of a shard are being reconciled right now (a shard is handed over only when 0). */
  inFlight: (shard: number) => number;
}

/** FNV-1a, 32 bit: a stable, fast string hash (the same in every process). */
export function hashKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Which keys this process may reconcile (docs/adr/0002-controller-leases.md).
 *
 * Keys hash into N shards. Every process renews a membership lease; the live members, sorted,
 * split the shards round-robin; each process takes a lease on each shard assigned to it. A
 * shard that is no longer assigned to this process is drained (no new reconciles) and its lease
 * released once its in-flight reconciles end. A dead process stops renewing: its membership and
 * shard leases expire after the TTL and the survivors take its shards over.
 */
export class ShardOwnership {
  /** shard → local expiry of our lease on it (ms, clock time). */
  private readonly held = new Map<number, number>();
  private readonly draining = new Set<number>();
  private memberUntil = 0;

  constructor(private readonly o: ShardOwnershipOptions) {}

  private shardLease(shard: number): string {
    return `${this.o.prefix}shards/${shard}`;
  }

  private get memberLease(): string {
    return `${this.o.prefix}members/${this.o.holder}`;
  }

  /** The shard of a key. */
  shardOf(key: string): number {
    return hashKey(key) % this.o.shards;
  }

  /** True when this process may start a reconcile of `key` now. */
  canRun(key: string): boolean {
    const shard = this.shardOf(key);
    const until = this.held.get(shard);
    return until !== undefined && this.o.clock.now() < until && !this.draining.has(shard);
  }

  /** Shards currently held (for stats and tests). */
  owned(): number[] {
    const now = this.o.clock.now();
    return [...this.held.entries()]
      .filter(([s, until]) => now < until && !this.draining.has(s))
      .map(([s]) => s)
      .sort((a, b) => a - b);
  }

  /**
   * Renew membership, recompute the assignment, take/renew/release shard leases.
   * Returns the shards newly acquired (their keys must be listed: events for them were ignored).
   */
  async tick(): Promise<number[]> {
    const { store, clock, holder, ttlMs } = this.o;
    const now = clock.now();
    try {
      if (await store.acquireLease(this.memberLease, holder, ttlMs, now)) this.memberUntil = now + ttlMs;
    } catch (err) {
      this.o.log.warn({ err }, 'controller membership renewal failed');
    }
    let members: string[];
    try {
      members = (await store.listLeases(`${this.o.prefix}members/`, now)).map((l) => l.holder);
    } catch (err) {
      this.o.log.warn({ err }, 'listing controller members failed');
      return [];
    }
    if (now < this.memberUntil && !members.includes(holder)) members.push(holder);
    members = [...new Set(members)].sort();
    const me = members.indexOf(holder);
    const gained: number[] = [];
    for (let shard = 0; shard < this.o.shards; shard++) {
      const mine = me >= 0 && shard % members.length === me;
      const name = this.shardLease(shard);
      try {
        if (mine) {
          if (await store.acquireLease(name, holder, ttlMs, now)) {
            if (!this.held.has(shard) || this.draining.has(shard) || (this.held.get(shard) ?? 0) <= now)
              gained.push(shard);
            this.held.set(shard, now + ttlMs);
            this.draining.delete(shard);
          } else {
            this.held.delete(shard);
            this.draining.delete(shard);
          }
        } else if (this.held.has(shard)) {
          if (this.o.inFlight(shard) === 0) {
            this.held.delete(shard);
            this.draining.delete(shard);
            await store.releaseLease(name, holder);
          } else {
            // Hand over only after the running reconciles end: keep the lease alive meanwhile.
            this.draining.add(shard);
            if (await store.acquireLease(name, holder, ttlMs, now)) this.held.set(shard, now + ttlMs);
          }
        }
      } catch (err) {
        this.o.log.warn({ err, shard }, 'shard lease renewal failed');
      }
    }
    return gained;
  }

  /** Give every lease back (graceful stop): the survivors take over at their next tick. */
  async releaseAll(): Promise<void> {
    const { store, holder } = this.o;
    const shards = [...this.held.keys()];
    this.held.clear();
    this.draining.clear();
    this.memberUntil = 0;
    for (const shard of shards)
      await store.releaseLease(this.shardLease(shard), holder).catch(() => undefined);
    await store.releaseLease(this.memberLease, holder).catch(() => undefined);
  }

  /** Forget local ownership without touching the store (a crash, as far as others can tell). */
  forget(): void {
    this.held.clear();
    this.draining.clear();
    this.memberUntil = 0;
  }
}
