import { z } from 'zod';

/**
 * The records the embedded cloud stores (the `spec` of its objects), one schema per kind,
 * parsed when read back. Field names follow the services' own database columns / wire names
 * so that views stay thin.
 */

const str = z.string();
const nstr = z.string().nullable();
const strMap = z.record(z.string(), z.string());

/** A pending asynchronous change, applied at `at` (ms since the epoch, on the injected clock). */
export const TransitionSchema = z.object({
  action: z.string(),
  at: z.number(),
  detail: z.string().optional(),
});
export type Transition = z.infer<typeof TransitionSchema>;
const transition = TransitionSchema.nullable();

export const FlavorSchema = z.object({
  id: str,
  name: str,
  vcpus: z.number().int(),
  ram: z.number().int(),
  disk: z.number().int(),
  ephemeral: z.number().int(),
  swap: z.number().int(),
  rxtx_factor: z.number(),
  is_public: z.boolean(),
  description: nstr,
  extra_specs: strMap,
  created_at: str,
});
export type Flavor = z.infer<typeof FlavorSchema>;

export const KeypairSchema = z.object({
  name: str,
  public_key: str,
  fingerprint: str,
  type: z.enum(['ssh', 'x509']),
  user_id: str,
  kid: z.number().int(),
  created_at: str,
});
export type Keypair = z.infer<typeof KeypairSchema>;

export const ServerSchema = z.object({
  id: str,
  name: str,
  user_id: str,
  /** Nova keeps a copy of the flavor in the instance. */
  flavor: z.object({
    id: str,
    original_name: str,
    vcpus: z.number().int(),
    ram: z.number().int(),
    disk: z.number().int(),
    ephemeral: z.number().int(),
    swap: z.number().int(),
    extra_specs: strMap,
  }),
  image_id: str,
  key_name: nstr,
  availability_zone: str,
  user_data: nstr,
  metadata: strMap,
  tags: z.array(str),
  description: nstr,
  security_groups: z.array(str),
  ports: z.array(z.object({ port_id: str, network_id: str, created_by_nova: z.boolean(), tag: nstr })),
  volumes: z.array(
    z.object({
      volume_id: str,
      delete_on_termination: z.boolean(),
      boot_index: z.number().int().nullable(),
      device: str,
      tag: nstr,
    }),
  ),
  config_drive: str,
  hostname: str,
  host: str,
  instance_name: str,
  access_ipv4: str,
  access_ipv6: str,
  status: str,
  vm_state: str,
  task_state: nstr,
  power_state: z.number().int(),
  fault: z.object({ code: z.number().int(), message: str, details: str, created: str }).nullable(),
  launched_at: nstr,
  locked: z.boolean(),
  locked_reason: nstr,
  progress: z.number().int(),
  admin_pass: str,
  created_at: str,
  updated_at: str,
  transition,
});
export type Server = z.infer<typeof ServerSchema>;

export const ImageSchema = z.object({
  id: str,
  name: nstr,
  disk_format: nstr,
  container_format: nstr,
  visibility: z.enum(['public', 'private', 'shared', 'community']),
  protected: z.boolean(),
  min_disk: z.number().int(),
  min_ram: z.number().int(),
  tags: z.array(str),
  properties: z.record(z.string(), z.unknown()),
  owner: str,
  status: str,
  size: z.number().int().nullable(),
  virtual_size: z.number().int().nullable(),
  checksum: nstr,
  os_hash_algo: nstr,
  os_hash_value: nstr,
  blob: z.object({ id: str, chunks: z.number().int() }).nullable(),
  created_at: str,
  updated_at: str,
});
export type Image = z.infer<typeof ImageSchema>;

const neutronCommon = {
  id: str,
  tenant_id: str,
  name: str,
  description: str,
  tags: z.array(str),
  created_at: str,
  updated_at: str,
  revision_number: z.number().int(),
};

