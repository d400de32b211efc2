import assert from 'node:assert/strict';
import { BackupTypes, type BackupObject, type MagnumClusterObject } from '../../src/domain/index.ts';
import {
  WORKLOAD_API_VERSION,
  WORKLOAD_CLUSTER_LABEL,
  WORKLOAD_NAMESPACE_LABEL,
  WorkloadTypes,
} from '../../src/workload/index.ts';
import { eventually, magnumCluster, type Harness } from '../engine/harness.ts';

/** The backup's wire form as the API returns it (fields the tests read). */
export interface BackupWire {
  uuid: string;
  name: string;
  cluster_uuid: string;
  status: string;
  status_reason: string | null;
  etcd_revision: number | null;
  total_keys: number | null;
  hash: number | null;
  size: number | null;
  checksum: string | null;
  container: string | null;
  object: string | null;
  emulated: boolean | null;
  trigger: string;
  restore_status: string | null;
  restore_status_reason: string | null;
}

/** The CAPI name of a Magnum cluster. */
export async function capiName(h: Harness, name: string): Promise<string> {
  const mc = (await magnumCluster(h, name)) as MagnumClusterObject;
  return mc.status.stackId!;
}

/**
 * Put a namespace with a Secret and a ConfigMap in an emulated cluster, as the emulated API
 * stores them when `kubectl create` is used.
 */
export async function seedWorkload(h: Harness, capi: string, ns: string, secret: string): Promise<void> {
  await h.store.create({
    apiVersion: WORKLOAD_API_VERSION,
    kind: 'WorkloadNamespace',
    metadata: { name: `${capi}.${ns}`, namespace: h.projectId, labels: { [WORKLOAD_CLUSTER_LABEL]: capi } },
    spec: { object: { labels: {}, annotations: {} } },
  });
  await h.store.create({
    apiVersion: WORKLOAD_API_VERSION,
    kind: 'WorkloadSecret',
    metadata: {
      name: `${capi}.${ns}.db-password`,
      namespace: h.projectId,
      labels: { [WORKLOAD_CLUSTER_LABEL]: capi, [WORKLOAD_NAMESPACE_LABEL]: ns },
    },
    spec: {
      object: {
        labels: {},
        annotations: {},
        type: 'Opaque',
        data: { password: Buffer.from(secret).toString('base64') },
      },
    },
  });
  await h.store.create({
    apiVersion: WORKLOAD_API_VERSION,
    kind: 'WorkloadConfigMap',
    metadata: {
      name: `${capi}.${ns}.settings`,
      namespace: h.projectId,
      labels: { [WORKLOAD_CLUSTER_LABEL]: capi, [WORKLOAD_NAMESPACE_LABEL]: ns },
    },
    spec: { object: { labels: {}, annotations: {}, data: { mode: 'production' } } },
  });
}

/** Delete a namespace and its contents, as the emulated API does on `kubectl delete namespace`. */
export async function deleteNamespace(h: Harness, capi: string, ns: string): Promise<void> {
  for (const [type, name] of [
    [WorkloadTypes.Secret, `${capi}.${ns}.db-password`],
    [WorkloadTypes.ConfigMap, `${capi}.${ns}.settings`],
    [WorkloadTypes.Namespace, `${capi}.${ns}`],
  ] as const) {
    await h.store.delete(type, h.projectId, name);
  }
}

/** Names of the namespaces of an emulated cluster. */
export async function namespaces(h: Harness, capi: string): Promise<string[]> {
  const r = await h.store.list(WorkloadTypes.Namespace, { namespace: h.projectId });
  return r.items
    .filter((o) => o.metadata.labels[WORKLOAD_CLUSTER_LABEL] === capi)
    .map((o) => o.metadata.name.slice(capi.length + 1))
    .sort();
}

/** Wait until a backup (by uuid, via the API) leaves CREATE_IN_PROGRESS. */
export async function waitForBackup(h: Harness, uuid: string): Promise<BackupWire> {
  return eventually(h, `backup ${uuid} to finish`, async () => {
    const res = await h.magnum<BackupWire>('GET', `/v1/backups/${uuid}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.status === 'CREATE_IN_PROGRESS' ? undefined : res.body;
  });
}

/** Wait until the last restore of a backup finishes. */
export async function waitForRestore(h: Harness, uuid: string): Promise<BackupWire> {
  return eventually(h, `the restore from ${uuid} to finish`, async () => {
    const res = await h.magnum<BackupWire>('GET', `/v1/backups/${uuid}`);
    return res.body.restore_status === 'RESTORE_IN_PROGRESS' ? undefined : res.body;
  });
}

/** Stored backups of the demo project. */
export async function storedBackups(h: Harness): Promise<BackupObject[]> {
  return (await h.store.list<BackupObject>(BackupTypes.Backup, { namespace: h.projectId })).items;
}
