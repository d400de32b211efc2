import pg from 'pg';
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../domain/index.ts';
import { typeOf, type ApiObject, type NewObject, type TypeKey } from '../../domain/index.ts';
import {
  decodeContinue,
  encodeContinue,
  prepareCreate,
  prepareDelete,
  prepareUpdate,
  prepareUpdateStatus,
} from '../object-ops.ts';
import { parseEventType, parseStoredJson, toSafeInteger } from '../row.ts';
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
import { isStaleConnection, mapPgError } from './errors.ts';
import { ChangeListener } from './listener.ts';
import { migrate } from './migrate.ts';
import { Params, channelOf, quoteSchema, selectorSql } from './sql.ts';

/** Options of {@link PostgresStore.connect}. */
export interface PostgresStoreOptions {
  /** Connection URL, e.g. `postgres://user:pass@host:5432/db`. */
  url: string;
  /** Schema holding the tables (created when missing). @default 'public' */
  schema?: string;
  /** Clock for creation/deletion timestamps. @default Date.now */
  now?: () => number;
  /** Maximum pooled connections (one more is kept for LISTEN). @default 10 */
  pool?: number;
  /** `application_name` of the connections, as `pg_stat_activity` shows it. @default 'magnetar' */
  applicationName?: string;
}

type Queryable = pg.Pool | pg.PoolClient;

/**
 * The object store on PostgreSQL. Same semantics as the SQLite engine (both apply
 * `object-ops.ts`). Writers are serialized on the revision counter's row lock so that commit
 * order equals revision order and a watcher never sees a revision appear below one it already
 * read (docs/adr/0001-store-revisions.md). Changes are announced with NOTIFY, so every process
 * sharing the database wakes its `onChange` listeners.
 */
