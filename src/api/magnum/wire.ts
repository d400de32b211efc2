import {
  ANNOTATION_MAGNUM_UPDATED_AT,
  FAILED_STATUSES,
  capiClusterName,
  magnumStatus,
  templateName,
  type ApiObject,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../domain/index.ts';
import { atLeast, type Microversion } from './microversion.ts';

/**
 * Mappers from stored objects (camelCase domain form) to Magnum's snake_case wire form, with
 * the fields Magnum computes on the way out (node counts and addresses from node groups, label
 * diffs, `stack_id`/`cluster_id`, `faults`, links).
 */

export interface Link {
  href: string;
  rel: 'self' | 'bookmark';
}

/** Magnum's self and bookmark links for `<path>/<uuid>`. */
export function links(base: string, path: string, uuid: string): Link[] {
  return [
    { href: `${base}/v1/${path}/${uuid}`, rel: 'self' },
    { href: `${base}/${path}/${uuid}`, rel: 'bookmark' },
  ];
}

/** Magnum's timestamp form: `2016-08-29T06:51:31+00:00`. */
export function magnumTime(iso: string | undefined | null): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return null;
  return `${d.toISOString().slice(0, 19)}+00:00`;
}

function updatedAt(obj: ApiObject<unknown, unknown>): string | null {
  return magnumTime(obj.metadata.annotations[ANNOTATION_MAGNUM_UPDATED_AT]);
}

/**
 * Label differences of a child against its parent (cluster vs template, nodegroup vs cluster):
 * overridden = in both with different values (the **parent's** value, as Magnum shows it),
 * added = only in the child, skipped = only in the parent.
 */
export function labelsDiff(
  parent: Record<string, string>,
  child: Record<string, string>,
): { overridden: Record<string, string>; added: Record<string, string>; skipped: Record<string, string> } {
  const overridden: Record<string, string> = {};
  const added: Record<string, string> = {};
  const skipped: Record<string, string> = {};
  for (const [k, v] of Object.entries(child)) {
    const p = parent[k];
    if (p === undefined) added[k] = v;
    else if (p !== v) overridden[k] = p;
  }
  for (const [k, v] of Object.entries(parent)) if (!(k in child)) skipped[k] = v;
  return { overridden, added, skipped };
}

/** A cluster template in Magnum's form (templates have no short form: lists carry every field). */
export function templateToWire(t: ClusterTemplateObject, base: string): Record<string, unknown> {
  const s = t.spec;
  return {
    insecure_registry: s.insecureRegistry,
    links: links(base, 'clustertemplates', t.metadata.uid),
    http_proxy: s.httpProxy,
    updated_at: updatedAt(t),
    floating_ip_enabled: s.floatingIpEnabled,
    fixed_subnet: s.fixedSubnet,
    master_flavor_id: s.masterFlavorId,
    user_id: s.userId,
    uuid: t.metadata.uid,
    no_proxy: s.noProxy,
    https_proxy: s.httpsProxy,
    tls_disabled: s.tlsDisabled,
    keypair_id: s.keypairId,
    project_id: t.metadata.namespace,
    public: s.public,
    labels: s.labels,
    docker_volume_size: s.dockerVolumeSize,
    server_type: s.serverType,
    external_network_id: s.externalNetworkId,
    cluster_distro: s.clusterDistro,
    image_id: s.imageId,
    volume_driver: s.volumeDriver,
    registry_enabled: s.registryEnabled,
    docker_storage_driver: s.dockerStorageDriver,
    apiserver_port: s.apiserverPort,
    name: templateName(t),
    created_at: magnumTime(t.metadata.creationTimestamp),
    network_driver: s.networkDriver,
    fixed_network: s.fixedNetwork,
    coe: s.coe,
    flavor_id: s.flavorId,
    master_lb_enabled: s.masterLbEnabled,
    dns_nameserver: s.dnsNameserver,
    hidden: s.hidden,
    tags: s.tags,
    driver: s.driver,
  };
}

/** Node counts and addresses of a cluster, from its node groups. */
export interface ClusterShape {
  nodeCount: number;
  masterCount: number;
  nodeAddresses: string[];
  masterAddresses: string[];
}

export function clusterShape(cluster: MagnumClusterObject, groups: readonly NodeGroupObject[]): ClusterShape {
  let nodeCount = 0;
  let masterCount = 0;
  const nodeAddresses: string[] = [];
  const masterAddresses: string[] = [];
  for (const g of groups) {
    if (g.spec.role === 'master') {
      masterCount += g.spec.nodeCount;
      masterAddresses.push(...(g.status.nodeAddresses ?? []));
    } else {
      nodeCount += g.spec.nodeCount;
      nodeAddresses.push(...(g.status.nodeAddresses ?? []));
    }
  }
  return {
    nodeCount,
    masterCount,
    nodeAddresses: nodeAddresses.length > 0 ? nodeAddresses : (cluster.status.nodeAddresses ?? []),
    masterAddresses: masterAddresses.length > 0 ? masterAddresses : (cluster.status.masterAddresses ?? []),
  };
}

/** The health Magnum reports: what a healer PATCHed, else what the driver observed. */
function health(c: MagnumClusterObject): { status: string | null; reason: Record<string, string> | null } {
  if (c.spec.healthStatusOverride) {
    return { status: c.spec.healthStatusOverride, reason: c.spec.healthStatusReasonOverride ?? null };
  }
  return { status: c.status.healthStatus ?? null, reason: c.status.healthStatusReason ?? null };
}

