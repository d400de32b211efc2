/** A call that runs at most once per period, on real time: see {@link throttled}. */
export interface Throttled {
  /** Run now when the last run is a period old, else once when it is; calls meanwhile add nothing. */
  call(): void;
  /** Drop a run that is waiting for its turn. */
  cancel(): void;
}

/**
 * `fn` run at most once every `periodMs`, and never later than that after a call: the first
 * call after a quiet spell runs at once, the calls of a busy spell end in one run when the
 * period is up. For wake-ups that the woken side answers by reading everything new, where
 * a wake-up per event costs more than the reads it saves.
 */
export function throttled(periodMs: number, fn: () => void): Throttled {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    timer = undefined;
    last = performance.now();
    fn();
  };
  return {
    call() {
      if (timer) return;
      const wait = last + periodMs - performance.now();
      if (wait <= 0) run();
      else timer = setTimeout(run, wait);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
