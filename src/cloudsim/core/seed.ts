import { nowIso, type CloudContext } from './context.ts';
import { defaultPools, newId, parseCidr4, parseIpv4 } from './ids.ts';
import type { Flavor, Image, Network, Subnet } from './records.ts';

/** Flavors of the seeded region (devstack's m1 family). */
export const SEED_FLAVORS: readonly Pick<Flavor, 'id' | 'name' | 'vcpus' | 'ram' | 'disk'>[] = [
  { id: '1', name: 'm1.tiny', vcpus: 1, ram: 512, disk: 1 },
  { id: '2', name: 'm1.small', vcpus: 1, ram: 2048, disk: 20 },
  { id: '3', name: 'm1.medium', vcpus: 2, ram: 4096, disk: 40 },
  { id: '4', name: 'm1.large', vcpus: 4, ram: 8192, disk: 80 },
  { id: '5', name: 'm1.xlarge', vcpus: 8, ram: 16384, disk: 160 },
];

/** Kubernetes node images of the seeded region. */
export const SEED_IMAGES: readonly {
  name: string;
  properties: Record<string, string>;
  size: number;
  minDisk: number;
}[] = [
  {
    name: 'fedora-coreos-38',
    properties: { os_distro: 'fedora-coreos', os_admin_user: 'core', os_version: '38' },
    size: 734003200,
    minDisk: 10,
  },
  {
    name: 'ubuntu-22.04-kube',
    properties: { os_distro: 'ubuntu', os_admin_user: 'ubuntu', os_version: '22.04' },
    size: 681574400,
    minDisk: 10,
  },
];

/** The external network and its floating-IP pool. */
export const SEED_PUBLIC = {
  network: 'public',
  subnet: 'public-subnet',
  // devstack's range, grown from /24 to /20: every cluster takes two addresses (router
  // gateway, API floating IP), and a /24 ran out at about a hundred clusters
  cidr: '172.24.0.0/20',
  gateway: '172.24.0.1',
} as const;

/**
 * Seed a small public region, idempotently: flavors, node images (public, owned by the admin
 * project) and the external network `public` with its subnet.
 */
export async function seedRegion(ctx: CloudContext, adminProjectId: string): Promise<void> {
  const repos = ctx.repos;
  const now = nowIso(ctx);
  for (const f of SEED_FLAVORS) {
    if (await repos.flavors.get('', f.id)) continue;
    await repos.flavors.create(
      '',
      f.id,
      {
        ...f,
        ephemeral: 0,
        swap: 0,
        rxtx_factor: 1,
        is_public: true,
        description: null,
        extra_specs: {},
        created_at: now,
      },
      { uid: null },
    );
  }

  const images = await repos.images.list({ project: adminProjectId });
  for (const img of SEED_IMAGES) {
    if (images.some((i) => i.rec.name === img.name)) continue;
    const id = newId();
    const rec: Image = {
      id,
      name: img.name,
      disk_format: 'qcow2',
      container_format: 'bare',
      visibility: 'public',
      protected: false,
      min_disk: img.minDisk,
      min_ram: 0,
      tags: [],
      properties: { ...img.properties, hw_rng_model: 'virtio' },
      owner: adminProjectId,
      status: 'active',
      size: img.size,
      virtual_size: null,
      checksum: null,
      os_hash_algo: null,
      os_hash_value: null,
      blob: null,
      created_at: now,
      updated_at: now,
    };
    await repos.images.create(adminProjectId, id, rec);
  }

  const nets = await repos.networks.list({ project: adminProjectId });
  if (nets.some((n) => n.rec.name === SEED_PUBLIC.network)) return;
  const netId = newId();
  const subnetId = newId();
  const cidr = parseCidr4(SEED_PUBLIC.cidr)!;
  const network: Network = {
    id: netId,
    tenant_id: adminProjectId,
    name: SEED_PUBLIC.network,
    description: '',
    tags: [],
    created_at: now,
    updated_at: now,
    revision_number: 2,
    admin_state_up: true,
    shared: false,
    external: true,
    is_default: true,
    mtu: 1500,
    port_security_enabled: true,
    subnets: [subnetId],
    status: 'ACTIVE',
    availability_zone_hints: [],
    network_type: 'flat',
    physical_network: 'public',
    segmentation_id: null,
    dns_domain: '',
  };
  const subnet: Subnet = {
    id: subnetId,
    tenant_id: adminProjectId,
    name: SEED_PUBLIC.subnet,
    description: '',
    tags: [],
    created_at: now,
    updated_at: now,
    revision_number: 0,
    network_id: netId,
    ip_version: 4,
    cidr: cidr.text,
    gateway_ip: SEED_PUBLIC.gateway,
    allocation_pools: defaultPools(cidr, parseIpv4(SEED_PUBLIC.gateway)),
    enable_dhcp: false,
    dns_nameservers: [],
    host_routes: [],
    service_types: [],
  };
  await ctx.store.commit([
    repos.networks.createOp(adminProjectId, netId, network),
    repos.subnets.createOp(adminProjectId, subnetId, subnet, { labels: { network_id: netId } }),
  ]);
}
