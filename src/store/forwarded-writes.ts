import {
  AuthenticationError,
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
  UnavailableError,
  UnprocessableError,
  isMagnetarError,
  type ErrorOptions,
  type ApiObject,
  type NewObject,
  type TypeKey,
} from '../domain/index.ts';
import type { AnyObject, DeleteOptions, ObjectStore, UpdateOptions, WriteOp } from './types.ts';
import { DelegatingStore } from './delegating-store.ts';

/**
 * A store for a thread that shares a SQLite file with the main thread without writing to it.
 *
 * SQLite lets one connection write at a time, and the main thread's connection holds the write
 * lock for most of each busy event-loop turn (group commit, ADR 0009): a second writer would
 * wait on SQLite's busy handler, asleep with its whole thread. So reads go to this thread's own
 * connection, and every write is handed to the main thread, which makes it on its connection
 * and answers once it is committed; a read after that answer sees the write. Changes are
 * announced by the main thread after each commit ({@link ForwardedWrites.changed}).
 */

/** The writes a {@link ForwardedWrites} hands over: method names of {@link ObjectStore}. */
export const FORWARDED_WRITES = [
  'create',
  'update',
  'updateStatus',
  'delete',
  'commit',
  'compact',
  'acquireLease',
  'releaseLease',
] as const;

export type ForwardedWrite = (typeof FORWARDED_WRITES)[number];

/** A write as it crosses the thread boundary. */
export interface WriteRequest {
  write: number;
  op: ForwardedWrite;
  args: unknown[];
}

/** Its answer: the value, or the error as plain data. */
export type WriteAnswer =
  { write: number; ok: true; value: unknown } | { write: number; ok: false; error: WireError };

interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

/** Make a forwarded write on `store` (the main thread's side). */
export async function answerWrite(store: ObjectStore, req: WriteRequest): Promise<WriteAnswer> {
  if (!(FORWARDED_WRITES as readonly string[]).includes(req.op)) {
    return { write: req.write, ok: false, error: { name: 'Error', message: `not a write: ${req.op}` } };
  }
  try {
    const value = await (store[req.op] as (this: ObjectStore, ...args: unknown[]) => Promise<unknown>).apply(
      store,
      req.args,
    );
    return { write: req.write, ok: true, value };
  } catch (err) {
    return { write: req.write, ok: false, error: toWire(err) };
  }
}

function toWire(err: unknown): WireError {
  if (isMagnetarError(err)) {
    return {
      name: err.name,
      message: err.message,
      code: err.code,
      ...(err.details ? { details: err.details } : {}),
    };
  }
  return { name: 'Error', message: err instanceof Error ? err.message : String(err) };
}

const ERRORS: Record<string, new (message: string, options?: ErrorOptions) => Error> = {
  ConflictError,
  NotFoundError,
  InputError,
  NotAllowedError,
  AuthenticationError,
  UnprocessableError,
  UnavailableError,
};

function fromWire(e: WireError): Error {
  const Kind = ERRORS[e.name];
  if (!Kind) return new Error(e.message);
  return new Kind(e.message, {
    ...(e.code ? { code: e.code } : {}),
    ...(e.details ? { details: e.details } : {}),
  });
}

/** Reads from `reads`; writes sent with `send` and answered through {@link ForwardedWrites.answered}. */
export class ForwardedWrites extends DelegatingStore {
  private next = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<() => void>();

  constructor(
    reads: ObjectStore,
    private readonly send: (req: WriteRequest) => void,
  ) {
    super(reads);
  }

  /** An answer from the main thread. */
  answered(a: WriteAnswer): void {
    const p = this.pending.get(a.write);
    if (!p) return;
    this.pending.delete(a.write);
    if (a.ok) p.resolve(a.value);
    else p.reject(fromWire(a.error));
  }

  /** The main thread committed new revisions. */
  changed(): void {
    for (const l of this.listeners) l();
  }

  /** Fail every write still waiting (the main thread is going away). */
  failPending(reason: string): void {
    for (const p of this.pending.values()) p.reject(new UnavailableError(reason));
    this.pending.clear();
  }

  private forward<R>(op: ForwardedWrite, ...args: unknown[]): Promise<R> {
    const write = ++this.next;
    return new Promise<R>((resolve, reject) => {
      this.pending.set(write, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ write, op, args });
    });
  }

  override create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T> {
    return this.forward('create', object);
  }
  override update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T> {
    return this.forward('update', object, options);
  }
  override updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T> {
    return this.forward('updateStatus', object);
  }
  override delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.forward('delete', type, namespace, name, options);
  }
  override commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]> {
    return this.forward('commit', ops);
  }
  override compact(beforeRevision: number): Promise<void> {
    return this.forward('compact', beforeRevision);
  }
  override acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.forward('acquireLease', name, holder, ttlMs, nowMs);
  }
  override releaseLease(name: string, holder: string): Promise<void> {
    return this.forward('releaseLease', name, holder);
  }

  override onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  override async close(): Promise<void> {
    this.failPending('the store is closed');
    await this.inner.close();
  }
}
