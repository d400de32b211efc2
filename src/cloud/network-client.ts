import { z } from 'zod';
import { CloudError, isNotFound } from './cloud-error.ts';
import type {
  CreateFloatingIpInput,
  CreateNetworkInput,
  CreatePortInput,
  CreateRouterInput,
  CreateSecurityGroupRuleInput,
  CreateSubnetInput,
  FixedIp,
  FloatingIp,
  FloatingIpFilter,
  Network,
  NetworkClient,
  NetworkFilter,
  NetworkQuota,
  Port,
  PortFilter,
  QuotaLine,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
  TaggableResource,
} from './network-types.ts';
import {
  NetworkWire,
  SubnetWire,
  RouterWire,
  PortWire,
  RuleWire,
  SecurityGroupWire,
  FloatingIpWire,
  QuotaValue,
  QUOTA_KEYS,
} from './network-wire.ts';
import type { Session } from './session.ts';
import {
  compact,
  one,
  seg,
  ServiceApi,
  several,
  single,
  tagsQuery,
  versionRoot,
  wire,
} from './service-api.ts';

/**
 * Neutron (network v2.0): networks, subnets, routers, ports, security groups, floating IPs,
 * tags and quotas.
 */

/** Neutron's answer to a tag replacement (some versions answer with no body). */
const TagsAnswerWire = z.looseObject({ tags: wire.tags }).nullish();

/** Neutron over a session. */
export class NeutronNetworkClient implements NetworkClient {
  private readonly api: ServiceApi;
  /** Whether the cloud takes tags in create requests, once asked (see {@link tagsAtCreate}). */
  private tagCreation: Promise<boolean> | undefined;

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
    return this.createTagged('networks', 'network', NetworkWire, body.network, input.tags);
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
    return this.createTagged('subnets', 'subnet', SubnetWire, body.subnet, input.tags);
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
    return this.createTagged('routers', 'router', RouterWire, body.router, input.tags);
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
    return this.createTagged('ports', 'port', PortWire, body.port, input.tags);
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
    return this.createTagged(
      'security-groups',
      'security_group',
      SecurityGroupWire,
      body.security_group,
      input.tags,
    );
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
    const body = { security_group_rule: ruleBody(input) };
    return this.api.call(one('security_group_rule', RuleWire), 'POST', '/security-group-rules', { body });
  }

  createSecurityGroupRules(inputs: CreateSecurityGroupRuleInput[]): Promise<SecurityGroupRule[]> {
    if (inputs.length === 0) return Promise.resolve([]);
    const body = { security_group_rules: inputs.map(ruleBody) };
    return this.api.call(several('security_group_rules', RuleWire), 'POST', '/security-group-rules', {
      body,
    });
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
    return this.createTagged('floatingips', 'floatingip', FloatingIpWire, body.floatingip, input.tags);
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
    const res = await this.api.call(TagsAnswerWire, 'PUT', `/${resource}/${seg(id)}/tags`, {
      body: { tags },
    });
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

  /**
   * Create a resource with its tags: in the create request where Neutron offers `tag-creation`
   * (one call, and the resource never exists untagged), else created first and tagged after.
   */
  private async createTagged<T extends { id: string; tags: string[] }>(
    collection: TaggableResource,
    key: string,
    schema: z.ZodType<T>,
    fields: Record<string, unknown>,
    tags: string[] | undefined,
  ): Promise<T> {
    const tagged = tags !== undefined && tags.length > 0;
    const atCreate = tagged && (await this.tagsAtCreate());
    const created = await this.api.call(one(key, schema), 'POST', `/${collection}`, {
      body: { [key]: atCreate ? { ...fields, tags } : fields },
    });
    if (!tagged || atCreate) return created;
    return { ...created, tags: await this.replaceTags(collection, created.id, tags) };
  }

  /**
   * Whether Neutron takes tags in a create request (the `tag-creation` extension, 2024.2 on):
   * asked once per client. An answer other than yes or no is not kept, and tags go on after.
   */
  private tagsAtCreate(): Promise<boolean> {
    this.tagCreation ??= this.api.send('GET', '/extensions/tag-creation').then(
      () => true,
      (err: unknown) => {
        if (isNotFound(err)) return false;
        this.tagCreation = undefined;
        return false;
      },
    );
    return this.tagCreation;
  }
}

function ruleBody(input: CreateSecurityGroupRuleInput) {
  return compact({
    security_group_id: input.securityGroupId,
    direction: input.direction,
    ethertype: input.ethertype ?? 'IPv4',
    protocol: input.protocol,
    port_range_min: input.portRangeMin,
    port_range_max: input.portRangeMax,
    remote_ip_prefix: input.remoteIpPrefix,
    remote_group_id: input.remoteGroupId,
    description: input.description,
  });
}

function gatewayBody(g: { networkId: string; externalFixedIps?: FixedIp[] | undefined }) {
  return compact({
    network_id: g.networkId,
    external_fixed_ips: g.externalFixedIps?.map((f) =>
      compact({ subnet_id: f.subnetId, ip_address: f.ipAddress }),
    ),
  });
}
