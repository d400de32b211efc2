import { z } from 'zod';
import { CloudError, isNotFound } from './cloud-error.ts';
import type { Session } from './session.ts';
import { compact, one, seg, ServiceApi, single, tagsQuery, versionRoot, wire } from './service-api.ts';

/**
 * Neutron (network v2.0): networks, subnets, routers, ports, security groups, floating IPs,
 * tags and quotas.
 */

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

const FixedIpWire = z
  .looseObject({ subnet_id: wire.optStr, ip_address: wire.optStr })
  .transform((f): FixedIp => compact({ subnetId: f.subnet_id, ipAddress: f.ip_address }));

const NetworkWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    status: wire.optStr,
    'router:external': z.boolean().nullish(),
    shared: z.boolean().nullish(),
    mtu: z.number().nullish(),
    subnets: z.array(z.string()).nullish(),
    tags: wire.tags,
    description: wire.optStr,
    project_id: wire.optStr,
    tenant_id: wire.optStr,
    port_security_enabled: z.boolean().nullish(),
  })
  .transform((n): Network => ({
    id: n.id,
    name: n.name ?? '',
    external: n['router:external'] ?? false,
    shared: n.shared ?? false,
    subnetIds: n.subnets ?? [],
    tags: n.tags,
    ...compact({
      status: n.status,
      mtu: n.mtu ?? undefined,
      description: n.description,
      projectId: n.project_id ?? n.tenant_id,
      portSecurityEnabled: n.port_security_enabled ?? undefined,
    }),
  }));

const SubnetWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    network_id: z.string(),
    cidr: z.string(),
    ip_version: z.number(),
    gateway_ip: wire.optStr,
    dns_nameservers: z.array(z.string()).nullish(),
    allocation_pools: z.array(z.looseObject({ start: z.string(), end: z.string() })).nullish(),
    enable_dhcp: z.boolean().nullish(),
    tags: wire.tags,
    description: wire.optStr,
  })
  .transform((s): Subnet => ({
    id: s.id,
    name: s.name ?? '',
    networkId: s.network_id,
    cidr: s.cidr,
    ipVersion: s.ip_version,
    dnsNameservers: s.dns_nameservers ?? [],
    allocationPools: (s.allocation_pools ?? []).map((p) => ({ start: p.start, end: p.end })),
    enableDhcp: s.enable_dhcp ?? true,
    tags: s.tags,
    ...compact({ gatewayIp: s.gateway_ip, description: s.description }),
  }));

const RouterWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    status: wire.optStr,
    external_gateway_info: z
      .looseObject({ network_id: z.string(), external_fixed_ips: z.array(FixedIpWire).nullish() })
      .nullish(),
    tags: wire.tags,
    description: wire.optStr,
  })
  .transform((r): Router => ({
    id: r.id,
    name: r.name ?? '',
    tags: r.tags,
    ...compact({
      status: r.status,
      description: r.description,
      externalGateway: r.external_gateway_info
        ? {
            networkId: r.external_gateway_info.network_id,
            externalFixedIps: r.external_gateway_info.external_fixed_ips ?? [],
          }
        : undefined,
    }),
  }));

const AddressPairWire = z.looseObject({ ip_address: z.string(), mac_address: wire.optStr });

const PortWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    network_id: z.string(),
    device_id: wire.optStr,
    device_owner: wire.optStr,
    status: wire.optStr,
    mac_address: wire.optStr,
    fixed_ips: z.array(FixedIpWire).nullish(),
    security_groups: z.array(z.string()).nullish(),
    allowed_address_pairs: z.array(AddressPairWire).nullish(),
    admin_state_up: z.boolean().nullish(),
    port_security_enabled: z.boolean().nullish(),
    tags: wire.tags,
    description: wire.optStr,
  })
  .transform((p): Port => ({
    id: p.id,
    name: p.name ?? '',
    networkId: p.network_id,
    fixedIps: p.fixed_ips ?? [],
    securityGroupIds: p.security_groups ?? [],
    allowedAddressPairs: (p.allowed_address_pairs ?? []).map(
      (a) => compact({ ipAddress: a.ip_address, macAddress: a.mac_address }) as { ipAddress: string },
    ),
    adminStateUp: p.admin_state_up ?? true,
    tags: p.tags,
    ...compact({
      deviceId: p.device_id || undefined,
      deviceOwner: p.device_owner || undefined,
      status: p.status,
      macAddress: p.mac_address,
      portSecurityEnabled: p.port_security_enabled ?? undefined,
      description: p.description,
    }),
  }));

