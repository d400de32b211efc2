import type { ApiObject, NewObject, TypeKey } from '../../domain/index.ts';
import type {
  AnyObject,
  DeleteOptions,
  ListOptions,
  ListResult,
  ObjectStore,
  UpdateOptions,
  WriteOp,
} from '../../store/index.ts';
import type { ObjectCache } from './object-cache.ts';

/**
 * The store as the reconcilers see it: `get` and `getByUid` of a kind the object cache holds
 * are answered from the cache (what controller-runtime's cached client does), everything else
 * goes to the store.
 *
 * Every reconcile reads its own object and its cluster, often its owner and infrastructure too:
 * about four thousand reads per cluster built. From the store, each is a query and a JSON parse
 * of a row the cache has already decoded from the feed. The answer is the same: the cache
 * catches up with the store's current revision before it answers. What it hands out is its own
 * copy, frozen: reconcilers build each next version as a new object, as the store's writes do.
 */
export class CachedReads implements ObjectStore {
  constructor(
    private readonly store: ObjectStore,
    private readonly cache: ObjectCache,
  ) {}

  get engine(): ObjectStore['engine'] {
    return this.store.engine;
  }

  get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    return this.cache.holds(type)
      ? this.cache.get<T>(type, namespace, name)
      : this.store.get<T>(type, namespace, name);
  }

  async versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined> {
    return this.cache.holds(type)
      ? (await this.cache.get(type, namespace, name))?.metadata.resourceVersion
      : this.store.versionOf(type, namespace, name);
  }

  create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T> {
    return this.store.create<T>(object);
  }

  getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    return this.cache.holds(type) ? this.cache.getByUid<T>(type, uid) : this.store.getByUid<T>(type, uid);
  }

  list<T extends AnyObject = ApiObject>(type: TypeKey, options?: ListOptions): Promise<ListResult<T>> {
    return this.store.list<T>(type, options);
  }

  count(type: TypeKey, namespace?: string): Promise<number> {
    return this.store.count(type, namespace);
  }

  countByLabel(type: TypeKey, namespace: string, key: string): Promise<Map<string, number>> {
    return this.store.countByLabel(type, namespace, key);
  }

  update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T> {
    return this.store.update(object, options);
  }

  updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T> {
    return this.store.updateStatus(object);
  }

  delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.store.delete<T>(type, namespace, name, options);
  }

  commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]> {
    return this.store.commit(ops);
  }

  currentRevision(): Promise<number> {
    return this.store.currentRevision();
  }

  changes(
    afterRevision: number,
    options?: { types?: TypeKey[]; limit?: number },
  ): ReturnType<ObjectStore['changes']> {
    return this.store.changes(afterRevision, options);
  }

  onChange(listener: () => void): () => void {
    return this.store.onChange(listener);
  }

  compact(beforeRevision: number): Promise<void> {
    return this.store.compact(beforeRevision);
  }

  acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.store.acquireLease(name, holder, ttlMs, nowMs);
  }

  releaseLease(name: string, holder: string): Promise<void> {
    return this.store.releaseLease(name, holder);
  }

  leaseHolder(name: string, nowMs: number): Promise<string | undefined> {
    return this.store.leaseHolder(name, nowMs);
  }

  listLeases(prefix: string, nowMs: number): ReturnType<ObjectStore['listLeases']> {
    return this.store.listLeases(prefix, nowMs);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
