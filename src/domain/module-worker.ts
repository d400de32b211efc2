import { Worker } from 'node:worker_threads';
import type { Logger } from './logger.ts';
import { majorGcsOf, threadCpuSeconds } from './thread-cpu.ts';

/**
 * Start a worker thread that runs the TypeScript module `entry` (Magnetar runs its sources
 * through tsx, which a new thread has to register for itself before the first import). The
 * thread reads `workerData` as given; a failure to load the module is posted as `{ failed }`.
 */
export function startModuleWorker(entry: URL, workerData: object): Worker {
  return new Worker(BOOT, {
    eval: true,
    workerData: { ...workerData, entry: entry.href, loader: import.meta.resolve('tsx/esm/api') },
  });
}

const BOOT = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  (await import(workerData.loader)).register();
  await import(workerData.entry);
})().catch((err) => parentPort.postMessage({ failed: String((err && err.stack) || err) }));
`;

/** A thread as {@link superviseThread} keeps it: its worker and the promise of its exit code. */
export interface LaunchedThread {
  worker: Worker;
  exited: Promise<number>;
}

/** A thread kept running by {@link superviseThread}. */
export interface SupervisedThread<T extends LaunchedThread> {
  /** The running thread (a new one after a restart). */
  readonly current: T;
  /** Ask the thread to stop (`'close'`), end it after ten seconds if it has not, and wait. */
  close(): Promise<void>;
}

/**
 * Start a thread with `launch` and keep it running: one that dies is logged and started again
 * after `restartDelayMs`, until it starts, so the part of the region it runs is never silently
 * gone. `what` names it in the log ("the embedded cloud thread").
 */
export async function superviseThread<T extends LaunchedThread>(options: {
  what: string;
  launch: () => Promise<T>;
  log: () => Logger;
  /** Fields logged when a restarted thread is back. */
  backFields?: (thread: T) => object;
  /** @default 1000 */
  restartDelayMs?: number;
}): Promise<SupervisedThread<T>> {
  const { what, launch, log } = options;
  const delay = options.restartDelayMs ?? 1000;
  let current = await launch();
  let closing: Promise<void> | undefined;
  const watch = (thread: T): void => {
    void thread.exited.then(async (code) => {
      if (closing) return;
      log().error({ code }, `${what} stopped; starting it again`);
      while (!closing) {
        await new Promise((r) => setTimeout(r, delay).unref());
        if (closing) return;
        try {
          current = await launch();
          log().info(options.backFields?.(current) ?? {}, `${what} is back`);
          watch(current);
          return;
        } catch (err) {
          log().error({ err }, `${what} did not start again; retrying`);
        }
      }
    });
  };
  watch(current);
  return {
    get current() {
      return current;
    },
    close: () =>
      (closing ??= (async () => {
        const { worker, exited } = current;
        worker.postMessage('close');
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        await exited;
        clearTimeout(timer);
      })()),
  };
}

/** A thread started by {@link launchThread}, with what it reported when it was ready. */
export interface ReadyThread<R> extends LaunchedThread {
  /** The thread's id in the operating system, when it told. */
  tid: number | undefined;
  /** The thread's count of full garbage collections (`majorGcCounter`), when it sent one. */
  gcs: SharedArrayBuffer | undefined;
  /** The `ready` value the thread posted. */
  ready: R;
}

/**
 * Start the module `entry` on a thread and wait until it posts `{ ready, tid, gcs }`. A `{ failed }`
 * it posts, an uncaught error or an exit before that ends it and rejects. Every other message
 * goes to `onMessage`. `what` names the thread in errors ("the embedded cloud thread").
 */
export async function launchThread<R>(
  entry: URL,
  workerData: object,
  what: string,
  onMessage: (message: unknown, worker: Worker) => void = () => undefined,
): Promise<ReadyThread<R>> {
  const worker = startModuleWorker(entry, workerData);
  const exited = new Promise<number>((r) => worker.once('exit', r));
  // an error the thread did not catch ends it: reported through `exited`
  worker.on('error', () => undefined);
  let tid: number | undefined;
  let gcs: SharedArrayBuffer | undefined;
  const ready = await new Promise<R>((resolveReady, reject) => {
    worker.once('error', reject);
    void exited.then((code) => reject(new Error(`${what} exited (code ${code})`)));
    worker.on('message', (m: unknown) => {
      const status = (m ?? {}) as { ready?: R; failed?: string; tid?: number; gcs?: SharedArrayBuffer };
      if (typeof m === 'object' && m !== null && ('ready' in m || 'failed' in m)) {
        tid ??= status.tid;
        gcs ??= status.gcs;
        if (status.ready !== undefined) resolveReady(status.ready);
        else reject(new Error(`${what} did not start: ${status.failed}`));
        return;
      }
      onMessage(m, worker);
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  return { worker, exited, tid, gcs, ready };
}

/**
 * What a supervised thread tells of its running worker, for benchmarks: the CPU seconds and the
 * full garbage collections since it started (undefined where the system or the thread did not tell).
 */
export function threadFigures(thread: SupervisedThread<ReadyThread<unknown>>): {
  cpuSeconds(): number | undefined;
  majorGcs(): number | undefined;
} {
  return {
    cpuSeconds: () => threadCpuSeconds(thread.current.tid),
    majorGcs: () => majorGcsOf(thread.current.gcs),
  };
}
