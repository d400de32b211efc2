import type { ApiObject } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { CLOUD_KINDS, cloudType, INTERNAL_KINDS, type CloudKind } from './kinds.ts';

/** One resource in the inventory. */
export interface InventoryItem {
  id: string;
  name: string;
  /** The resource's state where it has one (`ACTIVE`, `available`, `PENDING_CREATE`, …). */
  status?: string;
}

/**
 * Every resource of the embedded cloud, per project (keypairs per user, flavors under ''),
 * grouped by kind. Tests use it to prove that nothing leaked.
 */
export interface Inventory {
  projects: Record<string, Partial<Record<CloudKind, InventoryItem[]>>>;
  /** Number of resources listed. */
  total: number;
}

function item(kind: CloudKind, o: ApiObject): InventoryItem {
  const s = o.spec;
  const name =
    typeof s.name === 'string'
      ? s.name
      : kind === 'StoredObject'
        ? `${String(s.container)}/${String(s.name)}`
        : '';
  const status =
    typeof s.provisioning_status === 'string'
      ? s.provisioning_status
      : typeof s.status === 'string'
        ? s.status
        : undefined;
  const id = typeof s.id === 'string' ? s.id : o.metadata.name;
  return { id, name, ...(status !== undefined ? { status } : {}) };
}

/** Build the inventory, of one project (namespace) or all. */
export async function buildInventory(store: ObjectStore, project?: string): Promise<Inventory> {
  const inv: Inventory = { projects: {}, total: 0 };
  for (const kind of CLOUD_KINDS) {
    if (INTERNAL_KINDS.includes(kind)) continue;
    const res = await store.list(cloudType(kind), project !== undefined ? { namespace: project } : {});
    for (const o of res.items) {
      const ns = o.metadata.namespace;
      const bucket = (inv.projects[ns] ??= {});
      (bucket[kind] ??= []).push(item(kind, o));
      inv.total++;
    }
  }
  return inv;
}
