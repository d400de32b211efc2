import { isoNaive } from '../core/context.ts';
import type { HealthMonitor, Listener, LoadBalancer, Member, Pool } from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/** Octavia's wire form of each resource. */

const ts = (s: string | null) => (s ? isoNaive(s) : null);

function common(
  row: Row<{
    id: string;
    name: string;
    description: string;
    admin_state_up: boolean;
    tags: string[];
    provisioning_status: string;
    operating_status: string;
    created_at: string;
    updated_at: string | null;
  }>,
) {
  const r = row.rec;
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    provisioning_status: r.provisioning_status,
    operating_status: r.operating_status,
    admin_state_up: r.admin_state_up,
    project_id: row.project,
    tenant_id: row.project,
    created_at: ts(r.created_at),
    updated_at: ts(r.updated_at),
    tags: r.tags,
  };
}

export function lbView(
  row: Row<LoadBalancer>,
  listeners: string[],
  pools: string[],
): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(row),
    vip_address: r.vip_address,
    vip_port_id: r.vip_port_id,
    vip_subnet_id: r.vip_subnet_id,
    vip_network_id: r.vip_network_id,
    vip_qos_policy_id: null,
    listeners: listeners.map((id) => ({ id })),
    pools: pools.map((id) => ({ id })),
    provider: r.provider,
    flavor_id: r.flavor_id,
    availability_zone: r.availability_zone,
  };
}

export function listenerView(row: Row<Listener>): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(row),
    protocol: r.protocol,
    protocol_port: r.protocol_port,
    connection_limit: r.connection_limit,
    default_tls_container_ref: null,
    sni_container_refs: [],
    default_pool_id: r.default_pool_id,
    l7policies: [],
    insert_headers: r.insert_headers,
    loadbalancers: [{ id: r.loadbalancer_id }],
    timeout_client_data: r.timeout_client_data,
    timeout_member_connect: r.timeout_member_connect,
    timeout_member_data: r.timeout_member_data,
    timeout_tcp_inspect: r.timeout_tcp_inspect,
    client_ca_tls_container_ref: null,
    client_authentication: 'NONE',
    client_crl_container_ref: null,
    allowed_cidrs: r.allowed_cidrs,
    tls_ciphers: null,
    tls_versions: null,
    alpn_protocols: null,
  };
}

export function poolView(row: Row<Pool>, listeners: string[], members: string[]): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(row),
    protocol: r.protocol,
    lb_algorithm: r.lb_algorithm,
    session_persistence: r.session_persistence,
    loadbalancers: [{ id: r.loadbalancer_id }],
    listeners: listeners.map((id) => ({ id })),
    members: members.map((id) => ({ id })),
    healthmonitor_id: r.healthmonitor_id,
    tls_enabled: false,
    tls_container_ref: null,
    ca_tls_container_ref: null,
    crl_container_ref: null,
    tls_ciphers: null,
    tls_versions: null,
    alpn_protocols: null,
  };
}

export function memberView(row: Row<Member>): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(row),
    address: r.address,
    protocol_port: r.protocol_port,
    weight: r.weight,
    backup: r.backup,
    subnet_id: r.subnet_id,
    monitor_address: r.monitor_address,
    monitor_port: r.monitor_port,
  };
}

export function monitorView(row: Row<HealthMonitor>): Record<string, unknown> {
  const r = row.rec;
  return {
    ...common(row),
    type: r.type,
    delay: r.delay,
    timeout: r.timeout,
    max_retries: r.max_retries,
    max_retries_down: r.max_retries_down,
    http_method: r.http_method,
    url_path: r.url_path,
    expected_codes: r.expected_codes,
    http_version: r.http_version,
    domain_name: r.domain_name,
    pools: [{ id: r.pool_id }],
  };
}
