import {
  CapiLabels,
  ConflictError,
  deepFreeze,
  LABEL_MAGNUM_CLUSTER,
  type ApiObject,
  type TypeKey,
} from '../../domain/index.ts';
import type { AnyObject, ObjectStore } from '../../store/index.ts';

/**
 * A read cache of the objects the controllers read on every pass (the Cluster API kinds they list
 * by cluster and by owner, the Magnum clusters, node groups and templates), fed by
 * the store's revision feed (what controller-runtime calls an informer cache). Label-selector
 * lists in the store scan a whole namespace; with a thousand clusters in one project that makes
 * every reconcile O(all machines). The cache answers "the machines of cluster X" from an index.
 *
 * Reads are consistent with the store: every read first catches up with the feed up to the
 * store's current revision, so a reconciler sees its own writes and never creates twice what
 * it just created.
 */
export class ObjectCache {
  private rev = 0;
  private started = false;
  private pulling: Promise<void> | undefined;
  /** type → "ns/cluster" → name → object */
  private readonly byCluster = new Map<TypeKey, Map<string, Map<string, ApiObject>>>();
  /** type → owner uid → "ns/name" → object */
  private readonly byOwner = new Map<TypeKey, Map<string, Map<string, ApiObject>>>();
  /** type → "ns/name" → object */
  private readonly all = new Map<TypeKey, Map<string, ApiObject>>();
  /** type → uid → object */
  private readonly byUid = new Map<TypeKey, Map<string, ApiObject>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly types: readonly TypeKey[],
  ) {
    for (const t of types) {
      this.byCluster.set(t, new Map());
      this.byOwner.set(t, new Map());
      this.all.set(t, new Map());
      this.byUid.set(t, new Map());
    }
  }

  /** Catch up with the store up to its current revision (lists everything on first use). */
  async sync(): Promise<void> {
    const target = await this.store.currentRevision();
    while (!this.started || this.rev < target) {
      this.pulling ??= this.pull().finally(() => {
        this.pulling = undefined;
      });
      await this.pulling;
    }
  }

  /**
   * Whether the cache is at the store's head already, where the store can tell without waiting:
   * then a read answers at once, without the round of promises a {@link sync} takes (the
   * controllers read the cache a few thousand times per cluster they build).
   */
  private current(): boolean {
    if (!this.started) return false;
    const head = this.store.currentRevisionNow?.();
    return head !== undefined && this.rev >= head;
  }

  /** Whether the cache holds objects of `type`. */
  holds(type: TypeKey): boolean {
    return this.all.has(type);
  }

  /**
   * One object of a cached type, as a fresh `get` would return it: the cache catches up with the
   * store's head as this process sees it (writes not yet committed included). The object is the
   * cache's own, frozen: a caller builds the next version as a new object (as the store's writes
   * do) and never changes the one it read.
   */
  async get<T extends AnyObject>(type: TypeKey, namespace: string, name: string): Promise<T | undefined> {
    if (!this.current()) await this.sync();
    return this.all.get(type)?.get(`${namespace}/${name}`) as T | undefined;
  }

  /** One object of a cached type by its uid, as the store's `getByUid` would return it. */
  async getByUid<T extends AnyObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    if (!this.current()) await this.sync();
    return this.byUid.get(type)?.get(uid) as T | undefined;
  }

  /** Objects of `type` in `namespace` belonging to CAPI cluster `clusterName`. */
  async listByCluster<T extends AnyObject>(
    type: TypeKey,
    namespace: string,
    clusterName: string,
  ): Promise<T[]> {
    if (!this.current()) await this.sync();
    const m = this.byCluster.get(type)?.get(`${namespace}/${clusterName}`);
    return m ? ([...m.values()] as T[]) : [];
  }

  /** Objects of `type` with an owner reference to `ownerUid`. */
  async listByOwner<T extends AnyObject>(type: TypeKey, ownerUid: string): Promise<T[]> {
    if (!this.current()) await this.sync();
    const m = this.byOwner.get(type)?.get(ownerUid);
    return m ? ([...m.values()] as T[]) : [];
  }

  /** Every cached object of `type` (optionally in one namespace). */
  async listAll<T extends AnyObject>(type: TypeKey, namespace?: string): Promise<T[]> {
    if (!this.current()) await this.sync();
    const items = [...(this.all.get(type)?.values() ?? [])] as T[];
    return namespace === undefined ? items : items.filter((o) => o.metadata.namespace === namespace);
  }

  /** Number of cached objects per type (for benchmarks). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.all.entries()].map(([t, m]) => [t, m.size]));
  }

  private async pull(): Promise<void> {
    if (!this.started) {
      await this.relist();
      return;
    }
    const head = await this.store.currentRevision();
    for (;;) {
      let events;
      try {
        events = await this.store.changes(this.rev, { types: [...this.types], limit: 1000 });
      } catch (err) {
        if (err instanceof ConflictError && err.code === 'Expired') {
          await this.relist();
          return;
        }
        throw err;
      }
      for (const e of events) {
        const obj = e.object;
        if (e.type === 'DELETED') this.remove(obj);
        else this.put(obj);
        this.rev = Math.max(this.rev, e.revision);
      }
      if (events.length < 1000) break;
    }
    this.rev = Math.max(this.rev, head);
  }

  private async relist(): Promise<void> {
    const head = await this.store.currentRevision();
    for (const t of this.types) {
      this.byCluster.get(t)!.clear();
      this.byOwner.get(t)!.clear();
      this.all.get(t)!.clear();
      this.byUid.get(t)!.clear();
      let cont: string | undefined;
      do {
        const page = await this.store.list(t, { limit: 2000, ...(cont ? { continue: cont } : {}) });
        for (const o of page.items) this.put(o);
        cont = page.continue;
      } while (cont);
    }
    // Writes that landed while listing are replayed from the feed on the next pull.
    this.rev = head;
    this.started = true;
  }

  private put(obj: ApiObject): void {
    const type = keyOf(obj);
    const all = this.all.get(type);
    if (!all) return;
    deepFreeze(obj);
    const id = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const prev = all.get(id);
    if (prev && Number(prev.metadata.resourceVersion) > Number(obj.metadata.resourceVersion)) return;
    if (prev && sameIndexKeys(prev, obj)) {
      // the usual update: same cluster, same owners; each index entry takes the new version
      all.set(id, obj);
      this.byUid.get(type)!.set(obj.metadata.uid, obj);
      this.byCluster
        .get(type)!
        .get(`${obj.metadata.namespace}/${clusterOf(obj)}`)
        ?.set(obj.metadata.name, obj);
      const omap = this.byOwner.get(type)!;
      for (const ref of obj.metadata.ownerReferences) omap.get(ref.uid)?.set(id, obj);
      return;
    }
    if (prev) this.unindex(type, prev);
    all.set(id, obj);
    this.byUid.get(type)!.set(obj.metadata.uid, obj);
    const cluster = clusterOf(obj);
    const cmap = this.byCluster.get(type)!;
    const ckey = `${obj.metadata.namespace}/${cluster}`;
    let c = cmap.get(ckey);
    if (!c) cmap.set(ckey, (c = new Map<string, ApiObject>()));
    c.set(obj.metadata.name, obj);
    const omap = this.byOwner.get(type)!;
    for (const ref of obj.metadata.ownerReferences) {
      let o = omap.get(ref.uid);
      if (!o) omap.set(ref.uid, (o = new Map<string, ApiObject>()));
      o.set(id, obj);
    }
  }

  private remove(obj: ApiObject): void {
    const type = keyOf(obj);
    const all = this.all.get(type);
    if (!all) return;
    const id = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const prev = all.get(id);
    if (!prev) return;
    this.unindex(type, prev);
    all.delete(id);
  }

  private unindex(type: TypeKey, prev: ApiObject): void {
    const id = `${prev.metadata.namespace}/${prev.metadata.name}`;
    const uids = this.byUid.get(type)!;
    if (uids.get(prev.metadata.uid) === prev) uids.delete(prev.metadata.uid);
    const ckey = `${prev.metadata.namespace}/${clusterOf(prev)}`;
    const cmap = this.byCluster.get(type)!;
    const c = cmap.get(ckey);
    if (c) {
      c.delete(prev.metadata.name);
      if (c.size === 0) cmap.delete(ckey);
    }
    const omap = this.byOwner.get(type)!;
    for (const ref of prev.metadata.ownerReferences) {
      const o = omap.get(ref.uid);
      if (o) {
        o.delete(id);
        if (o.size === 0) omap.delete(ref.uid);
      }
    }
  }
}

function keyOf(obj: ApiObject): TypeKey {
  const slash = obj.apiVersion.indexOf('/');
  return slash < 0 ? obj.kind : `${obj.kind}.${obj.apiVersion.slice(0, slash)}`;
}

/** Whether two versions of one object sit under the same index keys (uid, cluster, owners). */
function sameIndexKeys(a: ApiObject, b: ApiObject): boolean {
  if (a.metadata.uid !== b.metadata.uid || clusterOf(a) !== clusterOf(b)) return false;
  const x = a.metadata.ownerReferences;
  const y = b.metadata.ownerReferences;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i]!.uid !== y[i]!.uid) return false;
  return true;
}

/** The cluster an object belongs to: CAPI cluster name, else the Magnum cluster uuid (node groups). */
function clusterOf(obj: ApiObject): string {
  const label = obj.metadata.labels[CapiLabels.clusterName] ?? obj.metadata.labels[LABEL_MAGNUM_CLUSTER];
  if (label) return label;
  const spec = obj.spec as { clusterName?: unknown };
  return typeof spec.clusterName === 'string' ? spec.clusterName : '';
}