const RuleWire = z
  .looseObject({
    id: z.string(),
    security_group_id: z.string(),
    direction: z.string(),
    ethertype: z.string(),
    protocol: z.union([z.string(), z.number()]).nullish(),
    port_range_min: z.number().nullish(),
    port_range_max: z.number().nullish(),
    remote_ip_prefix: wire.optStr,
    remote_group_id: wire.optStr,
    description: wire.optStr,
  })
  .transform((r): SecurityGroupRule => ({
    id: r.id,
    securityGroupId: r.security_group_id,
    direction: r.direction,
    ethertype: r.ethertype,
    ...compact({
      protocol: r.protocol === null || r.protocol === undefined ? undefined : String(r.protocol),
      portRangeMin: r.port_range_min ?? undefined,
      portRangeMax: r.port_range_max ?? undefined,
      remoteIpPrefix: r.remote_ip_prefix,
      remoteGroupId: r.remote_group_id,
      description: r.description,
    }),
  }));

const SecurityGroupWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    description: wire.optStr,
    security_group_rules: z.array(RuleWire).nullish(),
    tags: wire.tags,
  })
  .transform((g): SecurityGroup => ({
    id: g.id,
    name: g.name ?? '',
    rules: g.security_group_rules ?? [],
    tags: g.tags,
    ...compact({ description: g.description }),
  }));

const FloatingIpWire = z
  .looseObject({
    id: z.string(),
    floating_ip_address: z.string(),
    floating_network_id: z.string(),
    port_id: wire.optStr,
    fixed_ip_address: wire.optStr,
    router_id: wire.optStr,
    status: wire.optStr,
    description: wire.optStr,
    tags: wire.tags,
  })
  .transform((f): FloatingIp => ({
    id: f.id,
    floatingIpAddress: f.floating_ip_address,
    floatingNetworkId: f.floating_network_id,
    tags: f.tags,
    ...compact({
      portId: f.port_id,
      fixedIpAddress: f.fixed_ip_address,
      routerId: f.router_id,
      status: f.status,
      description: f.description,
    }),
  }));

const QuotaValue = z.union([z.number(), z.looseObject({ limit: z.number(), used: z.number().nullish() })]);
const QUOTA_KEYS: [keyof NetworkQuota, string][] = [
  ['network', 'network'],
  ['subnet', 'subnet'],
  ['port', 'port'],
  ['router', 'router'],
  ['floatingip', 'floatingip'],
  ['securityGroup', 'security_group'],
  ['securityGroupRule', 'security_group_rule'],
];

/** Neutron over a session. */
export class NeutronNetworkClient implements NetworkClient {
  private readonly api: ServiceApi;

  constructor(private readonly session: Session) {
    this.api = new ServiceApi(session, {
      serviceType: 'network',
      root: (endpoint) => versionRoot(endpoint, ['v2.0']),
    });
  }

  listNetworks(filter: NetworkFilter = {}): Promise<Network[]> {
    return this.api.list(NetworkWire, '/networks', 'networks', 'links', {
      name: filter.name,
      tags: tagsQuery(filter.tags),
      'tags-any': tagsQuery(filter.tagsAny),
      'router:external': filter.external,
      project_id: filter.projectId,
    });
  }

  getNetwork(id: string): Promise<Network> {
    return this.api.call(one('network', NetworkWire), 'GET', `/networks/${seg(id)}`);
  }

  async findNetwork(nameOrId: string): Promise<Network | 'ambiguous' | undefined> {
    const byName = await this.listNetworks({ name: nameOrId });
    if (byName.length > 0) return single(byName, nameOrId, (n) => n.name);
    return single(
      await this.api.list(NetworkWire, '/networks', 'networks', 'links', { id: nameOrId }),
      nameOrId,
      (n) => n.name,
    );
  }

  listExternalNetworks(): Promise<Network[]> {
    return this.listNetworks({ external: true });
  }

