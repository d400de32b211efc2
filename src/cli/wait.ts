import { Option, type Command } from 'commander';
import { CloudError } from '../cloud/index.ts';
import { CommandFailedError } from './coe-errors.ts';
import { warn, type CoeContext } from './coe-context.ts';
import { parseNumber } from './arg-parsers.ts';

/**
 * `--wait` for asynchronous commands: poll the object, report status and status_reason changes
 * on stderr with the elapsed time, and stop at a final status — `*_COMPLETE` of the expected
 * action, any `*_FAILED`, or "not found" after a delete.
 */

/** The `--wait` family of options as commander parses them. */
export interface WaitOptions {
  wait?: boolean;
  /** Minutes. */
  timeout?: number;
  /** Seconds. */
  pollInterval?: number;
}

/** Default poll interval, seconds. */
export const DEFAULT_POLL_SECONDS = 5;
/** Default wait limit, minutes. */
export const DEFAULT_WAIT_MINUTES = 60;

/**
 * Add `--wait`, `--poll-interval` and (unless the command already has its own, like
 * `cluster create`) `--timeout`.
 */
export function addWaitOptions(cmd: Command, what: string, withTimeout = true): Command {
  cmd.option('--wait', `wait until ${what}, showing progress on stderr; exit 1 if it fails`);
  if (withTimeout) {
    cmd.addOption(
      new Option('--timeout <minutes>', 'with --wait: give up after this many minutes')
        .argParser(parseNumber('--timeout', 0))
        .default(DEFAULT_WAIT_MINUTES),
    );
  }
  cmd.addOption(
    new Option('--poll-interval <seconds>', 'with --wait: seconds between status checks')
      .argParser(parseNumber('--poll-interval', 0))
      .default(DEFAULT_POLL_SECONDS),
  );
  return cmd;
}

/** What the poller sees of the object: its status, or null once it is gone. */
export interface Observed {
  status: string;
  reason: string | null;
}

/** The action whose completion is awaited. */
export type AwaitedAction = 'CREATE' | 'UPDATE' | 'DELETE';

/** One thing to wait for. */
export interface WaitTarget {
  /** e.g. `cluster production-kubernetes`. */
  label: string;
  action: AwaitedAction;
  /** Current status; null when the object no longer exists. */
  observe(): Promise<Observed | null>;
}

/**
 * Polls that must keep showing the `*_COMPLETE` of another action before it counts as final:
 * a server that starts the operation asynchronously still shows the old status for a moment,
 * while a request that changed nothing never leaves it.
 */
export const STALE_POLLS = 3;

type Verdict = { done: false } | { done: true; ok: boolean; text: string };

function judge(action: AwaitedAction, seen: Observed | null, staleCount: number): Verdict {
  if (seen === null) {
    return action === 'DELETE'
      ? { done: true, ok: true, text: 'deleted' }
      : { done: true, ok: false, text: 'disappeared' };
  }
  const { status } = seen;
  if (status.endsWith('_FAILED')) return { done: true, ok: false, text: status };
  if (action === 'DELETE')
    return status === 'DELETE_COMPLETE' ? { done: true, ok: true, text: 'deleted' } : { done: false };
  if (!status.endsWith('_COMPLETE')) return { done: false };
  if (status.startsWith(`${action}_`) || (action === 'UPDATE' && status.startsWith('ROLLBACK_'))) {
    return { done: true, ok: true, text: status };
  }
  return staleCount >= STALE_POLLS
    ? { done: true, ok: true, text: `${status} (unchanged)` }
    : { done: false };
}

/** `1m05s`, `2h03m`, `42s`. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Transient failures while polling are reported and retried until the time limit. */
function isTransientPollError(err: unknown): err is CloudError {
  return err instanceof CloudError && err.transient;
}

/**
 * Poll until `target` reaches a final status. Resolves when it completed; throws
 * CommandFailedError (exit 1) when it failed, vanished, or the time limit passed.
 */
export async function waitFor(ctx: CoeContext, target: WaitTarget, options: WaitOptions): Promise<void> {
  const start = ctx.clock.now();
  const limitMs = (options.timeout ?? DEFAULT_WAIT_MINUTES) * 60_000;
  const pollMs = Math.max(0, (options.pollInterval ?? DEFAULT_POLL_SECONDS) * 1000);
  const tty = ctx.stderr.isTTY === true;
  let last: Observed | null | undefined;
  let transient = false;
  let staleCount = 0;
  const clearLine = () => {
    if (tty && transient) ctx.stderr.write('\r\x1b[K');
    transient = false;
  };
  for (;;) {
    const elapsed = ctx.clock.now() - start;
    let seen: Observed | null;
    try {
      seen = await target.observe();
    } catch (err) {
      if (!isTransientPollError(err)) {
        clearLine();
        throw err;
      }
      clearLine();
      warn(ctx, `[${formatElapsed(elapsed)}] ${target.label}: ${err.cloudMessage}; retrying`);
      seen = last ?? null;
      if (last === undefined) {
        await sleepOrTimeout(ctx, target, start, limitMs, pollMs, null);
        continue;
      }
    }
    const changed = last === undefined || seen?.status !== last?.status || seen?.reason !== last?.reason;
    if (changed && seen !== null) {
      clearLine();
      warn(
        ctx,
        `[${formatElapsed(elapsed)}] ${target.label}: ${seen.status}${seen.reason ? ` - ${seen.reason}` : ''}`,
      );
    }
    last = seen;
    staleCount =
      seen?.status.endsWith('_COMPLETE') && !seen.status.startsWith(`${target.action}_`) ? staleCount + 1 : 0;
    const verdict = judge(target.action, seen, staleCount);
    if (verdict.done) {
      clearLine();
      const after = formatElapsed(ctx.clock.now() - start);
      if (!verdict.ok) {
        const reason = seen?.reason ? `: ${seen.reason}` : '';
        throw new CommandFailedError(`${target.label} ended ${verdict.text} after ${after}${reason}`);
      }
      warn(ctx, `${target.label}: ${verdict.text} after ${after}`);
      return;
    }
    if (tty) {
      ctx.stderr.write(`\r\x1b[K${target.label}: ${seen?.status ?? '?'} (${formatElapsed(elapsed)})`);
      transient = true;
    }
    await sleepOrTimeout(ctx, target, start, limitMs, pollMs, seen);
  }
}

async function sleepOrTimeout(
  ctx: CoeContext,
  target: WaitTarget,
  start: number,
  limitMs: number,
  pollMs: number,
  seen: Observed | null,
): Promise<void> {
  const left = start + limitMs - ctx.clock.now();
  if (left <= 0) {
    const status = seen ? `; last status ${seen.status}` : '';
    throw new CommandFailedError(
      `gave up waiting for ${target.label} after ${formatElapsed(limitMs)}${status}`,
    );
  }
  await ctx.clock.sleep(Math.min(pollMs, left));
}

/** Wait for each target in turn (several deletes). */
export async function waitForAll(
  ctx: CoeContext,
  targets: readonly WaitTarget[],
  options: WaitOptions,
): Promise<void> {
  for (const t of targets) await waitFor(ctx, t, options);
}
