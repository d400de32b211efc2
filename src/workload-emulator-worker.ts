import { resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { currentThreadId, majorGcCounter, systemClock, type Logger } from './domain/index.ts';
import { openStore } from './main.ts';
import { ForwardedWrites, SqliteStore, type WriteAnswer } from './store/index.ts';
import type { EmulatorWorkerData, EmulatorThreadMessage } from './workload-emulator-thread.ts';
import { StorePki, WorkloadEmulator, loadOrCreateKey } from './workload/index.ts';

/**
 * The workload emulator's thread (see workload-emulator-thread.ts): the emulated clusters'
 * API servers and kubelets, reading Magnetar's store through a connection of this thread and
 * handing every write to the main thread.
 */
const data = workerData as EmulatorWorkerData;
const port = parentPort!;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];
/** The main thread's log level: records below it are not sent at all (`silent`: none is). */
const lowest = LEVELS.includes(data.logLevel)
  ? LEVELS.indexOf(data.logLevel)
  : data.logLevel === 'silent' || data.logLevel === 'fatal'
    ? LEVELS.length
    : 0;

/** Log records go to the main thread's logger, with their bindings. */
function forwardingLogger(bindings: Record<string, unknown>): Logger {
  const post = (level: string) => (obj: object | string, msg?: string) => {
    if (LEVELS.indexOf(level) < lowest) return;
    const record =
      typeof obj === 'string' ? { obj: bindings, msg: obj } : { obj: { ...bindings, ...obj }, msg };
    try {
      port.postMessage({ log: level, ...record });
    } catch {
      port.postMessage({ log: level, msg: `${msg ?? ''} (record not transferable)` });
    }
  };
  return {
    trace: post('trace'),
    debug: post('debug'),
    info: post('info'),
    warn: post('warn'),
    error: post('error'),
    child: (more) => forwardingLogger({ ...bindings, ...more }),
  };
}

async function run(): Promise<void> {
  const { config } = data;
  // Magnetar's store, read through this thread's own connection (a pool of its own on PostgreSQL)
  const reads =
    config.store.engine === 'sqlite'
      ? new SqliteStore({
          path: resolve(config.dataDir, config.store.url ?? 'magnetar.sqlite'),
          backgroundCheckpoints: false,
        })
      : await openStore(config);
  const store = new ForwardedWrites(reads, (req) => port.postMessage(req));
  const emulator = new WorkloadEmulator({
    store,
    pki: new StorePki({ store, clock: systemClock, encryptionKey: loadOrCreateKey(config.dataDir) }),
    clock: systemClock,
    host: data.host,
    log: forwardingLogger({}),
    timing: data.timing,
    lease: data.lease,
  });
  port.on('message', (m: EmulatorThreadMessage | WriteAnswer) => {
    if (m === 'changed') store.changed();
    else if (m === 'close') {
      void (async () => {
        await emulator.stop();
        await store.close();
        port.close();
      })();
    } else store.answered(m);
  });
  await emulator.start();
  port.postMessage({ ready: true, tid: currentThreadId(), gcs: majorGcCounter() });
}

run().catch((err: unknown) => {
  port.postMessage({ failed: err instanceof Error ? (err.stack ?? err.message) : String(err) });
});
