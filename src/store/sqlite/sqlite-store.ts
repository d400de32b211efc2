import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConflictError, deepFreeze, MagnetarError, NotFoundError, sameJson } from '../../domain/index.ts';
import { matchesSelector } from '../../domain/index.ts';
import { typeOf, type ApiObject, type NewObject, type TypeKey } from '../../domain/index.ts';
import {
  decodeContinue,
  encodeContinue,
  prepareCreate,
  prepareDelete,
  prepareUpdate,
  prepareUpdateStatus,
} from '../object-ops.ts';
import { parseEventType, parseStoredJson, parseStoredObject } from '../row.ts';
import type {
  AnyObject,
  DeleteOptions,
  LeaseInfo,
  ListOptions,
  ListResult,
  ObjectStore,
  WatchEvent,
  UpdateOptions,
  WriteOp,
} from '../types.ts';
import { BackgroundCheckpointer } from './checkpointer.ts';
import { sqliteMigrations } from './migrations.ts';

/** Options of the SQLite engine. */
export interface SqliteStoreOptions {
  /** File path, or `:memory:`. @default ':memory:' */
  path?: string;
  /** Clock for creation/deletion timestamps. @default Date.now */
  now?: () => number;
  /**
   * Checkpoint the WAL on a thread of its own (see {@link BackgroundCheckpointer}) instead of in
   * the commit that crosses SQLite's threshold. Files only. @default true
   */
  backgroundCheckpoints?: boolean;
  /**
   * Keep the revision feed. A store nobody watches (the embedded cloud's own file: its services
   * read records, never changes) leaves it out, and each write stores its object once instead
   * of twice; {@link SqliteStore.changes} then refuses. @default true
   */
  feed?: boolean;
}

/** WAL pages (4 KiB) after which a commit checkpoints itself: SQLite's default. */
const AUTO_CHECKPOINT_PAGES = 1000;
/** The same, while a checkpointing thread runs: only a safety net should it stop. */
const SAFETY_CHECKPOINT_PAGES = 16_000;

interface ObjectRow {
  seq: number;
  data: string;
}

/**
 * Feed entries of late, decoded, by revision. The process's feed readers (the controllers' work
 * queues, their object cache, the workload emulator, the API's read models) follow the same
 * feed a few revisions apart, and most writes build on the version just read: the entries this
 * connection writes are kept as written, those of other connections decoded once, and every
 * reader and writer shares that copy, frozen. A revision names one feed entry for good:
 * revisions of a refused write are given back before any reader can see them (and the next
 * write of that revision replaces the entry), those of a failed commit are never handed out
 * again.
 */
const DECODED_FEED_ENTRIES = 16_384;

/**
 * Objects this connection has updated, the newest version of each, by the object's `seq`: the
 * next write of an object usually builds on the version its last write left, often long after
 * that revision has left the decoded feed entries (a machine waiting for its bootstrap data). The
 * version is checked against the stored one before it is used. Objects only ever created (a
 * bootstrap data secret) are not kept.
 */
const UPDATED_OBJECTS = 65_536;

/**
 * Past {@link DECODED_FEED_ENTRIES} revisions kept, drop the quarter kept longest (a Map iterates
 * in insertion order): readers are near the head.
 */
function keepNewest(byRevision: Map<number, unknown>): void {
  if (byRevision.size <= DECODED_FEED_ENTRIES) return;
  for (const r of byRevision.keys()) {
    byRevision.delete(r);
    if (byRevision.size <= DECODED_FEED_ENTRIES * 0.75) break;
  }
}

