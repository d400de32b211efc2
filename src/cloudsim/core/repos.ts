import type { ObjectStore } from '../../store/index.ts';
import * as r from './records.ts';
import { labelValue } from './labels.ts';
import { Repo } from './repo.ts';

/** Labels of a security group: its name (the list by name reads through it). */
export function securityGroupLabels(rec: Pick<r.SecurityGroup, 'name'>): Record<string, string> {
  return { name: labelValue(rec.name) };
}

/** Labels that make ports findable by network and device. */
export function portLabels(
  rec: Pick<r.Port, 'network_id' | 'device_id' | 'device_owner'>,
): Record<string, string> {
  return { network_id: rec.network_id, device_id: rec.device_id, owner: ownerKind(rec.device_owner) };
}

function ownerKind(owner: string): string {
  if (owner.startsWith('compute:')) return 'compute';
  if (owner === 'network:router_interface' || owner === 'network:router_interface_distributed')
    return 'router_interface';
  if (owner === '') return 'none';
  return labelValue(owner);
}

/** The label that holds a server's `vcpus:ram`, so quota usage is counted, not read server by server. */
export const USAGE_LABEL = 'usage';

/** A server's labels: its name (exact-name lists) and its flavor's size (quota usage). */
export function serverLabels(rec: Pick<r.Server, 'name' | 'flavor'>): Record<string, string> {
  return { name: labelValue(rec.name), [USAGE_LABEL]: `${rec.flavor.vcpus}:${rec.flavor.ram}` };
}

/** The label key that marks a port as a member of a security group (the group delete reads it). */
export function portInGroupKey(securityGroupId: string): string {
  return `sg.${labelValue(securityGroupId)}`;
}

/** The label key that marks a router as having an interface on a subnet. */
export function routerOnSubnetKey(subnetId: string): string {
  return `subnet.${labelValue(subnetId)}`;
}

/**
 * What each kind is looked up by, besides its project and id: the routes' lookups by name,
 * description or owner, and the quota counts, read the matching rows through these labels, so
 * their cost does not grow with the number of rows of the kind. The repos write them on every
 * create and update; no caller passes them by hand.
 */
const index = {
  network: (n: r.Network) => ({ external: String(n.external), name: labelValue(n.name) }),
  port: (x: r.Port) => ({
    ...portLabels(x),
    ...Object.fromEntries(x.security_groups.map((g) => [portInGroupKey(g), 'true'])),
  }),
  securityGroup: (x: r.SecurityGroup) => securityGroupLabels(x),
  server: (x: r.Server) => serverLabels(x),
  router: (x: r.Router) => ({
    name: labelValue(x.name),
    ...Object.fromEntries(x.interfaces.map((i) => [routerOnSubnetKey(i.subnet_id), 'true'])),
  }),
  rule: (x: r.SecurityGroupRule) => ({
    security_group_id: x.security_group_id,
    remote_group_id: x.remote_group_id ?? '',
  }),
  floatingIp: (f: r.FloatingIp) => ({
    description: labelValue(f.description),
    port_id: f.port_id ?? '',
    router_id: f.router_id ?? '',
  }),
  loadBalancer: (lb: r.LoadBalancer) => ({ name: labelValue(lb.name) }),
};

/** One typed repository per stored kind. */
export function createRepos(store: ObjectStore) {
  return {
    flavors: new Repo(store, 'Flavor', r.FlavorSchema),
    keypairs: new Repo(store, 'Keypair', r.KeypairSchema),
    servers: new Repo(store, 'Server', r.ServerSchema, index.server),
    images: new Repo(store, 'Image', r.ImageSchema),
    networks: new Repo(store, 'Network', r.NetworkSchema, index.network),
    subnets: new Repo(store, 'Subnet', r.SubnetSchema),
    ports: new Repo(store, 'Port', r.PortSchema, index.port),
    ipAllocations: new Repo(store, 'IpAllocation', r.IpAllocationSchema),
    routers: new Repo(store, 'Router', r.RouterSchema, index.router),
    securityGroups: new Repo(store, 'SecurityGroup', r.SecurityGroupSchema, index.securityGroup),
    securityGroupRules: new Repo(store, 'SecurityGroupRule', r.SecurityGroupRuleSchema, index.rule),
    floatingIps: new Repo(store, 'FloatingIp', r.FloatingIpSchema, index.floatingIp),
    loadBalancers: new Repo(store, 'LoadBalancer', r.LoadBalancerSchema, index.loadBalancer),
    listeners: new Repo(store, 'Listener', r.ListenerSchema),
    pools: new Repo(store, 'Pool', r.PoolSchema),
    members: new Repo(store, 'Member', r.MemberSchema),
    healthMonitors: new Repo(store, 'HealthMonitor', r.HealthMonitorSchema),
    volumes: new Repo(store, 'Volume', r.VolumeSchema),
    quotaSets: new Repo(store, 'QuotaSet', r.QuotaSetSchema),
    containers: new Repo(store, 'Container', r.ContainerSchema),
    objects: new Repo(store, 'StoredObject', r.StoredObjectSchema),
    blobChunks: new Repo(store, 'BlobChunk', r.BlobChunkSchema),
  };
}

export type Repos = ReturnType<typeof createRepos>;

/** Label the rows stored before their kind's index labels existed; how many were relabelled. */
export async function reindexRepos(repos: Repos): Promise<number> {
  let n = 0;
  for (const repo of Object.values(repos)) n += await repo.reindex();
  return n;
}
