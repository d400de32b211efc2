import type { z } from 'zod';
import { ConflictError, NotFoundError, sameJson, type ApiObject } from '../../domain/index.ts';
import type { ObjectStore, WriteOp } from '../../store/index.ts';
import { CLOUD_API_VERSION, cloudType, type CloudKind } from './kinds.ts';

/**
 * One cloud resource as stored: `metadata.namespace` is the owning project (see kinds.ts),
 * `metadata.name` the resource id, `spec` the service's record of the resource (what the real
 * service keeps in its database, lifecycle state included, so that every change is one atomic
 * write), `status` unused.
 */
export interface Row<R> {
  id: string;
  project: string;
  rec: R;
  /** The stored object, for resourceVersion-guarded writes. */
  object: ApiObject;
}

/**
 * The index labels a kind derives from its record (see {@link Repo}): what the routes look rows
 * up by, so a lookup reads the matching rows through the store's label index.
 */
export type IndexOf<R> = {
  // method syntax: a repo of a narrower record still passes where a wider one is expected
  labels(rec: R): Record<string, string>;
}['labels'];

/** How many checked row versions a repo remembers before it starts over. */
const CHECKED_LIMIT = 100_000;

/**
 * Typed access to one kind, rows validated with zod when read back. A stored version that
 * passed the schema unchanged (no default filled in, nothing dropped) is remembered by uid and
 * resourceVersion and not parsed again: the embedded cloud reads the same rows over and over.
 *
 * A kind with an `index` keeps the labels it derives from the record in step on every write:
 * a create adds them, an update drops the old record's and adds the new one's (so a key for a
 * membership that ended goes away), and {@link Repo.reindex} labels rows stored before.
 */
export class Repo<R extends object> {
  readonly type: string;
  /** uid → resourceVersion of the last version that passed the schema as stored. */
  private readonly checked = new Map<string, string>();

  constructor(
    private readonly store: ObjectStore,
    readonly kind: CloudKind,
    private readonly schema: z.ZodType<R>,
    private readonly index?: IndexOf<R>,
  ) {
    this.type = cloudType(kind);
  }

  /** Parse a stored object into a row; throws when the stored record does not match the schema. */
  row(object: ApiObject): Row<R> {
    const m = object.metadata;
    if (this.checked.get(m.uid) === m.resourceVersion)
      return { id: m.name, project: m.namespace, rec: object.spec as R, object };
    const parsed = this.schema.safeParse(object.spec);
    if (!parsed.success) {
      throw new Error(`stored ${this.kind} ${m.name} is invalid: ${parsed.error.message}`);
    }
    if (sameJson(parsed.data, object.spec)) {
      if (this.checked.size >= CHECKED_LIMIT) this.checked.clear();
      this.checked.set(m.uid, m.resourceVersion);
    }
    return { id: m.name, project: m.namespace, rec: parsed.data, object };
  }

  async get(project: string, id: string): Promise<Row<R> | undefined> {
    const o = await this.store.get(this.type, project, id);
    return o ? this.row(o) : undefined;
  }

  /** Find by id in any project (ids are globally unique UUIDs stored as the object's uid). */
  async find(id: string): Promise<Row<R> | undefined> {
    const o = await this.store.getByUid(this.type, id);
    return o ? this.row(o) : undefined;
  }

