import { isoSeconds } from '../core/context.ts';
import type {
  FloatingIp,
  Network,
  Port,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
} from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/** Neutron's wire form of each resource. */

function common(r: {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  tags: string[];
  created_at: string;
  updated_at: string;
  revision_number: number;
}) {
  return {
    id: r.id,
    name: r.name,
    tenant_id: r.tenant_id,
    project_id: r.tenant_id,
    description: r.description,
    tags: r.tags,
    created_at: isoSeconds(r.created_at),
    updated_at: isoSeconds(r.updated_at),
    revision_number: r.revision_number,
  };
}

export function networkView(row: Row<Network>, admin: boolean): Record<string, unknown> {
  const n = row.rec;
  return {
    ...common(n),
    admin_state_up: n.admin_state_up,
    mtu: n.mtu,
    status: n.status,
    subnets: n.subnets,
    shared: n.shared,
    availability_zone_hints: n.availability_zone_hints,
    availability_zones: ['nova'],
    ipv4_address_scope: null,
    ipv6_address_scope: null,
    'router:external': n.external,
    ...(n.external ? { is_default: n.is_default } : {}),
    port_security_enabled: n.port_security_enabled,
    ...(admin
      ? {
          'provider:network_type': n.network_type,
          'provider:physical_network': n.physical_network,
          'provider:segmentation_id': n.segmentation_id,
        }
      : {}),
  };
}

export function subnetView(row: Row<Subnet>): Record<string, unknown> {
  const s = row.rec;
  return {
    ...common(s),
    network_id: s.network_id,
    ip_version: s.ip_version,
    subnetpool_id: null,
    enable_dhcp: s.enable_dhcp,
    ipv6_ra_mode: null,
    ipv6_address_mode: null,
    gateway_ip: s.gateway_ip,
    cidr: s.cidr,
    allocation_pools: s.allocation_pools,
    host_routes: s.host_routes,
    dns_nameservers: s.dns_nameservers,
    service_types: s.service_types,
    dns_publish_fixed_ip: false,
  };
}

export function portView(row: Row<Port>, admin: boolean): Record<string, unknown> {
  const p = row.rec;
  const bound = p.binding_host_id !== '';
  return {
    ...common(p),
    network_id: p.network_id,
    mac_address: p.mac_address,
    admin_state_up: p.admin_state_up,
    status: p.status,
    device_id: p.device_id,
    device_owner: p.device_owner,
    fixed_ips: p.fixed_ips,
    allowed_address_pairs: p.allowed_address_pairs,
    extra_dhcp_opts: [],
    security_groups: p.security_groups,
    port_security_enabled: p.port_security_enabled,
    'binding:vnic_type': p.binding_vnic_type,
    ...(admin
      ? {
          'binding:host_id': p.binding_host_id,
          'binding:profile': p.binding_profile,
          'binding:vif_type': bound ? 'ovs' : 'unbound',
          'binding:vif_details': bound
            ? { port_filter: true, connectivity: 'l2', bridge_name: 'br-int', datapath_type: 'system' }
            : {},
        }
      : {}),
  };
}

export function routerView(row: Row<Router>): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(r),
    admin_state_up: r.admin_state_up,
    status: r.status,
    external_gateway_info: r.external_gateway_info,
    routes: r.routes,
    distributed: r.distributed,
    ha: r.ha,
    availability_zone_hints: r.availability_zone_hints,
    availability_zones: ['nova'],
    flavor_id: null,
  };
}

export function ruleView(row: Row<SecurityGroupRule>): Record<string, unknown> {
  const r = row.rec;
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    project_id: r.tenant_id,
    security_group_id: r.security_group_id,
    ethertype: r.ethertype,
    direction: r.direction,
    protocol: r.protocol,
    port_range_min: r.port_range_min,
    port_range_max: r.port_range_max,
    remote_ip_prefix: r.remote_ip_prefix,
    normalized_cidr: r.remote_ip_prefix,
    remote_group_id: r.remote_group_id,
    remote_address_group_id: null,
    description: r.description,
    tags: [],
    created_at: isoSeconds(r.created_at),
    updated_at: isoSeconds(r.updated_at),
    revision_number: r.revision_number,
  };
}

export function securityGroupView(
  row: Row<SecurityGroup>,
  rules: Row<SecurityGroupRule>[],
): Record<string, unknown> {
  return {
    ...common(row.rec),
    stateful: row.rec.stateful,
    shared: false,
    security_group_rules: rules.map(ruleView),
  };
}

export function floatingIpView(
  row: Row<FloatingIp>,
  portDetails?: Record<string, unknown> | null,
): Record<string, unknown> {
  const f = row.rec;
  return {
    ...common(f),
    floating_ip_address: f.floating_ip_address,
    floating_network_id: f.floating_network_id,
    router_id: f.router_id,
    port_id: f.port_id,
    fixed_ip_address: f.fixed_ip_address,
    status: f.status,
    qos_policy_id: null,
    port_details: portDetails ?? null,
    port_forwardings: [],
    dns_domain: '',
    dns_name: '',
  };
}
