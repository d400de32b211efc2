import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../domain/index.ts';
import { majorGcsOf, startModuleWorker, threadCpuSeconds } from '../../domain/index.ts';
import type { IssueKeyPairOptions, PemKeyPair } from './issuing.ts';
import { inlineKeyMaker, type KeyMaker } from './key-maker.ts';

interface Pending {
  op: keyof KeyMaker;
  args: unknown[];
  resolve: (value: never) => void;
  reject: (err: Error) => void;
}

/**
 * A {@link KeyMaker} on a thread of its own. Building a cluster makes three CAs, a
 * service-account key and a few certificates; in `@peculiar/x509` that is about a tenth of the
 * event loop's work while a region builds clusters, and none of it needs the loop.
 *
 * The thread starts with the first call. Calls are pure (PEM in, PEM out), so the calls a
 * thread that died had not answered are sent again to a new one. If the thread cannot start at
 * all (its module fails to load), keys are made on this thread from then on, with a warning.
 */
export class KeyMakerThread implements KeyMaker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private fallback: KeyMaker | undefined;
  private closed = false;
  /** The running thread's id in the operating system, once it has said. */
  private tid: number | undefined;
  /** The running thread's count of full garbage collections, once it has sent it. */
  private gcs: SharedArrayBuffer | undefined;

  /**
   * `log`: the logger at the time of an event (the server's, once it exists). `entry`: the
   * thread's module (tests give one that fails to load).
   */
  constructor(
    private readonly log: () => Logger,
    private readonly entry = new URL('./key-maker-worker.ts', import.meta.url),
  ) {}

  createCa(commonName: string, nowMs: number): Promise<PemKeyPair> {
    return this.call('createCa', [commonName, nowMs]);
  }

  createServiceAccountKey(): Promise<PemKeyPair> {
    return this.call('createServiceAccountKey', []);
  }

  issueKeyPair(ca: PemKeyPair, options: IssueKeyPairOptions): Promise<PemKeyPair> {
    return this.call('issueKeyPair', [{ certPem: ca.certPem, keyPem: ca.keyPem }, options]);
  }

  /** Stop the thread; later calls are made on this thread. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.useFallback();
    await worker?.terminate();
  }

  /**
   * CPU seconds the running key-making thread has used since it started (where the system
   * tells; undefined before it has started, after it stopped, or elsewhere). For benchmarks.
   */
  cpuSeconds(): number | undefined {
    return this.worker ? threadCpuSeconds(this.tid) : undefined;
  }

  /** Full garbage collections of the running key-making thread (undefined as for `cpuSeconds`). */
  majorGcs(): number | undefined {
    return this.worker ? majorGcsOf(this.gcs) : undefined;
  }

  /** End the thread abruptly, as a crash would (for tests). */
  async kill(): Promise<void> {
    await this.worker?.terminate();
  }

  private call<T>(op: keyof KeyMaker, args: unknown[]): Promise<T> {
    if (this.fallback) return (this.fallback[op] as (...a: unknown[]) => Promise<T>)(...args);
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { op, args, resolve: resolve, reject });
      this.send(id);
    });
  }

  private send(id: number): void {
    const call = this.pending.get(id)!;
    const worker = (this.worker ??= this.start());
    worker.ref();
    worker.postMessage({ id, op: call.op, args: call.args });
  }

  private start(): Worker {
    const worker = startModuleWorker(this.entry, {});
    worker.on(
      'message',
      (m: {
        id?: number;
        value?: unknown;
        error?: string;
        failed?: string;
        tid?: number;
        gcs?: SharedArrayBuffer;
      }) => {
        if (m.tid !== undefined && this.worker === worker) this.tid = m.tid;
        if (m.gcs !== undefined && this.worker === worker) this.gcs = m.gcs;
        if (m.failed !== undefined) {
          this.log().warn(
            { reason: m.failed },
            'the key-making thread did not start; making keys on this thread',
          );
          this.worker = undefined;
          void worker.terminate();
          this.useFallback();
          return;
        }
        if (m.id === undefined) return;
        const call = this.pending.get(m.id);
        if (!call) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) call.reject(new Error(m.error));
        else call.resolve(m.value as never);
        if (this.pending.size === 0) worker.unref();
      },
    );
    worker.on('error', (err) => this.log().warn({ err }, 'the key-making thread failed'));
    worker.once('exit', () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.closed || this.pending.size === 0) return;
      this.log().warn({ calls: this.pending.size }, 'the key-making thread stopped; asking a new one');
      for (const id of this.pending.keys()) this.send(id);
    });
    return worker;
  }

  /** Answer the unanswered calls, and every later one, on this thread. */
  private useFallback(): void {
    this.fallback ??= inlineKeyMaker();
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const c of calls) {
      (this.fallback[c.op] as (...a: unknown[]) => Promise<never>)(...c.args).then(c.resolve, c.reject);
    }
  }
}