  async createNetwork(input: CreateNetworkInput): Promise<Network> {
    const body = {
      network: compact({
        name: input.name,
        description: input.description,
        mtu: input.mtu,
        admin_state_up: input.adminStateUp,
        port_security_enabled: input.portSecurityEnabled,
      }),
    };
    const created = await this.api.call(one('network', NetworkWire), 'POST', '/networks', { body });
    return this.tagged('networks', created, input.tags);
  }

  async deleteNetwork(id: string): Promise<void> {
    await this.api.send('DELETE', `/networks/${seg(id)}`);
  }

  listSubnets(
    filter: { name?: string; networkId?: string; cidr?: string; tags?: string[] } = {},
  ): Promise<Subnet[]> {
    return this.api.list(SubnetWire, '/subnets', 'subnets', 'links', {
      name: filter.name,
      network_id: filter.networkId,
      cidr: filter.cidr,
      tags: tagsQuery(filter.tags),
    });
  }

  getSubnet(id: string): Promise<Subnet> {
    return this.api.call(one('subnet', SubnetWire), 'GET', `/subnets/${seg(id)}`);
  }

  async findSubnet(nameOrId: string): Promise<Subnet | 'ambiguous' | undefined> {
    const byName = await this.listSubnets({ name: nameOrId });
    if (byName.length > 0) return single(byName, nameOrId, (s) => s.name);
    return single(
      await this.api.list(SubnetWire, '/subnets', 'subnets', 'links', { id: nameOrId }),
      nameOrId,
      (s) => s.name,
    );
  }

  async createSubnet(input: CreateSubnetInput): Promise<Subnet> {
    const body = {
      subnet: compact({
        network_id: input.networkId,
        cidr: input.cidr,
        name: input.name,
        ip_version: input.ipVersion ?? 4,
        gateway_ip: input.gatewayIp,
        dns_nameservers: input.dnsNameservers,
        allocation_pools: input.allocationPools,
        enable_dhcp: input.enableDhcp,
        description: input.description,
      }),
    };
    const created = await this.api.call(one('subnet', SubnetWire), 'POST', '/subnets', { body });
    return this.tagged('subnets', created, input.tags);
  }

  async deleteSubnet(id: string): Promise<void> {
    await this.api.send('DELETE', `/subnets/${seg(id)}`);
  }

  listRouters(filter: { name?: string; tags?: string[] } = {}): Promise<Router[]> {
    return this.api.list(RouterWire, '/routers', 'routers', 'links', {
      name: filter.name,
      tags: tagsQuery(filter.tags),
    });
  }

  getRouter(id: string): Promise<Router> {
    return this.api.call(one('router', RouterWire), 'GET', `/routers/${seg(id)}`);
  }

  async createRouter(input: CreateRouterInput): Promise<Router> {
    const body = {
      router: compact({
        name: input.name,
        description: input.description,
        external_gateway_info: input.externalNetworkId
          ? gatewayBody({ networkId: input.externalNetworkId, externalFixedIps: input.externalFixedIps })
          : undefined,
      }),
    };
    const created = await this.api.call(one('router', RouterWire), 'POST', '/routers', { body });
    return this.tagged('routers', created, input.tags);
  }

  setRouterGateway(
    routerId: string,
    gateway: { networkId: string; externalFixedIps?: FixedIp[] } | null,
  ): Promise<Router> {
    const body = { router: { external_gateway_info: gateway ? gatewayBody(gateway) : {} } };
    return this.api.call(one('router', RouterWire), 'PUT', `/routers/${seg(routerId)}`, { body });
  }

  async addRouterInterface(
    routerId: string,
    target: { subnetId: string } | { portId: string },
  ): Promise<{ portId: string; subnetId: string }> {
    const body = 'subnetId' in target ? { subnet_id: target.subnetId } : { port_id: target.portId };
    const res = await this.api.call(
      z.looseObject({ port_id: z.string(), subnet_id: z.string() }),
      'PUT',
      `/routers/${seg(routerId)}/add_router_interface`,
      // An action despite the PUT: repeating one that went through answers 400, so no automatic retry.
      { body, retry: false },
    );
    return { portId: res.port_id, subnetId: res.subnet_id };
  }

  async removeRouterInterface(
    routerId: string,
    target: { subnetId: string } | { portId: string },
  ): Promise<void> {
    const body = 'subnetId' in target ? { subnet_id: target.subnetId } : { port_id: target.portId };
    await this.api.send('PUT', `/routers/${seg(routerId)}/remove_router_interface`, { body, retry: false });
  }