/** A cluster in Magnum's form: the short list form, or the full form of `GET /v1/clusters/{id}`. */
export function clusterToWire(
  c: MagnumClusterObject,
  groups: readonly NodeGroupObject[],
  template: ClusterTemplateObject | undefined,
  version: Microversion,
  base: string,
  expand: boolean,
): Record<string, unknown> {
  const s = c.spec;
  const shape = clusterShape(c, groups);
  const status = magnumStatus(c);
  const h = health(c);
  const idField = atLeast(version, 13) ? 'cluster_id' : 'stack_id';
  const stackId = capiClusterName(c);
  if (!expand) {
    return {
      uuid: c.metadata.uid,
      name: c.metadata.name,
      cluster_template_id: s.clusterTemplateId,
      keypair: s.keypair,
      docker_volume_size: s.dockerVolumeSize,
      labels: s.labels,
      node_count: shape.nodeCount,
      status,
      master_flavor_id: s.masterFlavorId,
      flavor_id: s.flavorId,
      create_timeout: s.createTimeout,
      master_count: shape.masterCount,
      health_status: h.status,
      [idField]: stackId,
      links: links(base, 'clusters', c.metadata.uid),
    };
  }
  const diff = labelsDiff(template?.spec.labels ?? {}, s.labels);
  const out: Record<string, unknown> = {
    status,
    health_status: h.status,
    cluster_template_id: s.clusterTemplateId,
    node_addresses: shape.nodeAddresses,
    uuid: c.metadata.uid,
    [idField]: stackId,
    status_reason: c.status.reason ?? null,
    created_at: magnumTime(c.metadata.creationTimestamp),
    updated_at: updatedAt(c),
    coe_version: c.status.coeVersion ?? null,
    labels: s.labels,
    labels_overridden: diff.overridden,
    labels_skipped: diff.skipped,
    labels_added: diff.added,
    fixed_network: s.fixedNetwork,
    fixed_subnet: s.fixedSubnet,
    floating_ip_enabled: s.floatingIpEnabled,
    keypair: s.keypair,
    api_address: c.status.apiAddress ?? null,
    master_addresses: shape.masterAddresses,
    master_lb_enabled: s.masterLbEnabled,
    create_timeout: s.createTimeout,
    node_count: shape.nodeCount,
    discovery_url: s.discoveryUrl,
    docker_volume_size: s.dockerVolumeSize,
    master_count: shape.masterCount,
    container_version: c.status.containerVersion ?? null,
    name: c.metadata.name,
    master_flavor_id: s.masterFlavorId,
    flavor_id: s.flavorId,
    health_status_reason: h.reason,
    project_id: c.metadata.namespace,
    user_id: s.userId,
    links: links(base, 'clusters', c.metadata.uid),
  };
  if (FAILED_STATUSES.includes(status)) {
    const faults: Record<string, string> = { ...(c.status.faults ?? {}) };
    for (const g of groups) {
      const gs = magnumStatus(g);
      if (gs.endsWith('FAILED') && faults[g.spec.name] === undefined)
        faults[g.spec.name] = g.status.reason ?? gs;
    }
    out.faults = faults;
  }
  return out;
}

/** A node group in Magnum's form: the short list form, or the full form. */
export function nodeGroupToWire(
  g: NodeGroupObject,
  cluster: MagnumClusterObject,
  version: Microversion,
  base: string,
  expand: boolean,
): Record<string, unknown> {
  const s = g.spec;
  const path = `clusters/${s.clusterId}/nodegroups`;
  if (!expand) {
    return {
      uuid: g.metadata.uid,
      name: s.name,
      flavor_id: s.flavorId,
      image_id: s.imageId,
      node_count: s.nodeCount,
      role: s.role,
      is_default: s.isDefault,
      status: magnumStatus(g),
      stack_id: g.status.stackId ?? null,
      links: links(base, path, g.metadata.uid),
    };
  }
  const diff = labelsDiff(cluster.spec.labels, s.labels);
  const out: Record<string, unknown> = {
    id: s.id,
    uuid: g.metadata.uid,
    name: s.name,
    cluster_id: s.clusterId,
    project_id: g.metadata.namespace,
    docker_volume_size: s.dockerVolumeSize,
    labels: s.labels,
    labels_overridden: diff.overridden,
    labels_added: diff.added,
    labels_skipped: diff.skipped,
    links: links(base, path, g.metadata.uid),
    flavor_id: s.flavorId,
    image_id: s.imageId,
    node_addresses: g.status.nodeAddresses ?? [],
    node_count: s.nodeCount,
    role: s.role,
    max_node_count: s.maxNodeCount,
    min_node_count: s.minNodeCount,
    is_default: s.isDefault,
    stack_id: g.status.stackId ?? null,
    status: magnumStatus(g),
    status_reason: g.status.reason ?? null,
    version: g.status.version ?? null,
    merge_labels: false,
    created_at: magnumTime(g.metadata.creationTimestamp),
    updated_at: updatedAt(g),
  };
  if (atLeast(version, 14)) {
    out.node_labels = s.nodeLabels ?? {};
    out.node_taints = s.nodeTaints ?? [];
  }
  return out;
}