export class PostgresStore implements ObjectStore {
  readonly engine = 'postgres' as const;
  private readonly events = new EventEmitter();
  private readonly instance = randomUUID();
  private readonly now: () => number;
  private readonly s: string;
  private readonly channel: string;
  private readonly sql;
  private readonly names = new Map<string, string>();
  private notifyPending = false;
  private closed = false;
  private listener: ChangeListener | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    schema: string,
    options: PostgresStoreOptions,
  ) {
    this.s = quoteSchema(schema);
    this.channel = channelOf(schema);
    this.now = options.now ?? Date.now;
    this.events.setMaxListeners(0);
    const s = this.s;
    this.sql = {
      get: `SELECT data FROM ${s}.objects WHERE type = $1 AND namespace = $2 AND name = $3`,
      getUid: `SELECT data FROM ${s}.objects WHERE uid = $1 AND type = $2`,
      exists: `SELECT 1 FROM ${s}.objects WHERE type = $1 AND namespace = $2 AND name = $3`,
      versionOf: `SELECT rv FROM ${s}.objects WHERE type = $1 AND namespace = $2 AND name = $3`,
      lockRevision: `SELECT value FROM ${s}.meta WHERE key = 'revision' FOR UPDATE`,
      currentRevision: `SELECT value FROM ${s}.meta WHERE key = 'revision'`,
      count: `SELECT count(*)::bigint AS n FROM ${s}.objects WHERE type = $1`,
      countNs: `SELECT count(*)::bigint AS n FROM ${s}.objects WHERE type = $1 AND namespace = $2`,
      countByLabel: `SELECT labels->>$3 AS value, count(*)::bigint AS n FROM ${s}.objects
        WHERE type = $1 AND namespace = $2 AND labels->>$3 IS NOT NULL GROUP BY 1`,
      // $1 type $2 namespace $3 name $4 uid $5 revision $6 labels $7 data $8 channel $9 payload
      insert: `WITH ins AS (
          INSERT INTO ${s}.objects (type, namespace, name, uid, seq, rv, labels, data)
          VALUES ($1, $2, $3, $4, $5, $5, $6::jsonb, $7) ON CONFLICT DO NOTHING RETURNING 1
        ), fe AS (
          INSERT INTO ${s}.feed (revision, type, event, data) SELECT $5, $1, 'ADDED', $7 FROM ins
        ), rv AS (
          UPDATE ${s}.meta SET value = $5 WHERE key = 'revision'
        ), nt AS (SELECT pg_notify($8, $9))
        SELECT (SELECT count(*) FROM ins)::int AS n, (SELECT count(*) FROM nt)::int AS x`,
      // $1 type $2 namespace $3 name $4 revision $5 labels $6 data $7 channel $8 payload
      replace: `WITH up AS (
          UPDATE ${s}.objects SET rv = $4, labels = $5::jsonb, data = $6
          WHERE type = $1 AND namespace = $2 AND name = $3 RETURNING 1
        ), fe AS (
          INSERT INTO ${s}.feed (revision, type, event, data) SELECT $4, $1, 'MODIFIED', $6 FROM up
        ), rv AS (
          UPDATE ${s}.meta SET value = $4 WHERE key = 'revision'
        ), nt AS (SELECT pg_notify($7, $8))
        SELECT (SELECT count(*) FROM up)::int AS n, (SELECT count(*) FROM nt)::int AS x`,
      // $1 type $2 namespace $3 name $4 revision $5 data $6 channel $7 payload
      remove: `WITH del AS (
          DELETE FROM ${s}.objects WHERE type = $1 AND namespace = $2 AND name = $3 RETURNING 1
        ), fe AS (
          INSERT INTO ${s}.feed (revision, type, event, data) SELECT $4, $1, 'DELETED', $5 FROM del
        ), rv AS (
          UPDATE ${s}.meta SET value = $4 WHERE key = 'revision'
        ), nt AS (SELECT pg_notify($6, $7))
        SELECT (SELECT count(*) FROM del)::int AS n, (SELECT count(*) FROM nt)::int AS x`,
      acquireLease: `INSERT INTO ${s}.leases (name, holder, expires_ms) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_ms = EXCLUDED.expires_ms
        WHERE ${s}.leases.holder = EXCLUDED.holder OR ${s}.leases.expires_ms <= $4
        RETURNING 1`,
      releaseLease: `DELETE FROM ${s}.leases WHERE name = $1 AND holder = $2`,
      leaseHolder: `SELECT holder FROM ${s}.leases WHERE name = $1 AND expires_ms > $2`,
      listLeases: `SELECT name, holder, expires_ms FROM ${s}.leases WHERE starts_with(name, $1) AND expires_ms > $2 ORDER BY name`,
    };
  }

  /** Connect, apply migrations (under an advisory lock), and start listening for changes. */
  static async connect(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? 'public';
    const quoted = quoteSchema(schema);
    const applicationName = options.applicationName ?? 'magnetar';
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.pool ?? 10,
      application_name: applicationName,
    });
    // An idle pooled connection that dies emits 'error' on the pool; the pool drops it and the
    // next query opens a new one. Without a handler the process would crash.
    pool.on('error', () => undefined);
    const store = new PostgresStore(pool, schema, options);
    try {
      await migrate(pool, schema, quoted);
      const listener = new ChangeListener({
        url: options.url,
        applicationName: `${applicationName}-listen`,
        channel: store.channel,
        onNotify: (payload) => {
          if (payload !== store.instance) store.scheduleNotify();
        },
      });
      await listener.start();
      store.listener = listener;
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw mapPgError(err);
    }
    return store;
  }

  // --- plumbing ---

  /** Run a statement as a named prepared statement (parsed once per connection). */
  private async q<R extends pg.QueryResultRow>(
    db: Queryable,
    text: string,
    values: unknown[] = [],
  ): Promise<R[]> {
    let name = this.names.get(text);
    if (!name) {
      name = `mg${this.names.size}`;
      this.names.set(text, name);
    }
    // A pooled connection may have died while idle (server restart, failover): a statement run
    // directly on the pool is not part of a transaction, so one retry on a fresh connection is safe.
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await db.query<R>({ name, text, values });
        return res.rows;
      } catch (err) {
        const mapped = mapPgError(err);
        if (db === this.pool && attempt === 0 && isStaleConnection(err)) continue;
        throw mapped;
      }
    }
  }

  private scheduleNotify(): void {
    if (this.notifyPending || this.closed) return;
    this.notifyPending = true;
    queueMicrotask(() => {
      this.notifyPending = false;
      this.events.emit('change');
    });
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /**
   * A write transaction. READ COMMITTED is required (not just the default): after the revision
   * row lock is granted, each following statement must see what the previous writer committed.
   */
  private async write<R>(fn: (w: WriteTx) => Promise<R>): Promise<R> {
    const client = await this.begin();
    let broken: Error | undefined;
    try {
      const rows = await this.q<{ value: string }>(client, this.sql.lockRevision);
      const w = new WriteTx(client, toSafeInteger(rows[0]?.value));
      const result = await fn(w);
      await client.query('COMMIT');
      if (w.wrote) this.scheduleNotify();
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
      }
      throw mapPgError(err);
    } finally {
      client.release(broken);
    }
  }

  /** A pooled connection inside BEGIN; a connection that died while idle is replaced once. */
  private async begin(): Promise<pg.PoolClient> {
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw mapPgError(err);
      }
      try {
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        return client;
      } catch (err) {
        client.release(err instanceof Error ? err : new Error(String(err)));
        if (attempt === 0 && isStaleConnection(err)) continue;
        throw mapPgError(err);
      }
    }
  }

  private async loadIn(db: Queryable, type: TypeKey, namespace: string, name: string): Promise<ApiObject> {
    const rows = await this.q<{ data: string }>(db, this.sql.get, [type, namespace, name]);
    const row = rows[0];
    if (!row) throw new NotFoundError(`${type.split('.')[0]} "${name}" not found`, { code: 'NotFound' });
    return parseStoredJson<ApiObject>(row.data);
  }

  private async createIn(w: WriteTx, input: NewObject<unknown, unknown>): Promise<ApiObject> {
    const type = typeOf(input);
    const rev = w.take();
    const obj = prepareCreate(input, rev, this.nowIso());
    const m = obj.metadata;
    const data = JSON.stringify(obj);
    const rows = await this.q<{ n: number }>(w.client, this.sql.insert, [
      type,
      m.namespace,
      m.name,
      m.uid,
      rev,
      JSON.stringify(m.labels),
      data,
      this.channel,
      this.instance,
    ]);
    if (rows[0]?.n !== 1) {
      const byName = await this.q(w.client, this.sql.exists, [type, m.namespace, m.name]);
      if (byName.length > 0)
        throw new ConflictError(`${obj.kind} "${m.name}" already exists`, { code: 'AlreadyExists' });
      throw new ConflictError(`an object with uid ${m.uid} already exists`, { code: 'AlreadyExists' });
    }
    return obj;
  }

  private async writeOutcome(
    w: WriteTx,
    type: TypeKey,
    rev: number,
    object: ApiObject,
    removed: boolean,
  ): Promise<ApiObject | undefined> {
    const m = object.metadata;
    const data = JSON.stringify(object);
    if (removed) {
      await this.q(w.client, this.sql.remove, [
        type,
        m.namespace,
        m.name,
        rev,
        data,
        this.channel,
        this.instance,
      ]);
      return undefined;
    }
    await this.q(w.client, this.sql.replace, [
      type,
      m.namespace,
      m.name,
      rev,
      JSON.stringify(m.labels),
      data,
      this.channel,
      this.instance,
    ]);
    return object;
  }

  private async updateIn(w: WriteTx, incoming: AnyObject, options?: UpdateOptions): Promise<ApiObject> {
    const type = typeOf(incoming);
    const stored = await this.loadIn(w.client, type, incoming.metadata.namespace, incoming.metadata.name);
    const rev = w.take();
    const out = prepareUpdate(stored, incoming, rev, options);
    await this.writeOutcome(w, type, rev, out.object, out.removed);
    return out.object;
  }

  private async updateStatusIn(w: WriteTx, incoming: AnyObject): Promise<ApiObject> {
    const type = typeOf(incoming);
    const stored = await this.loadIn(w.client, type, incoming.metadata.namespace, incoming.metadata.name);
    const rev = w.take();
    const obj = prepareUpdateStatus(stored, incoming, rev);
    await this.writeOutcome(w, type, rev, obj, false);
    return obj;
  }

  private async deleteIn(
    w: WriteTx,
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<ApiObject | undefined> {
    const stored = await this.loadIn(w.client, type, namespace, name);
    const out = prepareDelete(stored, options, w.peek(), this.nowIso());
    // Nothing to write: the revision is not taken.
    if (out === 'unchanged') return stored;
    const rev = w.take();
    return this.writeOutcome(w, type, rev, out.object, out.removed);
  }

  // --- ObjectStore ---

  create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T> {
    return this.write(async (w) => (await this.createIn(w, object as NewObject)) as T);
  }

  async get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    const rows = await this.q<{ data: string }>(this.pool, this.sql.get, [type, namespace, name]);
    return rows[0] ? parseStoredJson<T>(rows[0].data) : undefined;
  }

  async versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined> {
    const rows = await this.q<{ rv: unknown }>(this.pool, this.sql.versionOf, [type, namespace, name]);
    return rows[0] ? String(toSafeInteger(rows[0].rv)) : undefined;
  }

  async getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    const rows = await this.q<{ data: string }>(this.pool, this.sql.getUid, [uid, type]);
    return rows[0] ? parseStoredJson<T>(rows[0].data) : undefined;
  }

  /**
   * One statement per page: the revision, the marker lookup and the page are read in the same
   * snapshot, so `resourceVersion` is exactly the state the items show.
   */
  async list<T extends AnyObject = ApiObject>(
    type: TypeKey,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const s = this.s;
    const p = new Params();
    const desc = options.descending === true;
    const limit = options.limit !== undefined && options.limit > 0 ? Math.trunc(options.limit) : undefined;
    const where = [`type = ${p.add(type)}`];
    if (options.namespace !== undefined) where.push(`namespace = ${p.add(options.namespace)}`);
    let marker = '';
    if (options.continue) {
      where.push(`seq ${desc ? '<' : '>'} ${p.add(decodeContinue(options.continue))}`);
    } else if (options.afterUid) {
      marker = `LEFT JOIN ${s}.objects mk ON mk.uid = ${p.add(options.afterUid)}`;
      where.push(`seq ${desc ? '<' : '>'} mk.seq`);
    }
    if (options.labelSelector && options.labelSelector.length > 0)
      where.push(...selectorSql(options.labelSelector, p));
    const order = desc ? 'DESC' : 'ASC';
    const text = `SELECT r.value AS rev, ${marker ? 'mk.seq' : 'NULL::bigint'} AS marker, page.seq, page.data
      FROM ${s}.meta r ${marker}
      LEFT JOIN LATERAL (
        SELECT seq, data FROM ${s}.objects WHERE ${where.join(' AND ')}
        ORDER BY seq ${order} ${limit !== undefined ? `LIMIT ${p.add(limit + 1)}` : ''}
      ) page ON true
      WHERE r.key = 'revision'
      ORDER BY page.seq ${order}`;
    const rows = await this.q<{
      rev: string;
      marker: string | null;
      seq: string | null;
      data: string | null;
    }>(this.pool, text, p.values);
    const first = rows[0];
    if (!first) throw new Error('store metadata row missing');
    if (marker && first.marker === null) {
      throw new NotFoundError(`marker ${options.afterUid} not found`, { code: 'MarkerNotFound' });
    }
    const page = rows.filter(
      (r): r is typeof r & { seq: string; data: string } => r.seq !== null && r.data !== null,
    );
    const more = limit !== undefined && page.length > limit;
    const kept = more ? page.slice(0, limit) : page;
    const result: ListResult<T> = {
      items: kept.map((r) => parseStoredJson<T>(r.data)),
      resourceVersion: String(toSafeInteger(first.rev)),
    };
    const last = kept[kept.length - 1];
    if (more && last) result.continue = encodeContinue(toSafeInteger(last.seq));
    return result;
  }

  async count(type: TypeKey, namespace?: string): Promise<number> {
    const rows =
      namespace === undefined
        ? await this.q<{ n: string }>(this.pool, this.sql.count, [type])
        : await this.q<{ n: string }>(this.pool, this.sql.countNs, [type, namespace]);
    return toSafeInteger(rows[0]?.n ?? 0);
  }

  async countByLabel(type: TypeKey, namespace: string, key: string): Promise<Map<string, number>> {
    const rows = await this.q<{ value: string; n: string }>(this.pool, this.sql.countByLabel, [
      type,
      namespace,
      key,
    ]);
    return new Map(rows.map((r) => [r.value, toSafeInteger(r.n)]));
  }

  update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T> {
    return this.write(async (w) => (await this.updateIn(w, object, options)) as T);
  }

  updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T> {
    return this.write(async (w) => (await this.updateStatusIn(w, object)) as T);
  }

  delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.write(async (w) => (await this.deleteIn(w, type, namespace, name, options)) as T | undefined);
  }

  async commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]> {
    if (ops.length === 0) return [];
    return this.write(async (w) => {
      const out: (ApiObject | undefined)[] = [];
      for (const op of ops) {
        switch (op.op) {
          case 'create':
            out.push(await this.createIn(w, op.object));
            break;
          case 'update':
            out.push(await this.updateIn(w, op.object, op.options));
            break;
          case 'updateStatus':
            out.push(await this.updateStatusIn(w, op.object));
            break;
          case 'delete':
            out.push(await this.deleteIn(w, op.type, op.namespace, op.name, op.options));
            break;
        }
      }
      return out;
    });
  }

  async currentRevision(): Promise<number> {
    const rows = await this.q<{ value: string }>(this.pool, this.sql.currentRevision);
    return toSafeInteger(rows[0]?.value);
  }

  /** One statement: the compaction mark and the entries come from the same snapshot. */
  async changes(
    afterRevision: number,
    options: { types?: TypeKey[]; limit?: number } = {},
  ): Promise<WatchEvent[]> {
    const p = new Params();
    const after = p.add(afterRevision);
    const types =
      options.types && options.types.length > 0 ? `AND type = ANY(${p.add(options.types)}::text[])` : '';
    const limit = p.add(Math.max(1, Math.trunc(options.limit ?? 1000)));
    const text = `SELECT c.value AS compacted, f.revision, f.event, f.data
      FROM ${this.s}.meta c
      LEFT JOIN LATERAL (
        SELECT revision, event, data FROM ${this.s}.feed
        WHERE revision > ${after} ${types} ORDER BY revision LIMIT ${limit}
      ) f ON true
      WHERE c.key = 'compacted'
      ORDER BY f.revision`;
    const rows = await this.q<{
      compacted: string;
      revision: string | null;
      event: string | null;
      data: string | null;
    }>(this.pool, text, p.values);
    const compacted = toSafeInteger(rows[0]?.compacted);
    if (afterRevision < compacted) {
      throw new ConflictError(`revision ${afterRevision} has been compacted (oldest kept: ${compacted})`, {
        code: 'Expired',
      });
    }
    const events: WatchEvent[] = [];
    for (const r of rows) {
      if (r.revision === null || r.data === null) continue;
      events.push({
        revision: toSafeInteger(r.revision),
        type: parseEventType(r.event),
        object: parseStoredJson(r.data),
      });
    }
    return events;
  }

  onChange(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async compact(beforeRevision: number): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await this.q(client, `DELETE FROM ${this.s}.feed WHERE revision < $1`, [beforeRevision]);
      await this.q(
        client,
        `UPDATE ${this.s}.meta SET value = GREATEST(value, $1::bigint - 1) WHERE key = 'compacted'`,
        [beforeRevision],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
      });
      throw mapPgError(err);
    } finally {
      client.release(broken);
    }
  }

  async acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean> {
    const rows = await this.q(this.pool, this.sql.acquireLease, [name, holder, nowMs + ttlMs, nowMs]);
    return rows.length > 0;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.q(this.pool, this.sql.releaseLease, [name, holder]);
  }

  async leaseHolder(name: string, nowMs: number): Promise<string | undefined> {
    const rows = await this.q<{ holder: string }>(this.pool, this.sql.leaseHolder, [name, nowMs]);
    return rows[0]?.holder;
  }

  async listLeases(prefix: string, nowMs: number): Promise<LeaseInfo[]> {
    const rows = await this.q<{ name: string; holder: string; expires_ms: string }>(
      this.pool,
      this.sql.listLeases,
      [prefix, nowMs],
    );
    return rows.map((r) => ({ name: r.name, holder: r.holder, expiresMs: toSafeInteger(r.expires_ms) }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events.removeAllListeners();
    await this.listener?.stop();
    await this.pool.end();
  }
}

/** The revision bookkeeping of one write transaction (the counter row is locked by it). */
class WriteTx {
  wrote = false;
  constructor(
    readonly client: pg.PoolClient,
    private revision: number,
  ) {}

  /** The revision the next write would take. */
  peek(): number {
    return this.revision + 1;
  }

  /** Take the next revision for a write. */
  take(): number {
    this.wrote = true;
    this.revision += 1;
    return this.revision;
  }
}
