import { z } from 'zod';
import { compact, wire } from './service-api.ts';
import type {
  FixedIp,
  FloatingIp,
  Network,
  NetworkQuota,
  Port,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
} from './network-types.ts';

/** Neutron's JSON, checked and mapped to the client's types. */

export const FixedIpWire = z
  .looseObject({ subnet_id: wire.optStr, ip_address: wire.optStr })
  .transform((f): FixedIp => compact({ subnetId: f.subnet_id, ipAddress: f.ip_address }));

export const NetworkWire = z
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

export const SubnetWire = z
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

export const RouterWire = z
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

export const AddressPairWire = z.looseObject({ ip_address: z.string(), mac_address: wire.optStr });

export const PortWire = z
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

export const RuleWire = z
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

export const SecurityGroupWire = z
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

export const FloatingIpWire = z
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

export const QuotaValue = z.union([
  z.number(),
  z.looseObject({ limit: z.number(), used: z.number().nullish() }),
]);
export const QUOTA_KEYS: [keyof NetworkQuota, string][] = [
  ['network', 'network'],
  ['subnet', 'subnet'],
  ['port', 'port'],
  ['router', 'router'],
  ['floatingip', 'floatingip'],
  ['securityGroup', 'security_group'],
  ['securityGroupRule', 'security_group_rule'],
];
