import type { Config, Logger } from './domain/index.ts';
import { launchThread, superviseThread, threadFigures, throttled, type ReadyThread } from './domain/index.ts';
import { answerWrite, type ObjectStore, type WriteRequest } from './store/index.ts';
import type { EmulationTiming } from './workload/index.ts';

/**
 * The workload emulator on a thread of its own (docs/adr/0023-workload-emulator-thread.md).
 *
 * The emulated clusters' API servers and kubelets stand for machines that, on a real cloud,
 * run elsewhere: their TLS and HTTP serving, node bookkeeping and feed reading took about a
 * tenth of the main thread while clusters were built. Here they run in a worker thread that
 * reads Magnetar's SQLite file through a connection of its own and hands every write (the
 * emulated clusters' objects, the endpoint annotation, its lease) to the main thread, which
 * makes it on its connection: SQLite lets one connection write at a time, and the main
 * thread's holds the write lock most of a busy turn. The main thread tells the thread when it
 * has committed, so the emulator follows the feed as it would in the main thread.
 */

/** What the thread needs from its parent; plain data (it crosses the thread boundary). */
export interface EmulatorWorkerData {
  config: Config;
  /** Address the emulated API servers listen on. */
  host: string;
  timing: Partial<EmulationTiming>;
  lease: { holder: string; ttlMs: number };
  /** The main thread's log level (`info`, `debug`…): the thread sends nothing below it. */
  logLevel: string;
}

/** Messages from the main thread besides write answers. */
export type EmulatorThreadMessage = 'changed' | 'close';

/** A running emulator thread. */
export interface EmulatorThread {
  /** CPU seconds the running thread has used since it started (Linux); undefined elsewhere. */
  cpuSeconds(): number | undefined;
  /** Full garbage collections of the running thread since it started. For benchmarks. */
  majorGcs(): number | undefined;
  /** Stop the thread abruptly, as a crash would (tests); it is started again. */
  kill(): Promise<void>;
  /** Stop the thread: the emulated endpoints close and its lease is given back. */
  close(): Promise<void>;
}

const RESTART_DELAY_MS = 1000;
/**
 * How often, at most, the thread hears that the main thread committed. While clusters are
 * built the main thread commits hundreds of times a second; a message each was 1.7% of the main
 * thread's profile at 200 clusters, and each woke the thread to read a few feed entries. A
 * commit after a quiet spell is still told at once; under load the thread reads what 20 ms of
 * commits wrote, in one read.
 */
const NOTIFY_EVERY_MS = 20;
const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error']);

interface ThreadMessage {
  log?: string;
  obj?: object;
  msg?: string;
  write?: number;
}

/** Start one emulator thread: its writes are made on `store`, its log records go to `log`. */
function launch(data: EmulatorWorkerData, store: ObjectStore, log: () => Logger): Promise<ReadyThread<true>> {
  return launchThread<true>(
    new URL('./workload-emulator-worker.ts', import.meta.url),
    data,
    'the workload emulator thread',
    (message, worker) => {
      const m = message as ThreadMessage;
      if (m.write !== undefined) {
        void answerWrite(store, m as WriteRequest).then((answer) => {
          try {
            worker.postMessage(answer);
          } catch {
            // the thread is gone: nobody waits for the answer
          }
        });
      } else if (m.log !== undefined && LEVELS.has(m.log)) {
        // the record carries the emulator's own bindings (its component among them)
        log()[m.log as 'info'](m.obj ?? {}, m.msg);
      }
    },
  );
}

/**
 * Start the emulator thread and wait until it serves. A thread that dies is started again
 * after a second; the emulated clusters come back from the store, as after a restart.
 */
export async function startEmulatorThread(options: {
  config: Config;
  store: ObjectStore;
  host: string;
  timing: Partial<EmulationTiming>;
  lease: { holder: string; ttlMs: number };
  log: () => Logger;
  logLevel: string;
}): Promise<EmulatorThread> {
  const { store, log } = options;
  const data: EmulatorWorkerData = {
    config: options.config,
    host: options.host,
    timing: options.timing,
    lease: options.lease,
    logLevel: options.logLevel,
  };
  const thread = await superviseThread({
    what: 'the workload emulator thread',
    launch: () => launch(data, store, log),
    log,
    restartDelayMs: RESTART_DELAY_MS,
  });
  // the thread follows the feed: tell it after a commit, at most once per NOTIFY_EVERY_MS
  const notice = throttled(NOTIFY_EVERY_MS, () => {
    try {
      thread.current.worker.postMessage('changed' satisfies EmulatorThreadMessage);
    } catch {
      // between a death and the restart: the new thread reads the feed from its start
    }
  });
  const unsubscribe = store.onChange(() => notice.call());
  return {
    ...threadFigures(thread),
    async kill() {
      await thread.current.worker.terminate();
    },
    async close() {
      unsubscribe();
      notice.cancel();
      await thread.close();
    },
  };
}