  async deleteRouter(id: string): Promise<void> {
    await this.api.send('DELETE', `/routers/${seg(id)}`);
  }

  listPorts(filter: PortFilter = {}): Promise<Port[]> {
    return this.api.list(PortWire, '/ports', 'ports', 'links', {
      name: filter.name,
      network_id: filter.networkId,
      device_id: filter.deviceId,
      device_owner: filter.deviceOwner,
      tags: tagsQuery(filter.tags),
      fixed_ips: filter.ipAddress === undefined ? undefined : `ip_address=${filter.ipAddress}`,
    });
  }

  getPort(id: string): Promise<Port> {
    return this.api.call(one('port', PortWire), 'GET', `/ports/${seg(id)}`);
  }

  async createPort(input: CreatePortInput): Promise<Port> {
    const body = {
      port: compact({
        network_id: input.networkId,
        name: input.name,
        fixed_ips: input.fixedIps?.map((f) => compact({ subnet_id: f.subnetId, ip_address: f.ipAddress })),
        security_groups: input.securityGroupIds,
        allowed_address_pairs: input.allowedAddressPairs?.map((a) =>
          compact({ ip_address: a.ipAddress, mac_address: a.macAddress }),
        ),
        admin_state_up: input.adminStateUp,
        port_security_enabled: input.portSecurityEnabled,
        device_id: input.deviceId,
        device_owner: input.deviceOwner,
        description: input.description,
      }),
    };
    const created = await this.api.call(one('port', PortWire), 'POST', '/ports', { body });
    return this.tagged('ports', created, input.tags);
  }

  updatePort(
    id: string,
    changes: {
      name?: string;
      securityGroupIds?: string[];
      allowedAddressPairs?: { ipAddress: string; macAddress?: string }[];
      description?: string;
    },
  ): Promise<Port> {
    const body = {
      port: compact({
        name: changes.name,
        security_groups: changes.securityGroupIds,
        allowed_address_pairs: changes.allowedAddressPairs?.map((a) =>
          compact({ ip_address: a.ipAddress, mac_address: a.macAddress }),
        ),
        description: changes.description,
      }),
    };
    return this.api.call(one('port', PortWire), 'PUT', `/ports/${seg(id)}`, { body });
  }

  async deletePort(id: string): Promise<void> {
    await this.api.send('DELETE', `/ports/${seg(id)}`);
  }

  listSecurityGroups(
    filter: { name?: string; tags?: string[]; projectId?: string } = {},
  ): Promise<SecurityGroup[]> {
    return this.api.list(SecurityGroupWire, '/security-groups', 'security_groups', 'links', {
      name: filter.name,
      tags: tagsQuery(filter.tags),
      project_id: filter.projectId,
    });
  }

  getSecurityGroup(id: string): Promise<SecurityGroup> {
    return this.api.call(one('security_group', SecurityGroupWire), 'GET', `/security-groups/${seg(id)}`);
  }

  async createSecurityGroup(input: {
    name: string;
    description?: string;
    tags?: string[];
  }): Promise<SecurityGroup> {
    const body = { security_group: compact({ name: input.name, description: input.description }) };
    const created = await this.api.call(
      one('security_group', SecurityGroupWire),
      'POST',
      '/security-groups',
      { body },
    );
    return this.tagged('security-groups', created, input.tags);
  }

  async deleteSecurityGroup(id: string): Promise<void> {
    await this.api.send('DELETE', `/security-groups/${seg(id)}`);
  }

  listSecurityGroupRules(filter: { securityGroupId?: string } = {}): Promise<SecurityGroupRule[]> {
    return this.api.list(RuleWire, '/security-group-rules', 'security_group_rules', 'links', {
      security_group_id: filter.securityGroupId,
    });
  }

  createSecurityGroupRule(input: CreateSecurityGroupRuleInput): Promise<SecurityGroupRule> {
    const body = {
      security_group_rule: compact({
        security_group_id: input.securityGroupId,
        direction: input.direction,
        ethertype: input.ethertype ?? 'IPv4',
        protocol: input.protocol,
        port_range_min: input.portRangeMin,
        port_range_max: input.portRangeMax,
        remote_ip_prefix: input.remoteIpPrefix,
        remote_group_id: input.remoteGroupId,
        description: input.description,
      }),
    };
    return this.api.call(one('security_group_rule', RuleWire), 'POST', '/security-group-rules', { body });
  }

