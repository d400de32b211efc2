import { Worker } from 'node:worker_threads';

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