export const NetworkSchema = z.object({
  ...neutronCommon,
  admin_state_up: z.boolean(),
  shared: z.boolean(),
  external: z.boolean(),
  is_default: z.boolean(),
  mtu: z.number().int(),
  port_security_enabled: z.boolean(),
  subnets: z.array(str),
  status: str,
  availability_zone_hints: z.array(str),
  network_type: str,
  physical_network: nstr,
  segmentation_id: z.number().int().nullable(),
  dns_domain: str,
});
export type Network = z.infer<typeof NetworkSchema>;

export const IpRangeSchema = z.object({ start: str, end: str });

export const SubnetSchema = z.object({
  ...neutronCommon,
  network_id: str,
  ip_version: z.literal(4),
  cidr: str,
  gateway_ip: nstr,
  allocation_pools: z.array(IpRangeSchema),
  enable_dhcp: z.boolean(),
  dns_nameservers: z.array(str),
  host_routes: z.array(z.object({ destination: str, nexthop: str })),
  service_types: z.array(str),
});
export type Subnet = z.infer<typeof SubnetSchema>;

export const FixedIpSchema = z.object({ subnet_id: str, ip_address: str });
export type FixedIp = z.infer<typeof FixedIpSchema>;

export const PortSchema = z.object({
  ...neutronCommon,
  network_id: str,
  mac_address: str,
  fixed_ips: z.array(FixedIpSchema),
  device_id: str,
  device_owner: str,
  security_groups: z.array(str),
  admin_state_up: z.boolean(),
  port_security_enabled: z.boolean(),
  allowed_address_pairs: z.array(z.object({ ip_address: str, mac_address: str })),
  binding_host_id: str,
  binding_vnic_type: str,
  binding_profile: z.record(z.string(), z.unknown()),
  status: str,
  dns_name: str,
});
export type Port = z.infer<typeof PortSchema>;

export const IpAllocationSchema = z.object({
  subnet_id: str,
  network_id: str,
  ip_address: str,
  port_id: str,
});
export type IpAllocation = z.infer<typeof IpAllocationSchema>;

export const RouterSchema = z.object({
  ...neutronCommon,
  admin_state_up: z.boolean(),
  external_gateway_info: z
    .object({ network_id: str, enable_snat: z.boolean(), external_fixed_ips: z.array(FixedIpSchema) })
    .nullable(),
  gw_port_id: nstr,
  routes: z.array(z.object({ destination: str, nexthop: str })),
  interfaces: z.array(z.object({ port_id: str, subnet_id: str })),
  status: str,
  distributed: z.boolean(),
  ha: z.boolean(),
  availability_zone_hints: z.array(str),
});
export type Router = z.infer<typeof RouterSchema>;

export const SecurityGroupSchema = z.object({ ...neutronCommon, stateful: z.boolean() });
export type SecurityGroup = z.infer<typeof SecurityGroupSchema>;

export const SecurityGroupRuleSchema = z.object({
  id: str,
  tenant_id: str,
  security_group_id: str,
  direction: z.enum(['ingress', 'egress']),
  ethertype: z.enum(['IPv4', 'IPv6']),
  protocol: nstr,
  port_range_min: z.number().int().nullable(),
  port_range_max: z.number().int().nullable(),
  remote_ip_prefix: nstr,
  remote_group_id: nstr,
  description: str,
  created_at: str,
  updated_at: str,
  revision_number: z.number().int(),
});
export type SecurityGroupRule = z.infer<typeof SecurityGroupRuleSchema>;

export const FloatingIpSchema = z.object({
  ...neutronCommon,
  floating_network_id: str,
  floating_ip_address: str,
  floating_subnet_id: str,
  port_id: nstr,
  fixed_ip_address: nstr,
  router_id: nstr,
  status: str,
});
export type FloatingIp = z.infer<typeof FloatingIpSchema>;

const octaviaCommon = {
  id: str,
  name: str,
  description: str,
  admin_state_up: z.boolean(),
  tags: z.array(str),
  provisioning_status: str,
  operating_status: str,
  created_at: str,
  updated_at: nstr,
};

