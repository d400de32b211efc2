import type { Clock, Logger } from '../domain/index.ts';
import type { ObjectStore } from './types.ts';

/** Options of {@link startFeedCompaction}. */
export interface FeedCompactionOptions {
  store: ObjectStore;
  clock: Clock;
  log: Logger;
  /** How much history the revision feed keeps, at least. @default 5 minutes (as kube-apiserver compacts etcd) */
  retainMs?: number;
  /** Called after each period's work is done (tests wait on it). */
  afterTick?: () => void;
}

/**
 * Keep the revision feed from growing forever: every `retainMs`, drop the entries that were
 * already written one period ago. A watcher that falls further behind than that gets `Expired`
 * and lists again, which every watcher in Magnetar does. Safe with several processes on one
 * database: compaction only ever moves forward. Returns a stop function.
 */
export function startFeedCompaction(options: FeedCompactionOptions): () => Promise<void> {
  const { store, clock, log } = options;
  const retainMs = options.retainMs ?? 5 * 60_000;
  let previous: number | undefined;
  let cancel: (() => void) | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const tick = async () => {
    try {
      const head = await store.currentRevision();
      if (previous !== undefined && previous > 0) {
        await store.compact(previous + 1);
        log.debug({ keptAfter: previous, head }, 'revision feed compacted');
      }
      previous = head;
    } catch (err) {
      log.warn({ err }, 'revision feed compaction failed; trying again next period');
    }
    options.afterTick?.();
  };
  const schedule = () => {
    cancel = clock.setTimer(() => {
      running = tick().finally(() => {
        if (!stopped) schedule();
      });
    }, retainMs);
  };
  running = tick().finally(schedule);
  return async () => {
    stopped = true;
    cancel?.();
    await running;
  };
}
