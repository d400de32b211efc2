import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputError, type ApiObject, type SnapshotStatus } from '../../domain/index.ts';
import type { ObjectStore, WriteOp } from '../../store/index.ts';
import {
  WORKLOAD_API_VERSION,
  WORKLOAD_CLUSTER_LABEL,
  WORKLOAD_NAMESPACE_LABEL,
  WorkloadTypes,
} from '../emulator/persisted-objects.ts';

/**
 * The emulated control plane's etcd snapshot (embedded cloud only). What users store in an
 * emulated cluster — namespaces, Secrets, ConfigMaps — is persisted in Magnetar's store; a
 * snapshot is that state as etcd would hold it (`/registry/<resource>/<namespace>/<name>` keys),
 * serialised as JSON with the metadata `etcdutl snapshot status` prints. It is never an etcd
 * database file, and says so (`format`, `emulated: true`).
 */

/** Format tag of an emulated snapshot. */
export const EMULATED_SNAPSHOT_FORMAT = 'magnetar-emulated-etcd-snapshot/v1';

type Kind = 'Namespace' | 'Secret' | 'ConfigMap';
const KINDS: readonly Kind[] = ['Namespace', 'Secret', 'ConfigMap'];
const TYPE_KEY: Record<Kind, string> = {
  Namespace: WorkloadTypes.Namespace,
  Secret: WorkloadTypes.Secret,
  ConfigMap: WorkloadTypes.ConfigMap,
};
const RESOURCE: Record<Kind, string> = {
  Namespace: 'namespaces',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
};

const EntrySchema = z.object({
  key: z.string(),
  kind: z.enum(['Namespace', 'Secret', 'ConfigMap']),
  namespace: z.string(),
  name: z.string().min(1),
  object: z.record(z.string(), z.unknown()),
});
const SnapshotSchema = z.object({
  format: z.literal(EMULATED_SNAPSHOT_FORMAT),
  emulated: z.literal(true),
  cluster: z.object({ project: z.string(), capiName: z.string(), clusterUid: z.string() }),
  revision: z.number().int().min(0),
  hash: z.number().int().min(0),
  entries: z.array(EntrySchema),
});
type Entry = z.infer<typeof EntrySchema>;

/** A parsed emulated snapshot. */
export type EmulatedSnapshot = z.infer<typeof SnapshotSchema>;

function contentHash(entries: readonly Entry[]): number {
  return createHash('sha256').update(JSON.stringify(entries)).digest().readUInt32BE(0);
}

/** Which cluster a snapshot is of. */
export interface SnapshotClusterRef {
  /** Project (store namespace). */
  project: string;
  /** CAPI Cluster name. */
  capiName: string;
  /** Magnum cluster uuid. */
  clusterUid: string;
}

async function persisted(store: ObjectStore, project: string, capiName: string, kind: Kind) {
  const r = await store.list(TYPE_KEY[kind], {
    namespace: project,
    labelSelector: [{ key: WORKLOAD_CLUSTER_LABEL, operator: 'In', values: [capiName] }],
  });
  return r.items;
}

function entryOf(kind: Kind, capiName: string, o: ApiObject): Entry {
  const namespace = kind === 'Namespace' ? '' : (o.metadata.labels[WORKLOAD_NAMESPACE_LABEL] ?? '');
  const name =
    kind === 'Namespace'
      ? o.metadata.name.slice(capiName.length + 1)
      : o.metadata.name.slice(capiName.length + 1 + namespace.length + 1);
  const object = (o.spec as { object?: Record<string, unknown> }).object ?? {};
  const key =
    kind === 'Namespace'
      ? `/registry/namespaces/${name}`
      : `/registry/${RESOURCE[kind]}/${namespace}/${name}`;
  return { key, kind, namespace, name, object };
}

/** Take a snapshot of an emulated cluster's state. */
export async function takeEmulatedSnapshot(
  store: ObjectStore,
  ref: SnapshotClusterRef,
): Promise<{ data: Buffer; status: SnapshotStatus }> {
  const revision = await store.currentRevision();
  const entries: Entry[] = [];
  for (const kind of KINDS) {
    for (const o of await persisted(store, ref.project, ref.capiName, kind))
      entries.push(entryOf(kind, ref.capiName, o));
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const snap: EmulatedSnapshot = {
    format: EMULATED_SNAPSHOT_FORMAT,
    emulated: true,
    cluster: { ...ref },
    revision,
    hash: contentHash(entries),
    entries,
  };
  const data = Buffer.from(JSON.stringify(snap), 'utf8');
  return {
    data,
    status: { revision, totalKeys: entries.length, hash: snap.hash, sizeBytes: data.length, emulated: true },
  };
}

/**
 * `snapshot status` of emulated snapshot bytes: parse, recompute the hash, count the keys.
 * InputError when the bytes are not a consistent emulated snapshot.
 */
export function emulatedSnapshotStatus(data: Buffer): { snapshot: EmulatedSnapshot; status: SnapshotStatus } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    throw new InputError('the snapshot is not an emulated etcd snapshot (unreadable)', {
      code: 'BadSnapshot',
    });
  }
  const r = SnapshotSchema.safeParse(parsed);
  if (!r.success)
    throw new InputError('the snapshot is not an emulated etcd snapshot (unexpected content)', {
      code: 'BadSnapshot',
    });
  const snap = r.data;
  if (contentHash(snap.entries) !== snap.hash)
    throw new InputError('the snapshot content does not match its hash', { code: 'BadSnapshot' });
  return {
    snapshot: snap,
    status: {
      revision: snap.revision,
      totalKeys: snap.entries.length,
      hash: snap.hash,
      sizeBytes: data.length,
      emulated: true,
    },
  };
}

function storeName(capiName: string, e: Entry): string {
  return e.kind === 'Namespace' ? `${capiName}.${e.name}` : `${capiName}.${e.namespace}.${e.name}`;
}

/**
 * Replace an emulated cluster's state with a snapshot's content, in one atomic store write:
 * every persisted object of the cluster goes, the snapshot's objects come back (renamed for the
 * target cluster). Either all of it happens or none.
 */
export async function restoreEmulatedSnapshot(
  store: ObjectStore,
  target: Pick<SnapshotClusterRef, 'project' | 'capiName'>,
  snapshot: EmulatedSnapshot,
): Promise<{ removed: number; restored: number }> {
  const ops: WriteOp[] = [];
  let removed = 0;
  for (const kind of KINDS) {
    for (const o of await persisted(store, target.project, target.capiName, kind)) {
      ops.push({ op: 'delete', type: TYPE_KEY[kind], namespace: target.project, name: o.metadata.name });
      removed++;
    }
  }
  for (const e of snapshot.entries) {
    ops.push({
      op: 'create',
      object: {
        apiVersion: WORKLOAD_API_VERSION,
        kind: `Workload${e.kind}`,
        metadata: {
          name: storeName(target.capiName, e),
          namespace: target.project,
          labels: {
            [WORKLOAD_CLUSTER_LABEL]: target.capiName,
            ...(e.kind === 'Namespace' ? {} : { [WORKLOAD_NAMESPACE_LABEL]: e.namespace }),
          },
        },
        spec: { object: e.object },
      },
    });
  }
  await store.commit(ops);
  return { removed, restored: snapshot.entries.length };
}
