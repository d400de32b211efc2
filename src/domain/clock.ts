/**
 * Time, injected everywhere time matters (controllers, embedded cloud latencies, tokens),
 * so tests run in virtual time.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `fn` after `ms`; returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
  /** Resolve after `ms` (rejects with the signal's reason when aborted). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * Virtual time for tests: nothing happens until `advance` moves the clock; timers due by
 * then fire in order, with microtasks drained between them.
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Pending[] = [];

  constructor(startMs = Date.parse('2026-01-01T00:00:00Z')) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const p: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(p);
    return () => {
      this.timers = this.timers.filter((x) => x !== p);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const cancel = this.setTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        cancel();
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Move time forward by `ms`, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flushMicrotasks();
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}
