import type { ObjectStore } from '../../store/index.ts';
import * as r from './records.ts';
import { Repo } from './repo.ts';

/** One typed repository per stored kind. */
export function createRepos(store: ObjectStore) {
  return {
    flavors: new Repo(store, 'Flavor', r.FlavorSchema),
    keypairs: new Repo(store, 'Keypair', r.KeypairSchema),
    servers: new Repo(store, 'Server', r.ServerSchema),
    images: new Repo(store, 'Image', r.ImageSchema),
    networks: new Repo(store, 'Network', r.NetworkSchema),
    subnets: new Repo(store, 'Subnet', r.SubnetSchema),
    ports: new Repo(store, 'Port', r.PortSchema),
    ipAllocations: new Repo(store, 'IpAllocation', r.IpAllocationSchema),
    routers: new Repo(store, 'Router', r.RouterSchema),
    securityGroups: new Repo(store, 'SecurityGroup', r.SecurityGroupSchema),
    securityGroupRules: new Repo(store, 'SecurityGroupRule', r.SecurityGroupRuleSchema),
    floatingIps: new Repo(store, 'FloatingIp', r.FloatingIpSchema),
    loadBalancers: new Repo(store, 'LoadBalancer', r.LoadBalancerSchema),
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
