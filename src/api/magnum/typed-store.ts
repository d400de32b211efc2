import type { ApiObject, NewObject, TypeKey } from '../../domain/index.ts';
import type { DeleteOptions, ListOptions, ObjectStore } from '../../store/index.ts';

/**
 * The object store as the façade uses it: results typed with the Magnum kinds, and batches of
 * writes whose objects are domain-typed. The conversions live here, once.
 */

/** Any stored object, whatever its spec and status types. */
export type AnyObject = ApiObject<object, object>;

export class TypedStore {
  constructor(readonly raw: ObjectStore) {}

  async get<T extends AnyObject>(type: TypeKey, namespace: string, name: string): Promise<T | undefined> {
    return (await this.raw.get(type, namespace, name)) as unknown as T | undefined;
  }

  async getByUid<T extends AnyObject>(type: TypeKey, uid: string): Promise<T | undefined> {
    return (await this.raw.getByUid(type, uid)) as unknown as T | undefined;
  }

  async list<T extends AnyObject>(
    type: TypeKey,
    options?: ListOptions,
  ): Promise<{ items: T[]; continue?: string }> {
    const r = await this.raw.list(type, options);
    return r as unknown as { items: T[]; continue?: string };
  }

  count(type: TypeKey, namespace?: string): Promise<number> {
    return this.raw.count(type, namespace);
  }

  async create<T extends AnyObject>(object: NewObject<object, object>): Promise<T> {
    return (await this.raw.create(object as unknown as NewObject)) as unknown as T;
  }

  async update<T extends AnyObject>(object: T): Promise<T> {
    return (await this.raw.update(object as unknown as ApiObject)) as unknown as T;
  }

  async updateStatus<T extends AnyObject>(object: T): Promise<T> {
    return (await this.raw.updateStatus(object as unknown as ApiObject)) as unknown as T;
  }

  delete(type: TypeKey, namespace: string, name: string, options?: DeleteOptions): Promise<unknown> {
    return this.raw.delete(type, namespace, name, options);
  }

  /** Atomic batch; results in order (undefined for removed objects). */
  async commit(ops: TypedOp[]): Promise<(AnyObject | undefined)[]> {
    return this.raw.commit(ops);
  }
}

/** A write of a batch, with domain-typed objects. */
export type TypedOp =
  | { op: 'create'; object: NewObject<object, object> }
  | { op: 'update'; object: AnyObject }
  | { op: 'updateStatus'; object: AnyObject }
  | { op: 'delete'; type: TypeKey; namespace: string; name: string; options?: DeleteOptions };
