import { typeKey, type ApiObject, type TypeKey } from '../../domain/index.ts';
import type { ObjectRef } from './types.ts';

/**
 * A watch mapper from an object to its owners of one kind (`Kind.group`, e.g.
 * 'MachineSet.cluster.x-k8s.io'): owner references are namespace-local.
 */
export function ownerRefsMapper(ownerType: TypeKey): (obj: ApiObject) => ObjectRef[] {
  return (obj) =>
    (obj.metadata.ownerReferences ?? [])
      .filter((ref) => typeKey(ref.apiVersion, ref.kind) === ownerType)
      .map((ref) => ({ namespace: obj.metadata.namespace, name: ref.name }));
}
