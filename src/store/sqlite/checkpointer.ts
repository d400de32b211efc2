import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * How often the checkpointing thread looks for new commits, in milliseconds. A turn's commit
 * appends its pages to the WAL; at this pace the WAL holds a few hundred milliseconds of writes.
 */
const CHECK_MS = 200;

/**
 * The thread's code: its own connection to the database file, and a passive checkpoint (copy
 * the WAL's committed pages into the database file, then sync it) whenever the counter the
 * store bumps on each commit has moved. A passive checkpoint waits for no reader or writer; the
 * store's next write transaction then starts the WAL over from its beginning.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const commits = new Int32Array(workerData.commits);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = 0');
let seen = 0;
const timer = setInterval(() => {
  const now = Atomics.load(commits, 0);
  if (now === seen) return;
  seen = now;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ failed: String(err && err.message) });
  }
}, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * WAL checkpoints on a thread of their own. With SQLite's automatic checkpoint, every thousandth
 * page a commit writes makes that commit copy the WAL into the database file and sync it on the
 * event loop: about 17 ms each, a dozen times per hundred clusters built. Here a worker thread
 * with its own connection does it, so the event loop only appends to the WAL.
 *
 * The store keeps an automatic checkpoint at a much larger size as a safety net: should the
 * thread stop, the WAL still stays bounded.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly commits = new Int32Array(new SharedArrayBuffer(4));
  private exited: Promise<void>;
  /** The last error the thread reported, for diagnostics. */
  lastError: string | undefined;

  constructor(path: string, onStop: () => void) {
    this.worker = new Worker(THREAD_CODE, {
      eval: true,
      workerData: {
        path,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        commits: this.commits.buffer,
        everyMs: CHECK_MS,
      },
    });
    this.worker.unref();
    this.worker.on('message', (m: { failed?: string }) => {
      this.lastError = m.failed;
    });
    this.worker.on('error', (err) => {
      this.lastError = err.message;
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', () => {
        onStop();
        resolve();
      });
    });
  }

  /** Tell the thread a commit has written to the WAL. */
  committed(): void {
    Atomics.add(this.commits, 0, 1);
  }

  /** Stop the thread after it closes its connection. */
  async close(): Promise<void> {
    // held until it has gone, so a process closing its store waits for the connection to close
    this.worker.ref();
    this.worker.postMessage('close');
    const timeout = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 2000).unref());
    if ((await Promise.race([this.exited.then(() => 'done' as const), timeout])) === 'late')
      await this.worker.terminate();
    await this.exited;
  }
}
