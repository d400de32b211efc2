import { z } from 'zod';
import type {
  CreateHealthMonitorInput,
  CreateListenerInput,
  CreateLoadBalancerInput,
  CreateMemberInput,
  CreatePoolInput,
  HealthMonitor,
  Listener,
  LoadBalancer,
  LoadBalancerClient,
  Member,
  Pool,
} from './load-balancer-types.ts';
import type { Session } from './session.ts';
import { compact, one, seg, ServiceApi, tagsQuery, versionRoot, wire } from './service-api.ts';

/** Octavia (load-balancer v2): load balancers, listeners, pools, members, health monitors. */

const Status = {
  provisioning_status: z.string(),
  operating_status: z.string().nullish(),
};

const LoadBalancerWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    description: wire.optStr,
    ...Status,
    vip_address: wire.optStr,
    vip_port_id: wire.optStr,
    vip_subnet_id: wire.optStr,
    vip_network_id: wire.optStr,
    provider: wire.optStr,
    flavor_id: wire.optStr,
    availability_zone: wire.optStr,
    listeners: wire.idRefs,
    pools: wire.idRefs,
    tags: wire.tags,
    project_id: wire.optStr,
  })
  .transform((l): LoadBalancer => ({
    id: l.id,
    name: l.name ?? '',
    provisioningStatus: l.provisioning_status,
    operatingStatus: l.operating_status ?? 'OFFLINE',
    listenerIds: l.listeners,
    poolIds: l.pools,
    tags: l.tags,
    ...compact({
      description: l.description,
      vipAddress: l.vip_address,
      vipPortId: l.vip_port_id,
      vipSubnetId: l.vip_subnet_id,
      vipNetworkId: l.vip_network_id,
      provider: l.provider,
      flavorId: l.flavor_id,
      availabilityZone: l.availability_zone,
      projectId: l.project_id,
    }),
  }));

const ListenerWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    protocol: z.string(),
    protocol_port: z.number(),
    loadbalancers: wire.idRefs,
    default_pool_id: wire.optStr,
    allowed_cidrs: z.array(z.string()).nullish(),
    ...Status,
    tags: wire.tags,
  })
  .transform((l): Listener => ({
    id: l.id,
    name: l.name ?? '',
    protocol: l.protocol,
    protocolPort: l.protocol_port,
    loadBalancerIds: l.loadbalancers,
    allowedCidrs: l.allowed_cidrs ?? [],
    provisioningStatus: l.provisioning_status,
    operatingStatus: l.operating_status ?? 'OFFLINE',
    tags: l.tags,
    ...compact({ defaultPoolId: l.default_pool_id }),
  }));

const PoolWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    protocol: z.string(),
    lb_algorithm: z.string(),
    listeners: wire.idRefs,
    loadbalancers: wire.idRefs,
    members: wire.idRefs,
    healthmonitor_id: wire.optStr,
    ...Status,
    tags: wire.tags,
  })
  .transform((p): Pool => ({
    id: p.id,
    name: p.name ?? '',
    protocol: p.protocol,
    lbAlgorithm: p.lb_algorithm,
    listenerIds: p.listeners,
    loadBalancerIds: p.loadbalancers,
    memberIds: p.members,
    provisioningStatus: p.provisioning_status,
    operatingStatus: p.operating_status ?? 'OFFLINE',
    tags: p.tags,
    ...compact({ healthMonitorId: p.healthmonitor_id }),
  }));

const MemberWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    address: z.string(),
    protocol_port: z.number(),
    subnet_id: wire.optStr,
    weight: z.number().nullish(),
    monitor_port: z.number().nullish(),
    ...Status,
    tags: wire.tags,
  })
  .transform((m): Member => ({
    id: m.id,
    name: m.name ?? '',
    address: m.address,
    protocolPort: m.protocol_port,
    provisioningStatus: m.provisioning_status,
    operatingStatus: m.operating_status ?? 'NO_MONITOR',
    tags: m.tags,
    ...compact({
      subnetId: m.subnet_id,
      weight: m.weight ?? undefined,
      monitorPort: m.monitor_port ?? undefined,
    }),
  }));

const HealthMonitorWire = z
  .looseObject({
    id: z.string(),
    name: z.string().nullish(),
    type: z.string(),
    delay: z.number(),
    timeout: z.number(),
    max_retries: z.number(),
    max_retries_down: z.number().nullish(),
    pools: wire.idRefs,
    ...Status,
    tags: wire.tags,
  })
  .transform((h): HealthMonitor => ({
    id: h.id,
    name: h.name ?? '',
    type: h.type,
    delay: h.delay,
    timeout: h.timeout,
    maxRetries: h.max_retries,
    poolIds: h.pools,
    provisioningStatus: h.provisioning_status,
    operatingStatus: h.operating_status ?? 'OFFLINE',
    tags: h.tags,
    ...compact({ maxRetriesDown: h.max_retries_down ?? undefined }),
  }));

/** Octavia over a session. */
export class OctaviaLoadBalancerClient implements LoadBalancerClient {
  private readonly api: ServiceApi;

  constructor(session: Session) {
    this.api = new ServiceApi(session, {
      serviceType: 'load-balancer',
      root: (endpoint) => `${versionRoot(endpoint, ['v2', 'v2.0'])}/lbaas`,
    });
  }