  /** Every row of a project, or of all projects; `labels` filters on equality. */
  async list(
    options: { project?: string; labels?: Record<string, string>; limit?: number } = {},
  ): Promise<Row<R>[]> {
    const selector = Object.entries(options.labels ?? {}).map(([key, value]) => ({
      key,
      operator: 'In' as const,
      values: [value],
    }));
    const res = await this.store.list(this.type, {
      ...(options.project !== undefined ? { namespace: options.project } : {}),
      ...(selector.length > 0 ? { labelSelector: selector } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
    return res.items.map((o) => this.row(o));
  }

  async count(project?: string): Promise<number> {
    return this.store.count(this.type, project);
  }

  /** The write that creates a row; `uid` defaults to the id (must then be unique store-wide). */
  createOp(
    project: string,
    id: string,
    rec: R,
    options: { labels?: Record<string, string>; uid?: string | null } = {},
  ): WriteOp {
    return {
      op: 'create',
      object: {
        apiVersion: CLOUD_API_VERSION,
        kind: this.kind,
        metadata: {
          name: id,
          namespace: project,
          ...(options.uid === null ? {} : { uid: options.uid ?? id }),
          labels: { ...(options.labels ?? {}), ...(this.index?.(rec) ?? {}) },
        },
        spec: rec,
      },
    };
  }

  /**
   * The write that replaces a row's record (guarded by the row's resourceVersion); `labels`
   * replace the stored ones, index labels follow the new record either way.
   */
  updateOp(row: Row<R>, rec: R, labels?: Record<string, string>): WriteOp {
    let next = labels;
    if (this.index) {
      next = { ...(labels ?? row.object.metadata.labels ?? {}) };
      for (const key of Object.keys(this.index(row.rec))) delete next[key];
      Object.assign(next, this.index(rec));
    }
    return {
      op: 'update',
      object: {
        ...row.object,
        metadata: { ...row.object.metadata, ...(next ? { labels: next } : {}) },
        spec: rec,
      },
    };
  }

  /**
   * Give the index labels to rows stored without them (by a version that did not index this
   * kind, or not by these keys). Returns how many rows were relabelled.
   */
  async reindex(): Promise<number> {
    const index = this.index;
    if (!index) return 0;
    let changed = 0;
    for (const row of await this.list()) {
      const labels = row.object.metadata.labels ?? {};
      if (Object.entries(index(row.rec)).every(([k, v]) => labels[k] === v)) continue;
      try {
        await this.update(row, row.rec, { ...labels, ...index(row.rec) });
        changed++;
      } catch (err) {
        // a write in between relabelled it already
        if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
      }
    }
    return changed;
  }

  deleteOp(row: Row<R>): WriteOp {
    this.checked.delete(row.object.metadata.uid);
    return {
      op: 'delete',
      type: this.type,
      namespace: row.project,
      name: row.id,
      options: { uid: row.object.metadata.uid },
    };
  }

  async create(
    project: string,
    id: string,
    rec: R,
    options: { labels?: Record<string, string>; uid?: string | null } = {},
  ): Promise<Row<R>> {
    const [o] = await this.store.commit([this.createOp(project, id, rec, options)]);
    return this.row(o!);
  }

  async update(row: Row<R>, rec: R, labels?: Record<string, string>): Promise<Row<R>> {
    const [o] = await this.store.commit([this.updateOp(row, rec, labels)]);
    return this.row(o!);
  }

  /** Remove a row; a row already gone counts as removed. */
  async remove(row: Row<R>): Promise<void> {
    try {
      await this.store.commit([this.deleteOp(row)]);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /**
   * Read-modify-write with retries on resourceVersion conflicts. `fn` returns the new record, or
   * undefined to leave the row unchanged. NotFoundError when the row is gone.
   */
  async mutate(
    project: string,
    id: string,
    fn: (row: Row<R>) => R | undefined | Promise<R | undefined>,
    labelsOf?: (rec: R) => Record<string, string>,
  ): Promise<Row<R>> {
    for (let attempt = 0; ; attempt++) {
      const row = await this.get(project, id);
      if (!row) throw new NotFoundError(`${this.kind} ${id} not found`);
      const next = await fn(row);
      if (next === undefined) return row;
      try {
        return await this.update(row, next, labelsOf?.(next));
      } catch (err) {
        if (!(err instanceof ConflictError) || err.code !== 'Conflict' || attempt >= 20) throw err;
      }
    }
  }
}

/** Run `fn` again when it fails on a resourceVersion conflict (a concurrent write won the race). */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConflictError) || err.code !== 'Conflict' || i >= attempts) throw err;
    }
  }
}