/** A write done in the open transaction, waiting for its commit to report its outcome. */
interface WaitingWrite {
  ok: boolean;
  value: unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** The object store on SQLite (better-sqlite3, WAL). Synchronous underneath, async to its callers. */
export class SqliteStore implements ObjectStore {
  readonly engine = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly events = new EventEmitter();
  private readonly now: () => number;
  private notifyPending = false;
  private readonly stmts;
  private readonly cache = new Map<string, Database.Statement<unknown[], unknown>>();
  /**
   * The label keys counted by (`type\0key`, see {@link countByLabel}), as `counted_labels` held
   * them when this connection's write transaction began (keys are only ever added: a size that
   * changed means another connection added one).
   */
  private readonly countedKeys = new Set<string>();
  private readonly countedTypes = new Set<string>();
  private countedRows = -1;
  /** Writes done in the open transaction, told their outcome when it commits (see {@link tx}). */
  private waiting: WaitingWrite[] = [];
  /** A multi-object write: a savepoint of the open transaction. */
  private readonly savepoint: Database.Transaction<(fn: () => unknown) => unknown>;
  /**
   * The revision counter while the turn's write transaction is open: read when it begins,
   * counted here, stored once when it commits. The transaction holds SQLite's write lock
   * throughout, so no other process can take a revision in between. Undefined when none is open.
   */
  private revision: number | undefined;
  /** The stored counter when the open transaction began. */
  private counterAtBegin = 0;
  /** The first revision the open transaction may hand out, less one. */
  private txStart = 0;
  /** The highest revision this connection has ever handed out, committed or not. */
  private issued = 0;
  /**
   * Revisions handed out by transactions that failed to commit (the database failed, not a
   * write refused): readers of this connection may have seen them, so a feed read from inside
   * one of these ranges is told to list again (see {@link changes}). They are never reused.
   */
  private readonly lost: [number, number][] = [];
  /** The highest revision this connection knows to be committed: its own commits, what it read. */
  private knownRevision = 0;
  /** Set by a read of the counter until the end of the event-loop turn (see {@link currentRevision}). */
  private revisionFresh = false;
  private readonly checkpointer: BackgroundCheckpointer | undefined;
  /** See {@link DECODED_FEED_ENTRIES}. */
  private readonly decoded = new Map<number, ApiObject>();
  /** See {@link UPDATED_OBJECTS}: committed versions only. */
  private readonly updated = new Map<number, ApiObject>();
  /** The open transaction's updates (`undefined`: removed), kept in {@link updated} at commit. */
  private updatedInTurn: [number, ApiObject | undefined][] = [];
  /**
   * The type and event of the feed entries this connection wrote, by revision, as many as
   * {@link decoded} keeps: where they cover a reader's whole range, `changes` answers without a
   * query (see {@link ownChanges}).
   */
  private readonly written = new Map<number, { type: TypeKey; event: WatchEvent['type'] }>();
  /** See {@link SqliteStoreOptions.feed}. */
  private readonly feed: boolean;

