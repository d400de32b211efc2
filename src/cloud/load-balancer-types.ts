/** Octavia (load-balancer v2) resources as the typed client returns them, and what it accepts. */

/**
 * Octavia's provisioning status: every change passes through PENDING_*, and the parent
 * load balancer is immutable (409) until it is ACTIVE again.
 */
export type ProvisioningStatus =
  'ACTIVE' | 'DELETED' | 'ERROR' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE' | (string & {});

export interface LoadBalancer {
  id: string;
  name: string;
  description?: string;
  provisioningStatus: ProvisioningStatus;
  /** ONLINE, OFFLINE, DEGRADED, ERROR, NO_MONITOR, DRAINING. */
  operatingStatus: string;
  vipAddress?: string;
  vipPortId?: string;
  vipSubnetId?: string;
  vipNetworkId?: string;
  provider?: string;
  flavorId?: string;
  availabilityZone?: string;
  listenerIds: string[];
  poolIds: string[];
  tags: string[];
  projectId?: string;
}

export interface Listener {
  id: string;
  name: string;
  protocol: string;
  protocolPort: number;
  loadBalancerIds: string[];
  defaultPoolId?: string;
  allowedCidrs: string[];
  provisioningStatus: ProvisioningStatus;
  operatingStatus: string;
  tags: string[];
}

export interface Pool {
  id: string;
  name: string;
  protocol: string;
  lbAlgorithm: string;
  listenerIds: string[];
  loadBalancerIds: string[];
  memberIds: string[];
  healthMonitorId?: string;
  provisioningStatus: ProvisioningStatus;
  operatingStatus: string;
  tags: string[];
}

export interface Member {
  id: string;
  name: string;
  address: string;
  protocolPort: number;
  subnetId?: string;
  weight?: number;
  monitorPort?: number;
  provisioningStatus: ProvisioningStatus;
  operatingStatus: string;
  tags: string[];
}

export interface HealthMonitor {
  id: string;
  name: string;
  /** TCP, HTTP, HTTPS, PING, UDP-CONNECT, SCTP, TLS-HELLO. */
  type: string;
  delay: number;
  timeout: number;
  maxRetries: number;
  maxRetriesDown?: number;
  poolIds: string[];
  provisioningStatus: ProvisioningStatus;
  operatingStatus: string;
  tags: string[];
}

export interface CreateLoadBalancerInput {
  name: string;
  /** One of subnet, network or port locates the VIP. */
  vipSubnetId?: string;
  vipNetworkId?: string;
  vipPortId?: string;
  vipAddress?: string;
  description?: string;
  provider?: string;
  flavorId?: string;
  availabilityZone?: string;
  tags?: string[];
}

export interface CreateListenerInput {
  loadBalancerId: string;
  name: string;
  /** TCP, HTTP, HTTPS, TERMINATED_HTTPS, UDP, SCTP. */
  protocol: string;
  protocolPort: number;
  defaultPoolId?: string;
  allowedCidrs?: string[];
  tags?: string[];
}

export interface CreatePoolInput {
  name: string;
  protocol: string;
  /** @default ROUND_ROBIN */
  lbAlgorithm?: string;
  /** Attach to a listener (as its default pool) or to the load balancer. */
  listenerId?: string;
  loadBalancerId?: string;
  tags?: string[];
}

export interface CreateMemberInput {
  name?: string;
  address: string;
  protocolPort: number;
  subnetId?: string;
  weight?: number;
  monitorPort?: number;
  tags?: string[];
}

export interface CreateHealthMonitorInput {
  poolId: string;
  name?: string;
  type: string;
  delay: number;
  timeout: number;
  maxRetries: number;
  maxRetriesDown?: number;
  tags?: string[];
}

/** The Octavia calls provisioning needs. */
export interface LoadBalancerClient {
  createLoadBalancer(input: CreateLoadBalancerInput): Promise<LoadBalancer>;
  getLoadBalancer(id: string): Promise<LoadBalancer>;
  listLoadBalancers(filter?: { name?: string; tags?: string[]; vipPortId?: string }): Promise<LoadBalancer[]>;
  /** Delete; with `cascade` Octavia removes listeners, pools, members and monitors too. */
  deleteLoadBalancer(id: string, options?: { cascade?: boolean }): Promise<void>;

  createListener(input: CreateListenerInput): Promise<Listener>;
  getListener(id: string): Promise<Listener>;
  listListeners(filter?: { loadBalancerId?: string; name?: string }): Promise<Listener[]>;
  deleteListener(id: string): Promise<void>;

  createPool(input: CreatePoolInput): Promise<Pool>;
  getPool(id: string): Promise<Pool>;
  listPools(filter?: { loadBalancerId?: string; name?: string }): Promise<Pool[]>;
  deletePool(id: string): Promise<void>;

  createMember(poolId: string, input: CreateMemberInput): Promise<Member>;
  getMember(poolId: string, memberId: string): Promise<Member>;
  listMembers(poolId: string, filter?: { name?: string; address?: string }): Promise<Member[]>;
  deleteMember(poolId: string, memberId: string): Promise<void>;

  createHealthMonitor(input: CreateHealthMonitorInput): Promise<HealthMonitor>;
  getHealthMonitor(id: string): Promise<HealthMonitor>;
  listHealthMonitors(filter?: { poolId?: string; name?: string }): Promise<HealthMonitor[]>;
  deleteHealthMonitor(id: string): Promise<void>;
}
