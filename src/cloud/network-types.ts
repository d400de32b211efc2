/** Neutron (network v2.0) resources as the typed client returns them, and what it accepts. */

export interface Network {
  id: string;
  name: string;
  status?: string;
  /** `router:external`: usable for router gateways and floating IPs. */
  external: boolean;
  shared: boolean;
  mtu?: number;
  subnetIds: string[];
  tags: string[];
  description?: string;
  projectId?: string;
  portSecurityEnabled?: boolean;
}

export interface AllocationPool {
  start: string;
  end: string;
}

export interface Subnet {
  id: string;
  name: string;
  networkId: string;
  cidr: string;
  ipVersion: number;
  gatewayIp?: string;
  dnsNameservers: string[];
  allocationPools: AllocationPool[];
  enableDhcp: boolean;
  tags: string[];
  description?: string;
}

export interface FixedIp {
  subnetId?: string;
  ipAddress?: string;
}

export interface Router {
  id: string;
  name: string;
  status?: string;
  externalGateway?: { networkId: string; externalFixedIps: FixedIp[] };
  tags: string[];
  description?: string;
}

export interface Port {
  id: string;
  name: string;
  networkId: string;
  deviceId?: string;
  deviceOwner?: string;
  status?: string;
  macAddress?: string;
  fixedIps: FixedIp[];
  securityGroupIds: string[];
  allowedAddressPairs: { ipAddress: string; macAddress?: string }[];
  adminStateUp: boolean;
  portSecurityEnabled?: boolean;
  tags: string[];
  description?: string;
}

export interface SecurityGroupRule {
  id: string;
  securityGroupId: string;
  /** `ingress` or `egress`. */
  direction: string;
  /** `IPv4` or `IPv6`. */
  ethertype: string;
  protocol?: string;
  portRangeMin?: number;
  portRangeMax?: number;
  remoteIpPrefix?: string;
  remoteGroupId?: string;
  description?: string;
}

export interface SecurityGroup {
  id: string;
  name: string;
  description?: string;
  rules: SecurityGroupRule[];
  tags: string[];
}

export interface FloatingIp {
  id: string;
  floatingIpAddress: string;
  floatingNetworkId: string;
  portId?: string;
  fixedIpAddress?: string;
  routerId?: string;
  status?: string;
  description?: string;
  tags: string[];
}

/** One quota line: `limit` -1 means unlimited; `used` only where the cloud reports usage. */
export interface QuotaLine {
  limit: number;
  used?: number;
}

export interface NetworkQuota {
  network?: QuotaLine;
  subnet?: QuotaLine;
  port?: QuotaLine;
  router?: QuotaLine;
  floatingip?: QuotaLine;
  securityGroup?: QuotaLine;
  securityGroupRule?: QuotaLine;
}

/** Neutron resources that carry tags (`PUT /v2.0/{resource}/{id}/tags`). */
export type TaggableResource =
  'networks' | 'subnets' | 'routers' | 'ports' | 'security-groups' | 'floatingips' | 'subnetpools' | 'trunks';

export interface NetworkFilter {
  name?: string;
  /** All of these tags. */
  tags?: string[];
  /** Any of these tags. */
  tagsAny?: string[];
  external?: boolean;
  projectId?: string;
}

export interface CreateNetworkInput {
  name: string;
  description?: string;
  mtu?: number;
  adminStateUp?: boolean;
  portSecurityEnabled?: boolean;
  /** Set right after creation (a second call). */
  tags?: string[];
}

export interface CreateSubnetInput {
  networkId: string;
  cidr: string;
  name: string;
  /** @default 4 */
  ipVersion?: number;
  gatewayIp?: string | null;
  dnsNameservers?: string[];
  allocationPools?: AllocationPool[];
  /** @default true */
  enableDhcp?: boolean;
  description?: string;
  tags?: string[];
}

export interface CreateRouterInput {
  name: string;
  /** Network for the external gateway. */
  externalNetworkId?: string;
  externalFixedIps?: FixedIp[];
  description?: string;
  tags?: string[];
}

export interface CreatePortInput {
  networkId: string;
  name: string;
  fixedIps?: FixedIp[];
  securityGroupIds?: string[];
  allowedAddressPairs?: { ipAddress: string; macAddress?: string }[];
  adminStateUp?: boolean;
  portSecurityEnabled?: boolean;
  deviceId?: string;
  deviceOwner?: string;
  description?: string;
  tags?: string[];
}

export interface PortFilter {
  name?: string;
  networkId?: string;
  deviceId?: string;
  deviceOwner?: string;
  tags?: string[];
  /** Ports holding this fixed IP address. */
  ipAddress?: string;
}