  constructor(options: SqliteStoreOptions = {}) {
    const path = options.path ?? ':memory:';
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.now = options.now ?? Date.now;
    this.feed = options.feed ?? true;
    this.events.setMaxListeners(0);
    this.migrate();
    if (path !== ':memory:' && options.backgroundCheckpoints !== false) {
      this.db.pragma(`wal_autocheckpoint = ${SAFETY_CHECKPOINT_PAGES}`);
      this.checkpointer = new BackgroundCheckpointer(path, () => {
        if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
      });
    }
    const db = this.db;
    this.stmts = {
      curRev: db.prepare<[], { value: number }>(`SELECT value FROM meta WHERE key = 'revision'`),
      compacted: db.prepare<[], { value: number }>(`SELECT value FROM meta WHERE key = 'compacted'`),
      get: db.prepare<[string, string, string], ObjectRow>(
        `SELECT seq, data FROM objects WHERE type = ? AND namespace = ? AND name = ?`,
      ),
      version: db.prepare<[string, string, string], { seq: number; rv: number }>(
        `SELECT seq, rv FROM objects WHERE type = ? AND namespace = ? AND name = ?`,
      ),
      getUid: db.prepare<[string, string], ObjectRow>(
        `SELECT seq, data FROM objects WHERE type = ? AND uid = ?`,
      ),
      seqOfUid: db.prepare<[string], { seq: number }>(`SELECT seq FROM objects WHERE uid = ?`),
      insert: db.prepare(
        `INSERT INTO objects (type, namespace, name, uid, seq, rv, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      replace: db.prepare(
        `UPDATE objects SET rv = ?, data = ? WHERE type = ? AND namespace = ? AND name = ?`,
      ),
      remove: db.prepare(`DELETE FROM objects WHERE type = ? AND namespace = ? AND name = ?`),
      feed: db.prepare(`INSERT INTO feed (revision, type, event, data) VALUES (?, ?, ?, ?)`),
      feedEntry: db.prepare<[number], { data: string }>(`SELECT data FROM feed WHERE revision = ?`),
      count: db.prepare<[string], { n: number }>(
        `SELECT coalesce(sum(n), 0) AS n FROM object_counts WHERE type = ?`,
      ),
      countNs: db.prepare<[string, string], { n: number }>(
        `SELECT n FROM object_counts WHERE type = ? AND namespace = ?`,
      ),
      countByLabel: db.prepare<[string, string, string], { value: string; n: number }>(
        `SELECT value, n FROM label_counts WHERE type = ? AND key = ? AND namespace = ? AND n > 0`,
      ),
      isCounted: db.prepare<[string, string], { key: string }>(
        `SELECT key FROM counted_labels WHERE type = ? AND key = ?`,
      ),
      markCounted: db.prepare<[string, string]>(`INSERT INTO counted_labels (type, key) VALUES (?, ?)`),
      countedAll: db.prepare<[], { type: string; key: string }>(`SELECT type, key FROM counted_labels`),
      countedSize: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM counted_labels`),
      countAdd: db.prepare<[string, string, string, string, number]>(
        `INSERT INTO label_counts (type, key, namespace, value, n) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (type, key, namespace, value) DO UPDATE SET n = n + excluded.n`,
      ),
      countExisting: db.prepare<[string, string]>(
        `INSERT INTO label_counts (type, key, namespace, value, n)
           SELECT l.type, l.key, o.namespace, l.value, count(*) FROM object_labels l
             JOIN objects o ON o.type = l.type AND o.seq = l.seq
            WHERE l.type = ? AND l.key = ? GROUP BY o.namespace, l.value`,
      ),
      setRev: db.prepare<[number]>(`UPDATE meta SET value = ? WHERE key = 'revision'`),
      seq: db.prepare<[string, string, string], { seq: number }>(
        `SELECT seq FROM objects WHERE type = ? AND namespace = ? AND name = ?`,
      ),
      labelAdd: db.prepare<[number, string, string, string]>(
        `INSERT INTO object_labels (seq, type, key, value) VALUES (?, ?, ?, ?)`,
      ),
      labelsRemove: db.prepare<[number]>(`DELETE FROM object_labels WHERE seq = ?`),
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    };
    this.savepoint = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * One write of a batch. A single-object write checks everything that can refuse it (missing,
   * stale, already there, invalid) before its first statement, so a refusal leaves nothing to
   * undo and needs no savepoint; a multi-object write has one. Any other failure (the database
   * itself) rolls the whole batch back.
   */
  private runWrite(fn: () => unknown, atomic: boolean): { ok: boolean; value: unknown } {
    const revision = this.revision;
    const updates = this.updatedInTurn.length;
    try {
      return { ok: true, value: atomic ? this.savepoint(fn) : fn() };
    } catch (err) {
      if (!atomic && !(err instanceof MagnetarError)) throw err;
      this.updatedInTurn.length = updates;
      this.forget(revision, this.revision);
      this.revision = revision;
      return { ok: false, value: err };
    }
  }

  private migrate(): void {
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    const applied = new Set(
      this.db
        .prepare<[], { version: number }>('SELECT version FROM schema_migrations')
        .all()
        .map((r) => r.version),
    );
    for (const m of sqliteMigrations) {
      if (applied.has(m.version)) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, new Date().toISOString());
      })();
    }
  }

  /** A prepared statement for dynamic SQL (list pages, feed reads), prepared once per text. */
  private prepared<R>(sql: string): Database.Statement<unknown[], R> {
    let stmt = this.cache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], unknown>(sql);
      this.cache.set(sql, stmt);
    }
    return stmt as Database.Statement<unknown[], R>;
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  private nextRevision(): number {
    if (this.revision === undefined) throw new Error('a store write outside the write transaction');
    return ++this.revision;
  }

  private scheduleNotify(): void {
    if (this.notifyPending) return;
    this.notifyPending = true;
    queueMicrotask(() => {
      this.notifyPending = false;
      this.events.emit('change');
    });
  }

  // --- synchronous primitives, used inside transactions ---

  private createSync(input: NewObject<unknown, unknown>): ApiObject {
    const type = typeOf(input);
    const rev = this.nextRevision();
    const obj = prepareCreate(input, rev, this.nowIso());
    const m = obj.metadata;
    if (this.stmts.seq.get(type, m.namespace, m.name)) {
      throw new ConflictError(`${obj.kind} "${m.name}" already exists`, { code: 'AlreadyExists' });
    }
    if (this.stmts.seqOfUid.get(m.uid)) {
      throw new ConflictError(`an object with uid ${m.uid} already exists`, { code: 'AlreadyExists' });
    }
    const data = JSON.stringify(obj);
    this.stmts.insert.run(type, m.namespace, m.name, m.uid, rev, rev, data);
    this.indexLabels(rev, type, m.namespace, m.labels);
    if (this.feed) this.recordFeed(rev, type, 'ADDED', data);
    return this.remember(rev, obj);
  }

  private recordFeed(rev: number, type: TypeKey, event: WatchEvent['type'], data: string): void {
    this.stmts.feed.run(rev, type, event, data);
    this.written.set(rev, { type, event });
    keepNewest(this.written);
  }

  /** The label index rows of one object (the object's `seq` never changes while it exists). */
  private indexLabels(
    seq: number,
    type: TypeKey,
    namespace: string,
    labels: Record<string, string> | undefined,
  ): void {
    for (const [key, value] of Object.entries(labels ?? {})) this.stmts.labelAdd.run(seq, type, key, value);
    this.countLabels(type, namespace, labels, 1);
  }

  /** Move the counts of an object's counted label keys by `by` (see {@link countByLabel}). */
  private countLabels(
    type: TypeKey,
    namespace: string,
    labels: Record<string, string> | undefined,
    by: 1 | -1,
  ): void {
    if (!labels || !this.countedTypes.has(type)) return;
    for (const [key, value] of Object.entries(labels)) {
      if (this.countedKeys.has(`${type}\0${key}`)) this.stmts.countAdd.run(type, key, namespace, value, by);
    }
  }

  /** Read the counted label keys again when another connection added one (or `force`). */
  private refreshCounted(force = false): void {
    const rows = this.stmts.countedSize.get()!.n;
    if (!force && rows === this.countedRows) return;
    this.countedKeys.clear();
    this.countedTypes.clear();
    for (const r of this.stmts.countedAll.all()) {
      this.countedKeys.add(`${r.type}\0${r.key}`);
      this.countedTypes.add(r.type);
    }
    this.countedRows = rows;
  }

  /**
   * The stored object a write builds on. Most writes follow a read of the version a feed reader
   * has just decoded: that copy is taken as it is (the write builds a new object from it).
   */
  private loadSync(type: TypeKey, namespace: string, name: string): { seq: number; object: ApiObject } {
    const version = this.stmts.version.get(type, namespace, name);
    if (version) {
      const decoded = this.decoded.get(version.rv);
      if (decoded) return { seq: version.seq, object: decoded };
      const updated = this.updated.get(version.seq);
      if (updated?.metadata.resourceVersion === String(version.rv))
        return { seq: version.seq, object: updated };
    }
    const row = this.stmts.get.get(type, namespace, name);
    if (!row) throw new NotFoundError(`${type.split('.')[0]} "${name}" not found`, { code: 'NotFound' });
    return { seq: row.seq, object: parseStoredJson(row.data) };
  }

  private writeOutcome(
    type: TypeKey,
    rev: number,
    stored: { seq: number; object: ApiObject },
    object: ApiObject,
    removed: boolean,
  ): ApiObject | undefined {
    const m = object.metadata;
    const data = JSON.stringify(object);
    if (removed) {
      // the delete trigger drops the object's label rows; the counts are the store's to keep
      this.countLabels(type, m.namespace, stored.object.metadata.labels, -1);
      this.stmts.remove.run(type, m.namespace, m.name);
      if (this.feed) this.recordFeed(rev, type, 'DELETED', data);
      this.remember(rev, object);
      this.updatedInTurn.push([stored.seq, undefined]);
      return undefined;
    }
    this.stmts.replace.run(rev, data, type, m.namespace, m.name);
    if (!sameJson(stored.object.metadata.labels, m.labels)) {
      this.countLabels(type, m.namespace, stored.object.metadata.labels, -1);
      this.stmts.labelsRemove.run(stored.seq);
      this.indexLabels(stored.seq, type, m.namespace, m.labels);
    }
    if (this.feed) this.recordFeed(rev, type, 'MODIFIED', data);
    this.updatedInTurn.push([stored.seq, object]);
    return this.remember(rev, object);
  }

  private updateSync(incoming: AnyObject, options?: UpdateOptions): ApiObject {
    const type = typeOf(incoming);
    const stored = this.loadSync(type, incoming.metadata.namespace, incoming.metadata.name);
    const rev = this.nextRevision();
    const out = prepareUpdate(stored.object, incoming, rev, options);
    this.writeOutcome(type, rev, stored, out.object, out.removed);
    return out.object;
  }

  private updateStatusSync(incoming: AnyObject): ApiObject {
    const type = typeOf(incoming);
    const stored = this.loadSync(type, incoming.metadata.namespace, incoming.metadata.name);
    const rev = this.nextRevision();
    const obj = prepareUpdateStatus(stored.object, incoming, rev);
    this.writeOutcome(type, rev, stored, obj, false);
    return obj;
  }

  private deleteSync(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): ApiObject | undefined {
    const stored = this.loadSync(type, namespace, name);
    const rev = this.nextRevision();
    const out = prepareDelete(stored.object, options, rev, this.nowIso());
    if (out === 'unchanged') {
      // give the revision back: nothing was written
      this.revision = rev - 1;
      return stored.object;
    }
    return this.writeOutcome(type, rev, stored, out.object, out.removed);
  }

  /**
   * Group commit: a write runs at once, in a transaction this connection opens with the turn's
   * first write and commits at the next `setImmediate`, so the writes of one turn of the event
   * loop share one commit and SQLite writes each changed page once per turn instead of once per
   * write (the store's pages, indexes, feed tail and revision counter are shared by nearly every
   * write). A write's promise settles after that commit, so what it reports is as durable as a
   * commit of its own. One write's refusal (a conflict, a missing object) fails only that write
   * (see {@link runWrite}).
   *
   * Every read of this connection runs inside the open transaction and sees every write asked
   * for before it: a read-then-write (an allocator picking a free address, a quota count, an
   * update on the version just read) behaves as it would if each write committed at once, and no
   * read has to commit anything first. Other connections see the turn's writes when they commit.
   *
   * When the commit itself fails (the disk, not a refusal), every write of the turn fails with
   * its error; their revisions are never reused, and a feed reader that saw them lists again.
   */
  private tx<R>(fn: () => R, atomic = false): Promise<R> {
    if (!this.db.open) return Promise.reject(new Error('the store is closed'));
    let outcome: { ok: boolean; value: unknown };
    try {
      this.begin();
      outcome = this.runWrite(fn, atomic);
      // what the write took (a refused write gave its revisions back)
      this.issued = Math.max(this.issued, this.revision!);
      this.knownRevision = Math.max(this.knownRevision, this.revision!);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.abandon(error);
      return Promise.reject(error);
    }
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ ...outcome, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Open the turn's write transaction unless it is open. */
  private begin(): void {
    if (this.revision !== undefined) return;
    this.stmts.begin.run();
    try {
      this.counterAtBegin = this.stmts.curRev.get()!.value;
      this.refreshCounted();
    } catch (err) {
      this.stmts.rollback.run();
      throw err;
    }
    // after a failed commit the stored counter may be behind what was handed out
    this.txStart = Math.max(this.counterAtBegin, this.issued);
    this.revision = this.txStart;
    setImmediate(() => this.flush());
  }

  /** Commit the open transaction and tell its writes their outcome. */
  private flush(): void {
    if (this.revision === undefined) return;
    try {
      if (this.revision !== this.counterAtBegin) this.stmts.setRev.run(this.revision);
      this.stmts.commit.run();
    } catch (err) {
      this.abandon(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.revision = undefined;
    this.keepUpdated();
    this.checkpointer?.committed();
    const batch = this.waiting;
    this.waiting = [];
    this.scheduleNotify();
    for (const w of batch) {
      if (w.ok) w.resolve(w.value);
      else w.reject(w.value instanceof Error ? w.value : new Error(String(w.value)));
    }
  }

  /** Keep the committed turn's updates (see {@link UPDATED_OBJECTS}), the oldest going first. */
  private keepUpdated(): void {
    for (const [seq, object] of this.updatedInTurn) {
      this.updated.delete(seq);
      if (object) this.updated.set(seq, object);
    }
    this.updatedInTurn = [];
    if (this.updated.size <= UPDATED_OBJECTS) return;
    for (const seq of this.updated.keys()) {
      this.updated.delete(seq);
      if (this.updated.size <= UPDATED_OBJECTS * 0.75) break;
    }
  }

  /** Roll the open transaction back after a database failure: every write in it fails with `error`. */
  private abandon(error: Error): void {
    if (this.db.inTransaction) {
      try {
        this.stmts.rollback.run();
      } catch {
        // SQLite has already rolled back (as it does on some I/O errors)
      }
    }
    if (this.revision !== undefined && this.revision > this.txStart) {
      this.forget(this.txStart, this.revision);
      this.lost.push([this.txStart + 1, this.revision]);
      this.issued = Math.max(this.issued, this.revision);
    }
    this.revision = undefined;
    this.updatedInTurn = [];
    // a key registered in the turn is gone with it
    this.countedRows = -1;
    const batch = this.waiting;
    this.waiting = [];
    for (const w of batch) w.reject(error);
  }

  /** The head as this connection sees it: its open transaction included. */
  private head(): number {
    return this.revision ?? this.stmts.curRev.get()!.value;
  }

  // --- ObjectStore ---

  create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T> {
    return this.tx(() => this.createSync(object as NewObject) as T);
  }

  async get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    const row = this.stmts.get.get(type, namespace, name);
    return row ? parseStoredJson<T>(row.data) : undefined;
  }

  async versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined> {
    const row = this.stmts.version.get(type, namespace, name);
    return row ? String(row.rv) : undefined;
  }

  async getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    const row = this.stmts.getUid.get(type, uid);
    return row ? parseStoredJson<T>(row.data) : undefined;
  }

  async list<T extends AnyObject = ApiObject>(
    type: TypeKey,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const read = this.db.transaction(() => {
      const resourceVersion = String(this.head());
      const desc = options.descending === true;
      let cursor: number | undefined;
      if (options.continue) cursor = decodeContinue(options.continue);
      else if (options.afterUid) {
        const r = this.stmts.seqOfUid.get(options.afterUid);
        if (!r) throw new NotFoundError(`marker ${options.afterUid} not found`, { code: 'MarkerNotFound' });
        cursor = r.seq;
      }
      const where = ['type = ?'];
      const params: (string | number)[] = [type];
      if (options.namespace !== undefined) {
        where.push('namespace = ?');
        params.push(options.namespace);
      }
      // An equality requirement narrows the rows through the label index; the selector is still
      // checked on each row below.
      const equal = options.labelSelector?.find((r) => r.operator === 'In' && r.values.length === 1);
      if (equal) {
        where.push('seq IN (SELECT seq FROM object_labels WHERE type = ? AND key = ? AND value = ?)');
        params.push(type, equal.key, equal.values[0]!);
      }
      if (cursor !== undefined) {
        where.push(desc ? 'seq < ?' : 'seq > ?');
        params.push(cursor);
      }
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined;
      const filter =
        options.labelSelector && options.labelSelector.length > 0 ? options.labelSelector : undefined;
      // Without a selector a page is one read of exactly `limit` rows; with one, read a few pages'
      // worth at a time so a selective filter does not mean one query per match.
      const batch = limit === undefined ? 500 : filter ? Math.min(500, Math.max(limit * 4, 32)) : limit;
      const order = desc ? 'DESC' : 'ASC';
      const after = desc ? 'seq < ?' : 'seq > ?';
      const items: T[] = [];
      let scanned = cursor;
      for (;;) {
        const w = scanned === undefined ? where : [...where, after];
        const p = scanned === undefined ? params : [...params, scanned];
        const rows = this.prepared<ObjectRow>(
          `SELECT seq, data FROM objects WHERE ${w.join(' AND ')} ORDER BY seq ${order} LIMIT ${batch}`,
        ).all(...p);
        for (const row of rows) {
          scanned = row.seq;
          const raw = JSON.parse(row.data) as { metadata?: { labels?: Record<string, string> } };
          if (filter && !matchesSelector(raw.metadata?.labels, filter)) continue;
          const obj = parseStoredObject<T>(raw);
          items.push(obj);
          if (limit !== undefined && items.length >= limit) break;
        }
        if (rows.length < batch || (limit !== undefined && items.length >= limit)) break;
      }
      const result: ListResult<T> = { items, resourceVersion };
      if (limit !== undefined && items.length >= limit && scanned !== undefined) {
        const more = this.prepared<{ seq: number }>(
          `SELECT seq FROM objects WHERE ${[...where, after].join(' AND ')} LIMIT 1`,
        ).get(...params, scanned);
        if (more) result.continue = encodeContinue(scanned);
      }
      return result;
    });
    return read();
  }

  async count(type: TypeKey, namespace?: string): Promise<number> {
    return namespace === undefined
      ? this.stmts.count.get(type)!.n
      : (this.stmts.countNs.get(type, namespace)?.n ?? 0);
  }

  /**
   * Counts the store keeps for the label keys counted by (migration 7): the first count of a key
   * registers it, in a write, and counts what is already there; from then on every connection's
   * writes keep its counts, so a count costs the same however many objects carry it.
   */
  async countByLabel(type: TypeKey, namespace: string, key: string): Promise<Map<string, number>> {
    if (!this.countedKeys.has(`${type}\0${key}`)) {
      await this.tx(() => {
        if (this.stmts.isCounted.get(type, key)) return;
        this.stmts.markCounted.run(type, key);
        this.stmts.countExisting.run(type, key);
        // the turn's later writes count it too
        this.refreshCounted(true);
      });
    }
    return new Map(this.stmts.countByLabel.all(type, key, namespace).map((r) => [r.value, r.n]));
  }

  update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T> {
    return this.tx(() => this.updateSync(object, options) as T);
  }

  updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T> {
    return this.tx(() => this.updateStatusSync(object) as T);
  }

  delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.tx(() => this.deleteSync(type, namespace, name, options) as T | undefined);
  }

  commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]> {
    return this.tx(
      () =>
        ops.map((op) => {
          switch (op.op) {
            case 'create':
              return this.createSync(op.object);
            case 'update':
              return this.updateSync(op.object, op.options);
            case 'updateStatus':
              return this.updateStatusSync(op.object);
            case 'delete':
              return this.deleteSync(op.type, op.namespace, op.name, op.options);
          }
        }),
      ops.length > 1,
    );
  }

  /**
   * The head as this connection's readers see it: every write of the open transaction included
   * (see {@link tx}). The controllers' object cache asks before every read, thousands of times
   * per cluster built, and on a WAL file each query opens a read transaction. So the counter is
   * read once per event-loop turn: later calls in the same turn answer what this connection
   * knows, which includes its own writes since and every revision it has read from the feed.
   * Another process's commit in the same turn shows at the next turn, as if it had come a
   * moment later; nothing this process has seen or written is ever missing from the answer.
   */
  async currentRevision(): Promise<number> {
    return this.currentRevisionNow();
  }

  currentRevisionNow(): number {
    if (!this.revisionFresh) {
      this.knownRevision = Math.max(this.knownRevision, this.stmts.curRev.get()!.value);
      this.revisionFresh = true;
      setImmediate(() => {
        this.revisionFresh = false;
      });
    }
    return this.knownRevision;
  }

  async changes(
    afterRevision: number,
    options: { types?: TypeKey[]; limit?: number } = {},
  ): Promise<WatchEvent[]> {
    if (!this.feed) throw new Error('this store keeps no revision feed');
    const limit = Math.max(1, Math.trunc(options.limit ?? 1000));
    const types = options.types;
    const where = types && types.length > 0 ? `AND type IN (${types.map(() => '?').join(',')})` : '';
    // the entries' text is read only for those not decoded yet
    const stmt = this.prepared<{ revision: number; event: string }>(
      `SELECT revision, event FROM feed WHERE revision > ? ${where} ORDER BY revision LIMIT ${limit}`,
    );
    // One read transaction: another process compacting between the check and the read must not
    // leave a silent gap.
    if (this.lost.some(([lo, hi]) => afterRevision >= lo && afterRevision <= hi)) {
      throw new ConflictError(`revision ${afterRevision} was never committed: list again`, {
        code: 'Expired',
      });
    }
    const own = this.ownChanges(afterRevision, types, limit);
    if (own) {
      const lastOwn = own.at(-1);
      if (lastOwn) this.knownRevision = Math.max(this.knownRevision, lastOwn.revision);
      return own;
    }
    const events = this.db.transaction((): WatchEvent[] => {
      const compacted = this.stmts.compacted.get()!.value;
      if (afterRevision < compacted) {
        throw new ConflictError(`revision ${afterRevision} has been compacted (oldest kept: ${compacted})`, {
          code: 'Expired',
        });
      }
      return stmt.all(afterRevision, ...(types ?? [])).map((r) => ({
        revision: r.revision,
        type: parseEventType(r.event),
        object: this.decoded.get(r.revision) ?? this.decodeEntry(r.revision),
      }));
    })();
    const last = events.at(-1);
    if (last) this.knownRevision = Math.max(this.knownRevision, last.revision);
    return events;
  }

  /**
   * The changes after `afterRevision` from this connection's own writes, when they are every
   * revision from there on (up to `limit` entries, or up to the head): the common case of one
   * process whose readers follow its own writes. Undefined when another connection's entry, or
   * one no longer kept or compacted here, comes first: the feed table answers then. (Another
   * connection's compaction is not seen here: entries kept from before it are still listed,
   * complete and in order, instead of an Expired.)
   */
  private ownChanges(
    afterRevision: number,
    types: TypeKey[] | undefined,
    limit: number,
  ): WatchEvent[] | undefined {
    const wanted = types && types.length > 0 ? new Set(types) : undefined;
    const out: WatchEvent[] = [];
    let r = afterRevision + 1;
    for (; out.length < limit; r++) {
      const w = this.written.get(r);
      if (!w) break;
      const object = this.decoded.get(r);
      if (!object) return undefined;
      if (!wanted || wanted.has(w.type)) out.push({ revision: r, type: w.event, object });
    }
    if (out.length < limit && r <= this.head()) return undefined;
    return out;
  }

  /** Read and decode the feed entry at `revision` (see {@link DECODED_FEED_ENTRIES}). */
  private decodeEntry(revision: number): ApiObject {
    return this.remember(revision, parseStoredJson<ApiObject>(this.stmts.feedEntry.get(revision)!.data));
  }

  /**
   * Drop the kept entries of revisions after `from` up to `to` that were rolled back: another
   * connection may write those revisions next.
   */
  private forget(from: number | undefined, to: number | undefined): void {
    if (from === undefined || to === undefined) return;
    for (let r = from + 1; r <= to; r++) {
      this.decoded.delete(r);
      this.written.delete(r);
    }
  }

  /** Keep `object` frozen as the feed entry at `revision` (see {@link DECODED_FEED_ENTRIES}). */
  private remember(revision: number, object: ApiObject): ApiObject {
    this.decoded.set(revision, deepFreeze(object));
    keepNewest(this.decoded);
    return object;
  }

  onChange(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async compact(beforeRevision: number): Promise<void> {
    this.flush();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM feed WHERE revision < ?').run(beforeRevision);
      this.db
        .prepare(`UPDATE meta SET value = max(value, ?) WHERE key = 'compacted'`)
        .run(beforeRevision - 1);
    })();
    // a reader from before the mark must hear that it is Expired, from the feed table
    for (const r of this.written.keys()) {
      if (r >= beforeRevision) break;
      this.written.delete(r);
    }
  }

  async acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean> {
    // a lease is taken at once, not with the turn's writes: its holder acts on it right away
    this.flush();
    const r = this.db
      .prepare(
        `INSERT INTO leases (name, holder, expires_ms) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
         WHERE leases.holder = excluded.holder OR leases.expires_ms <= ?`,
      )
      .run(name, holder, nowMs + ttlMs, nowMs);
    return r.changes > 0;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.flush();
    this.db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?').run(name, holder);
  }

  async leaseHolder(name: string, nowMs: number): Promise<string | undefined> {
    const row = this.db
      .prepare<[string, number], { holder: string }>(
        'SELECT holder FROM leases WHERE name = ? AND expires_ms > ?',
      )
      .get(name, nowMs);
    return row?.holder;
  }

  async listLeases(prefix: string, nowMs: number): Promise<LeaseInfo[]> {
    const rows = this.db
      .prepare<[number, string, number], { name: string; holder: string; expires_ms: number }>(
        `SELECT name, holder, expires_ms FROM leases WHERE substr(name, 1, ?) = ? AND expires_ms > ? ORDER BY name`,
      )
      .all(prefix.length, prefix, nowMs);
    return rows.map((r) => ({ name: r.name, holder: r.holder, expiresMs: r.expires_ms }));
  }

  async close(): Promise<void> {
    this.flush();
    await this.checkpointer?.close();
    this.events.removeAllListeners();
    if (this.db.open) this.db.close();
  }
}
