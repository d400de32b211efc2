import { createHash } from 'node:crypto';
import type { ObjectStore } from '../../store/index.ts';
import {
  CapiLabels,
  LABEL_MAGNUM_CLUSTER,
  MagnumTypes,
  capiClusterName,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../domain/index.ts';

/**
 * Names of the Cluster API objects a Magnum cluster maps to (all deterministic, so a retry or
 * a restarted controller finds what an earlier run created):
 * `<capi>` Cluster and OpenStackCluster, `<capi>-control-plane` KubeadmControlPlane,
 * `<capi>-<nodegroup>` MachineDeployment / KubeadmConfigTemplate / MachineHealthCheck, and
 * `<…>-<hash>` OpenStackMachineTemplates (immutable: a changed spec gets a new name).
 */
export interface MagnumNames {
  capi: string;
  controlPlane: string;
  group(nodeGroup: string): string;
}

export function magnumNames(cluster: MagnumClusterObject): MagnumNames {
  const capi = capiClusterName(cluster);
  return {
    capi,
    controlPlane: `${capi}-control-plane`,
    group: (ng) => `${capi}-${dnsLabel(ng)}`,
  };
}

/** A node group name as a DNS label fragment. */
export function dnsLabel(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'group'
  );
}

/** Labels every CAPI object of a Magnum cluster carries. */
export function magnumLabels(
  cluster: MagnumClusterObject,
  capi: string,
  nodeGroup?: string,
): Record<string, string> {
  return {
    [CapiLabels.clusterName]: capi,
    [LABEL_MAGNUM_CLUSTER]: cluster.metadata.uid,
    ...(nodeGroup ? { [CapiLabels.nodeGroup]: dnsLabel(nodeGroup) } : {}),
  };
}

/** Role of a node group. */
export function isMaster(ng: NodeGroupObject): boolean {
  return ng.spec.role === 'master';
}

/** Kubernetes version a cluster asks for: its `kube_tag`, else its template's, else the default. */
export function desiredVersion(
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject | undefined,
  fallback: string,
): string {
  const tag = cluster.spec.labels.kube_tag ?? template?.spec.labels.kube_tag ?? fallback;
  return tag.startsWith('v') ? tag : `v${tag}`;
}

/** A label value from the node group, then the cluster, then the template. */
export function labelOf(
  key: string,
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject | undefined,
  ng?: NodeGroupObject,
): string | undefined {
  return ng?.spec.labels[key] ?? cluster.spec.labels[key] ?? template?.spec.labels[key];
}

/**
 * The keypair copy Magnetar's service identity owns for a cluster's servers: one per user and
 * keypair name, shared by all that user's clusters with that keypair (Nova counts keypairs per
 * user, 100 by default: one copy per cluster would stop the whole region at 100 clusters).
 * Undefined when the cluster names no keypair.
 */
export function keypairCopyName(
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject | undefined,
): string | undefined {
  const name = cluster.spec.keypair ?? template?.spec.keypairId;
  if (!name) return undefined;
  const digest = createHash('sha256').update(`${cluster.spec.userId}/${name}`).digest('hex');
  return `magnetar-key-${digest.slice(0, 20)}`;
}

/** A Magnum cluster's template, by uuid (how clusters name it) or, failing that, by name. */
export async function findTemplate(
  store: Pick<ObjectStore, 'get' | 'getByUid'>,
  cluster: MagnumClusterObject,
): Promise<ClusterTemplateObject | undefined> {
  const ref = cluster.spec.clusterTemplateId;
  return (
    (await store.getByUid<ClusterTemplateObject>(MagnumTypes.ClusterTemplate, ref)) ??
    (await store.get<ClusterTemplateObject>(MagnumTypes.ClusterTemplate, cluster.metadata.namespace, ref))
  );
}

/** The per-cluster copy name of earlier versions (still removed with its cluster). */
export function legacyKeypairCopyName(capi: string): string {
  return `magnetar-${capi}`;
}