  createLoadBalancer(input: CreateLoadBalancerInput): Promise<LoadBalancer> {
    const body = {
      loadbalancer: compact({
        name: input.name,
        description: input.description,
        vip_subnet_id: input.vipSubnetId,
        vip_network_id: input.vipNetworkId,
        vip_port_id: input.vipPortId,
        vip_address: input.vipAddress,
        provider: input.provider,
        flavor_id: input.flavorId,
        availability_zone: input.availabilityZone,
        tags: input.tags,
      }),
    };
    return this.api.call(one('loadbalancer', LoadBalancerWire), 'POST', '/loadbalancers', { body });
  }

  getLoadBalancer(id: string): Promise<LoadBalancer> {
    return this.api.call(one('loadbalancer', LoadBalancerWire), 'GET', `/loadbalancers/${seg(id)}`);
  }

  listLoadBalancers(
    filter: { name?: string; tags?: string[]; vipPortId?: string } = {},
  ): Promise<LoadBalancer[]> {
    return this.api.list(LoadBalancerWire, '/loadbalancers', 'loadbalancers', 'links', {
      name: filter.name,
      tags: tagsQuery(filter.tags),
      vip_port_id: filter.vipPortId,
    });
  }

  async deleteLoadBalancer(id: string, options: { cascade?: boolean } = {}): Promise<void> {
    await this.api.send('DELETE', `/loadbalancers/${seg(id)}`, {
      query: { cascade: options.cascade ? 'true' : undefined },
    });
  }

  createListener(input: CreateListenerInput): Promise<Listener> {
    const body = {
      listener: compact({
        loadbalancer_id: input.loadBalancerId,
        name: input.name,
        protocol: input.protocol,
        protocol_port: input.protocolPort,
        default_pool_id: input.defaultPoolId,
        allowed_cidrs: input.allowedCidrs,
        tags: input.tags,
      }),
    };
    return this.api.call(one('listener', ListenerWire), 'POST', '/listeners', { body });
  }

  getListener(id: string): Promise<Listener> {
    return this.api.call(one('listener', ListenerWire), 'GET', `/listeners/${seg(id)}`);
  }

  listListeners(filter: { loadBalancerId?: string; name?: string } = {}): Promise<Listener[]> {
    return this.api.list(ListenerWire, '/listeners', 'listeners', 'links', {
      loadbalancer_id: filter.loadBalancerId,
      name: filter.name,
    });
  }

  async deleteListener(id: string): Promise<void> {
    await this.api.send('DELETE', `/listeners/${seg(id)}`);
  }

  createPool(input: CreatePoolInput): Promise<Pool> {
    const body = {
      pool: compact({
        name: input.name,
        protocol: input.protocol,
        lb_algorithm: input.lbAlgorithm ?? 'ROUND_ROBIN',
        listener_id: input.listenerId,
        loadbalancer_id: input.loadBalancerId,
        tags: input.tags,
      }),
    };
    return this.api.call(one('pool', PoolWire), 'POST', '/pools', { body });
  }

  getPool(id: string): Promise<Pool> {
    return this.api.call(one('pool', PoolWire), 'GET', `/pools/${seg(id)}`);
  }

  listPools(filter: { loadBalancerId?: string; name?: string } = {}): Promise<Pool[]> {
    return this.api.list(PoolWire, '/pools', 'pools', 'links', {
      loadbalancer_id: filter.loadBalancerId,
      name: filter.name,
    });
  }

  async deletePool(id: string): Promise<void> {
    await this.api.send('DELETE', `/pools/${seg(id)}`);
  }

  createMember(poolId: string, input: CreateMemberInput): Promise<Member> {
    const body = {
      member: compact({
        name: input.name,
        address: input.address,
        protocol_port: input.protocolPort,
        subnet_id: input.subnetId,
        weight: input.weight,
        monitor_port: input.monitorPort,
        tags: input.tags,
      }),
    };
    return this.api.call(one('member', MemberWire), 'POST', `/pools/${seg(poolId)}/members`, { body });
  }

  getMember(poolId: string, memberId: string): Promise<Member> {
    return this.api.call(one('member', MemberWire), 'GET', `/pools/${seg(poolId)}/members/${seg(memberId)}`);
  }

  listMembers(poolId: string, filter: { name?: string; address?: string } = {}): Promise<Member[]> {
    return this.api.list(MemberWire, `/pools/${seg(poolId)}/members`, 'members', 'links', {
      name: filter.name,
      address: filter.address,
    });
  }

  async deleteMember(poolId: string, memberId: string): Promise<void> {
    await this.api.send('DELETE', `/pools/${seg(poolId)}/members/${seg(memberId)}`);
  }

  createHealthMonitor(input: CreateHealthMonitorInput): Promise<HealthMonitor> {
    const body = {
      healthmonitor: compact({
        pool_id: input.poolId,
        name: input.name,
        type: input.type,
        delay: input.delay,
        timeout: input.timeout,
        max_retries: input.maxRetries,
        max_retries_down: input.maxRetriesDown,
        tags: input.tags,
      }),
    };
    return this.api.call(one('healthmonitor', HealthMonitorWire), 'POST', '/healthmonitors', { body });
  }

  getHealthMonitor(id: string): Promise<HealthMonitor> {
    return this.api.call(one('healthmonitor', HealthMonitorWire), 'GET', `/healthmonitors/${seg(id)}`);
  }

  listHealthMonitors(filter: { poolId?: string; name?: string } = {}): Promise<HealthMonitor[]> {
    return this.api.list(HealthMonitorWire, '/healthmonitors', 'healthmonitors', 'links', {
      pool_id: filter.poolId,
      name: filter.name,
    });
  }

  async deleteHealthMonitor(id: string): Promise<void> {
    await this.api.send('DELETE', `/healthmonitors/${seg(id)}`);
  }
}