export interface CreateSecurityGroupRuleInput {
  securityGroupId: string;
  direction: 'ingress' | 'egress';
  /** @default IPv4 */
  ethertype?: 'IPv4' | 'IPv6';
  /** `tcp`, `udp`, `icmp`, a number, or undefined for any. */
  protocol?: string;
  portRangeMin?: number;
  portRangeMax?: number;
  remoteIpPrefix?: string;
  remoteGroupId?: string;
  description?: string;
}

export interface CreateFloatingIpInput {
  floatingNetworkId: string;
  portId?: string;
  fixedIpAddress?: string;
  floatingIpAddress?: string;
  description?: string;
  tags?: string[];
}

export interface FloatingIpFilter {
  floatingNetworkId?: string;
  portId?: string;
  floatingIpAddress?: string;
  description?: string;
  tags?: string[];
}

/** The Neutron calls provisioning needs. */
export interface NetworkClient {
  listNetworks(filter?: NetworkFilter): Promise<Network[]>;
  getNetwork(id: string): Promise<Network>;
  /** A network by id or exact name. */
  findNetwork(nameOrId: string): Promise<Network | 'ambiguous' | undefined>;
  /** Networks flagged `router:external`. */
  listExternalNetworks(): Promise<Network[]>;
  createNetwork(input: CreateNetworkInput): Promise<Network>;
  deleteNetwork(id: string): Promise<void>;

  listSubnets(filter?: {
    name?: string;
    networkId?: string;
    cidr?: string;
    tags?: string[];
  }): Promise<Subnet[]>;
  getSubnet(id: string): Promise<Subnet>;
  findSubnet(nameOrId: string): Promise<Subnet | 'ambiguous' | undefined>;
  createSubnet(input: CreateSubnetInput): Promise<Subnet>;
  deleteSubnet(id: string): Promise<void>;

  listRouters(filter?: { name?: string; tags?: string[] }): Promise<Router[]>;
  getRouter(id: string): Promise<Router>;
  createRouter(input: CreateRouterInput): Promise<Router>;
  /** Set (or with null, clear) the external gateway. */
  setRouterGateway(
    routerId: string,
    gateway: { networkId: string; externalFixedIps?: FixedIp[] } | null,
  ): Promise<Router>;
  addRouterInterface(
    routerId: string,
    target: { subnetId: string } | { portId: string },
  ): Promise<{ portId: string; subnetId: string }>;
  removeRouterInterface(routerId: string, target: { subnetId: string } | { portId: string }): Promise<void>;
  deleteRouter(id: string): Promise<void>;

  listPorts(filter?: PortFilter): Promise<Port[]>;
  getPort(id: string): Promise<Port>;
  createPort(input: CreatePortInput): Promise<Port>;
  updatePort(
    id: string,
    changes: {
      name?: string;
      securityGroupIds?: string[];
      allowedAddressPairs?: { ipAddress: string; macAddress?: string }[];
      description?: string;
    },
  ): Promise<Port>;
  deletePort(id: string): Promise<void>;

  listSecurityGroups(filter?: {
    name?: string;
    tags?: string[];
    projectId?: string;
  }): Promise<SecurityGroup[]>;
  getSecurityGroup(id: string): Promise<SecurityGroup>;
  createSecurityGroup(input: { name: string; description?: string; tags?: string[] }): Promise<SecurityGroup>;
  deleteSecurityGroup(id: string): Promise<void>;
  listSecurityGroupRules(filter?: { securityGroupId?: string }): Promise<SecurityGroupRule[]>;
  createSecurityGroupRule(input: CreateSecurityGroupRuleInput): Promise<SecurityGroupRule>;
  /**
   * Several rules of one security group in one request (Neutron's bulk create): all are created
   * or none; a rule that already exists fails the whole request with a conflict.
   */
  createSecurityGroupRules(inputs: CreateSecurityGroupRuleInput[]): Promise<SecurityGroupRule[]>;
  deleteSecurityGroupRule(id: string): Promise<void>;

  listFloatingIps(filter?: FloatingIpFilter): Promise<FloatingIp[]>;
  getFloatingIp(id: string): Promise<FloatingIp>;
  /** Allocate on an external network, optionally associated right away. */
  createFloatingIp(input: CreateFloatingIpInput): Promise<FloatingIp>;
  associateFloatingIp(id: string, portId: string, fixedIpAddress?: string): Promise<FloatingIp>;
  disassociateFloatingIp(id: string): Promise<FloatingIp>;
  deleteFloatingIp(id: string): Promise<void>;

  /** Replace all tags of a resource. */
  replaceTags(resource: TaggableResource, id: string, tags: string[]): Promise<string[]>;
  /** Quotas (with usage where the cloud offers the details call) of a project. @default the session's project */
  getQuota(projectId?: string): Promise<NetworkQuota>;
}