  async deleteSecurityGroupRule(id: string): Promise<void> {
    await this.api.send('DELETE', `/security-group-rules/${seg(id)}`);
  }

  listFloatingIps(filter: FloatingIpFilter = {}): Promise<FloatingIp[]> {
    return this.api.list(FloatingIpWire, '/floatingips', 'floatingips', 'links', {
      floating_network_id: filter.floatingNetworkId,
      port_id: filter.portId,
      floating_ip_address: filter.floatingIpAddress,
      description: filter.description,
      tags: tagsQuery(filter.tags),
    });
  }

  getFloatingIp(id: string): Promise<FloatingIp> {
    return this.api.call(one('floatingip', FloatingIpWire), 'GET', `/floatingips/${seg(id)}`);
  }

  async createFloatingIp(input: CreateFloatingIpInput): Promise<FloatingIp> {
    const body = {
      floatingip: compact({
        floating_network_id: input.floatingNetworkId,
        port_id: input.portId,
        fixed_ip_address: input.fixedIpAddress,
        floating_ip_address: input.floatingIpAddress,
        description: input.description,
      }),
    };
    const created = await this.api.call(one('floatingip', FloatingIpWire), 'POST', '/floatingips', { body });
    return this.tagged('floatingips', created, input.tags);
  }

  associateFloatingIp(id: string, portId: string, fixedIpAddress?: string): Promise<FloatingIp> {
    const body = { floatingip: compact({ port_id: portId, fixed_ip_address: fixedIpAddress }) };
    return this.api.call(one('floatingip', FloatingIpWire), 'PUT', `/floatingips/${seg(id)}`, { body });
  }

  disassociateFloatingIp(id: string): Promise<FloatingIp> {
    return this.api.call(one('floatingip', FloatingIpWire), 'PUT', `/floatingips/${seg(id)}`, {
      body: { floatingip: { port_id: null } },
    });
  }

  async deleteFloatingIp(id: string): Promise<void> {
    await this.api.send('DELETE', `/floatingips/${seg(id)}`);
  }

  async replaceTags(resource: TaggableResource, id: string, tags: string[]): Promise<string[]> {
    const res = await this.api.call(
      z.looseObject({ tags: wire.tags }).nullish(),
      'PUT',
      `/${resource}/${seg(id)}/tags`,
      { body: { tags } },
    );
    return res?.tags ?? tags;
  }

  async getQuota(projectId?: string): Promise<NetworkQuota> {
    const project = projectId ?? (await this.session.projectId());
    if (!project)
      throw new CloudError({
        kind: 'other',
        service: 'network',
        cloudMessage: 'getQuota: no project id given and the session is not scoped to a project',
      });
    const schema = z.object({ quota: z.record(z.string(), QuotaValue) });
    let quota: Record<string, z.infer<typeof QuotaValue>>;
    try {
      quota = (await this.api.call(schema, 'GET', `/quotas/${seg(project)}/details`)).quota;
    } catch (err) {
      // Clouds without the quota-details extension answer 404: fall back to limits only.
      if (!isNotFound(err)) throw err;
      quota = (await this.api.call(schema, 'GET', `/quotas/${seg(project)}`)).quota;
    }
    const out: NetworkQuota = {};
    for (const [ours, theirs] of QUOTA_KEYS) {
      const v = quota[theirs];
      if (v === undefined) continue;
      out[ours] =
        typeof v === 'number'
          ? { limit: v }
          : (compact({ limit: v.limit, used: v.used ?? undefined }) as QuotaLine);
    }
    return out;
  }

  private async tagged<T extends { id: string; tags: string[] }>(
    resource: TaggableResource,
    created: T,
    tags: string[] | undefined,
  ): Promise<T> {
    if (!tags || tags.length === 0) return created;
    return { ...created, tags: await this.replaceTags(resource, created.id, tags) };
  }
}

function gatewayBody(g: { networkId: string; externalFixedIps?: FixedIp[] | undefined }) {
  return compact({
    network_id: g.networkId,
    external_fixed_ips: g.externalFixedIps?.map((f) =>
      compact({ subnet_id: f.subnetId, ip_address: f.ipAddress }),
    ),
  });
}
