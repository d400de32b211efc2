import type { ApiObject, NewObject, TypeKey } from '../domain/index.ts';
import type {
  AnyObject,
  DeleteOptions,
  LeaseInfo,
  ListOptions,
  ListResult,
  ObjectStore,
  UpdateOptions,
  WatchEvent,
  WriteOp,
} from './types.ts';

/**
 * A store that hands every call to another: the base of the stores that answer a few calls
 * their own way (the controllers' cached reads, a thread's forwarded writes) and pass the rest on.
 */
export class DelegatingStore implements ObjectStore {
  constructor(protected readonly inner: ObjectStore) {}

  get engine(): ObjectStore['engine'] {
    return this.inner.engine;
  }

  create<T extends AnyObject = ApiObject>(object: NewObject<T['spec'], T['status']>): Promise<T> {
    return this.inner.create<T>(object);
  }

  get<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
  ): Promise<T | undefined> {
    return this.inner.get<T>(type, namespace, name);
  }

  getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    return this.inner.getByUid<T>(type, uid);
  }

  versionOf(type: TypeKey, namespace: string, name: string): Promise<string | undefined> {
    return this.inner.versionOf(type, namespace, name);
  }

  list<T extends AnyObject = ApiObject>(type: TypeKey, options?: ListOptions): Promise<ListResult<T>> {
    return this.inner.list<T>(type, options);
  }

  count(type: TypeKey, namespace?: string): Promise<number> {
    return this.inner.count(type, namespace);
  }

  countByLabel(type: TypeKey, namespace: string, key: string): Promise<Map<string, number>> {
    return this.inner.countByLabel(type, namespace, key);
  }

  update<T extends AnyObject = ApiObject>(object: T, options?: UpdateOptions): Promise<T> {
    return this.inner.update(object, options);
  }

  updateStatus<T extends AnyObject = ApiObject>(object: T): Promise<T> {
    return this.inner.updateStatus(object);
  }

  delete<T extends AnyObject = ApiObject>(
    type: TypeKey,
    namespace: string,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.inner.delete<T>(type, namespace, name, options);
  }

  commit(ops: WriteOp[]): Promise<(ApiObject | undefined)[]> {
    return this.inner.commit(ops);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  changes(afterRevision: number, options?: { types?: TypeKey[]; limit?: number }): Promise<WatchEvent[]> {
    return this.inner.changes(afterRevision, options);
  }

  onChange(listener: () => void): () => void {
    return this.inner.onChange(listener);
  }

  compact(beforeRevision: number): Promise<void> {
    return this.inner.compact(beforeRevision);
  }

  acquireLease(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean> {
    return this.inner.acquireLease(name, holder, ttlMs, nowMs);
  }

  releaseLease(name: string, holder: string): Promise<void> {
    return this.inner.releaseLease(name, holder);
  }

  leaseHolder(name: string, nowMs: number): Promise<string | undefined> {
    return this.inner.leaseHolder(name, nowMs);
  }

  listLeases(prefix: string, nowMs: number): Promise<LeaseInfo[]> {
    return this.inner.listLeases(prefix, nowMs);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
