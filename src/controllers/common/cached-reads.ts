import type { ApiObject, TypeKey } from '../../domain/index.ts';
import { DelegatingStore, type AnyObject, type ObjectStore } from '../../store/index.ts';
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
export class CachedReads extends DelegatingStore {
  constructor(
    store: ObjectStore,
    private readonly cache: ObjectCache,
  ) {
    super(store);
  }

  override get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    return this.cache.holds(type)
      ? this.cache.get<T>(type, namespace, name)
      : this.inner.get<T>(type, namespace, name);
  }

  override async versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined> {
    return this.cache.holds(type)
      ? (await this.cache.get(type, namespace, name))?.metadata.resourceVersion
      : this.inner.versionOf(type, namespace, name);
  }

  override getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    return this.cache.holds(type) ? this.cache.getByUid<T>(type, uid) : this.inner.getByUid<T>(type, uid);
  }
}