export const LoadBalancerSchema = z.object({
  ...octaviaCommon,
  vip_address: str,
  vip_port_id: str,
  vip_subnet_id: str,
  vip_network_id: str,
  provider: str,
  flavor_id: nstr,
  availability_zone: nstr,
  transition,
});
export type LoadBalancer = z.infer<typeof LoadBalancerSchema>;

export const ListenerSchema = z.object({
  ...octaviaCommon,
  loadbalancer_id: str,
  protocol: str,
  protocol_port: z.number().int(),
  default_pool_id: nstr,
  connection_limit: z.number().int(),
  allowed_cidrs: z.array(str).nullable(),
  timeout_client_data: z.number().int(),
  timeout_member_connect: z.number().int(),
  timeout_member_data: z.number().int(),
  timeout_tcp_inspect: z.number().int(),
  insert_headers: strMap,
});
export type Listener = z.infer<typeof ListenerSchema>;

export const PoolSchema = z.object({
  ...octaviaCommon,
  loadbalancer_id: str,
  listener_id: nstr,
  protocol: str,
  lb_algorithm: str,
  session_persistence: z.object({ type: str, cookie_name: nstr }).nullable(),
  healthmonitor_id: nstr,
});
export type Pool = z.infer<typeof PoolSchema>;

export const MemberSchema = z.object({
  ...octaviaCommon,
  pool_id: str,
  loadbalancer_id: str,
  address: str,
  protocol_port: z.number().int(),
  subnet_id: nstr,
  weight: z.number().int(),
  backup: z.boolean(),
  monitor_address: nstr,
  monitor_port: z.number().int().nullable(),
});
export type Member = z.infer<typeof MemberSchema>;

export const HealthMonitorSchema = z.object({
  ...octaviaCommon,
  pool_id: str,
  loadbalancer_id: str,
  type: str,
  delay: z.number().int(),
  timeout: z.number().int(),
  max_retries: z.number().int(),
  max_retries_down: z.number().int(),
  http_method: nstr,
  url_path: nstr,
  expected_codes: nstr,
  http_version: z.number().nullable(),
  domain_name: nstr,
});
export type HealthMonitor = z.infer<typeof HealthMonitorSchema>;

export const VolumeAttachmentSchema = z.object({ id: str, server_id: str, device: str, attached_at: str });

export const VolumeSchema = z.object({
  id: str,
  name: nstr,
  description: nstr,
  size: z.number().int(),
  volume_type: str,
  availability_zone: str,
  bootable: z.boolean(),
  image_id: nstr,
  image_metadata: strMap,
  metadata: strMap,
  multiattach: z.boolean(),
  snapshot_id: nstr,
  source_volid: nstr,
  user_id: str,
  attachments: z.array(VolumeAttachmentSchema),
  status: str,
  created_at: str,
  updated_at: nstr,
  transition,
});
export type Volume = z.infer<typeof VolumeSchema>;

const limitMap = z.record(z.string(), z.number().int());
export const QuotaSetSchema = z.object({
  compute: limitMap,
  network: limitMap,
  volume: limitMap,
  loadbalancer: limitMap,
});
export type QuotaSet = z.infer<typeof QuotaSetSchema>;

export const ContainerSchema = z.object({
  name: str,
  metadata: strMap,
  read_acl: nstr,
  write_acl: nstr,
  created_at: str,
  updated_at: str,
});
export type Container = z.infer<typeof ContainerSchema>;

export const StoredObjectSchema = z.object({
  container: str,
  name: str,
  size: z.number().int(),
  etag: str,
  content_type: str,
  metadata: strMap,
  blob: z.object({ id: str, chunks: z.number().int() }),
  last_modified: str,
});
export type StoredObject = z.infer<typeof StoredObjectSchema>;

export const BlobChunkSchema = z.object({ data: str });
export type BlobChunk = z.infer<typeof BlobChunkSchema>;
