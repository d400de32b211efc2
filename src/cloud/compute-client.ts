import { z } from 'zod';
import type { Session } from './session.ts';
import { compact, one, seg, ServiceApi, single, tagsQuery, versionRoot, wire } from './service-api.ts';

/** Nova (compute v2.1): flavors, keypairs, servers, availability zones, limits. */

/**
 * Compute microversion sent on every call: 2.53 is what Cluster API's OpenStack provider
 * requires (server tags on create and in filters, keypair types, server faults).
 */
export const COMPUTE_MICROVERSION = '2.53';

export interface Flavor {
  id: string;
  name: string;
  vcpus: number;
  ramMb: number;
  diskGb: number;
  ephemeralGb: number;
  isPublic: boolean;
}

export interface Keypair {
  name: string;
  publicKey: string;
  fingerprint?: string;
  /** `ssh` or `x509`. */
  type?: string;
  /** Only in the answer to a create that generated the key. */
  privateKey?: string;
}

export interface ServerAddress {
  network: string;
  addr: string;
  version: number;
  /** `fixed` or `floating`. */
  type?: string;
  mac?: string;
}

/** Why a server is in ERROR, as Nova reports it. */
export interface ServerFault {
  code?: number;
  message: string;
  details?: string;
}

export interface Server {
  id: string;
  name: string;
  /** BUILD, ACTIVE, ERROR, SHUTOFF, DELETED, SOFT_DELETED, … */
  status: string;
  taskState?: string;
  vmState?: string;
  availabilityZone?: string;
  addresses: ServerAddress[];
  fault?: ServerFault;
  metadata: Record<string, string>;
  tags: string[];
  keyName?: string;
  flavor: { id?: string; name?: string };
  imageId?: string;
  hostId?: string;
  created?: string;
  updated?: string;
  /** Ids of attached volumes. */
  volumeIds: string[];
}

/** A `block_device_mapping_v2` entry. */
export interface BlockDeviceMapping {
  /** `image`, `volume`, `snapshot` or `blank`. */
  sourceType: string;
  /** `volume` or `local`. */
  destinationType: string;
  uuid?: string;
  /** 0 for the boot disk, -1 (or absent) for others. */
  bootIndex?: number;
  volumeSizeGb?: number;
  deleteOnTermination?: boolean;
  /** Needs compute microversion 2.67. */
  volumeType?: string;
}

/** How a server is wired to the network. */
export type ServerNetwork = { networkId: string; fixedIp?: string } | { portId: string };

export interface CreateServerInput {
  name: string;
  flavorId: string;
  /** Image to boot; leave out when booting from a volume. */
  imageId?: string;
  availabilityZone?: string;
  /** Ports or networks, or `none`/`auto`. */
  networks?: ServerNetwork[] | 'none' | 'auto';
  /** Security group names (ignored by Nova for `portId` networks: set them on the port). */
  securityGroups?: string[];
  /** Cloud-init user data, plain; base64-encoded by the client. */
  userData?: string | Buffer;
  metadata?: Record<string, string>;
  tags?: string[];
  keyName?: string;
  /** Boot-from-volume and extra disks. */
  blockDevices?: BlockDeviceMapping[];
  configDrive?: boolean;
  schedulerHints?: Record<string, unknown>;
  description?: string;
}

export interface ListServersFilter {
  /** Exact name (Nova filters by regular expression; this client anchors and escapes it). */
  name?: string;
  /** All of these tags. */
  tags?: string[];
  status?: string;
  /** Page size; the client follows every page. */
  limit?: number;
}

export interface AvailabilityZone {
  name: string;
  available: boolean;
}

export interface ComputeLimits {
  /** Nova's `absolute` limits as given (`maxTotalCores`, `totalCoresUsed`, …). */
  absolute: Record<string, number>;
  cores: { max: number; used: number };
  instances: { max: number; used: number };
  ramMb: { max: number; used: number };
}

/** The Nova calls provisioning needs. */
export interface ComputeClient {
  listFlavors(): Promise<Flavor[]>;
  getFlavor(id: string): Promise<Flavor>;
  /** A flavor by id or exact name. */
  findFlavor(nameOrId: string): Promise<Flavor | 'ambiguous' | undefined>;
  /** Create a keypair; without `publicKey` Nova generates one and returns the private key. */
  createKeypair(input: { name: string; publicKey?: string; type?: string }): Promise<Keypair>;
  getKeypair(name: string): Promise<Keypair>;
  listKeypairs(): Promise<Keypair[]>;
  deleteKeypair(name: string): Promise<void>;
  /** Start creating a server (status BUILD); poll {@link getServer} for the outcome. */
  createServer(input: CreateServerInput): Promise<{ id: string; adminPass?: string }>;
  /** Status, addresses and — in ERROR — the fault. */
  getServer(id: string): Promise<Server>;
  listServers(filter?: ListServersFilter): Promise<Server[]>;
  deleteServer(id: string): Promise<void>;
  listAvailabilityZones(): Promise<AvailabilityZone[]>;
  getLimits(): Promise<ComputeLimits>;
}

const FlavorWire = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    vcpus: z.number(),
    ram: z.number(),
    disk: z.number(),
    'OS-FLV-EXT-DATA:ephemeral': z.number().nullish(),
    'os-flavor-access:is_public': z.boolean().nullish(),
  })
  .transform((f): Flavor => ({
    id: f.id,
    name: f.name,
    vcpus: f.vcpus,
    ramMb: f.ram,
    diskGb: f.disk,
    ephemeralGb: f['OS-FLV-EXT-DATA:ephemeral'] ?? 0,
    isPublic: f['os-flavor-access:is_public'] ?? true,
  }));

const KeypairWire = z
  .looseObject({
    name: z.string(),
    public_key: z.string(),
    fingerprint: wire.optStr,
    type: wire.optStr,
    private_key: wire.optStr,
  })
  .transform(
    (k): Keypair =>
      compact({
        name: k.name,
        publicKey: k.public_key,
        fingerprint: k.fingerprint,
        type: k.type,
        privateKey: k.private_key,
      }) as Keypair,
  );

/** Nova lists keypairs as `{keypair: {...}}` entries. */
const KeypairEntryWire = z.object({ keypair: KeypairWire });

/** Nova's answer to a server create: the id (and a password when it generated one). */
const ServerCreatedWire = z.object({ server: z.looseObject({ id: z.string(), adminPass: wire.optStr }) });

const AddressWire = z.looseObject({
  addr: z.string(),
  version: z.number(),
  'OS-EXT-IPS:type': wire.optStr,
  'OS-EXT-IPS-MAC:mac_addr': wire.optStr,
});

const ServerWire = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    status: z.string(),
    'OS-EXT-STS:task_state': wire.optStr,
    'OS-EXT-STS:vm_state': wire.optStr,
    'OS-EXT-AZ:availability_zone': wire.optStr,
    addresses: z.record(z.string(), z.array(AddressWire)).nullish(),
    fault: z.looseObject({ code: z.number().nullish(), message: z.string(), details: wire.optStr }).nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    tags: wire.tags,
    key_name: wire.optStr,
    // Before 2.47 the flavor is {id, links}; from 2.47 it is embedded with original_name.
    flavor: z.looseObject({ id: wire.optStr, original_name: wire.optStr }).nullish(),
    // "" when booted from a volume.
    image: z.union([z.looseObject({ id: z.string() }), z.string()]).nullish(),
    hostId: wire.optStr,
    created: wire.optStr,
    updated: wire.optStr,
    'os-extended-volumes:volumes_attached': z.array(z.looseObject({ id: z.string() })).nullish(),
  })
  .transform((s): Server => {
    const addresses: ServerAddress[] = [];
    for (const [network, list] of Object.entries(s.addresses ?? {})) {
      for (const a of list) {
        addresses.push(
          compact({
            network,
            addr: a.addr,
            version: a.version,
            type: a['OS-EXT-IPS:type'],
            mac: a['OS-EXT-IPS-MAC:mac_addr'],
          }) as ServerAddress,
        );
      }
    }
    const server: Server = {
      id: s.id,
      name: s.name,
      status: s.status,
      addresses,
      metadata: s.metadata ?? {},
      tags: s.tags,
      flavor: compact({ id: s.flavor?.id, name: s.flavor?.original_name }),
      volumeIds: (s['os-extended-volumes:volumes_attached'] ?? []).map((v) => v.id),
    };
    if (s.fault)
      server.fault = compact({
        code: s.fault.code ?? undefined,
        message: s.fault.message,
        details: s.fault.details,
      }) as ServerFault;
    const optional = compact({
      taskState: s['OS-EXT-STS:task_state'],
      vmState: s['OS-EXT-STS:vm_state'],
      availabilityZone: s['OS-EXT-AZ:availability_zone'],
      keyName: s.key_name,
      imageId: typeof s.image === 'object' && s.image ? s.image.id : undefined,
      hostId: s.hostId,
      created: s.created,
      updated: s.updated,
    });
    return { ...server, ...optional };
  });

const LimitsWire = z.object({
  limits: z.looseObject({ absolute: z.record(z.string(), z.number().nullable()) }),
});

/** Escape a literal for Nova's regular-expression name filter and anchor it. */
export function exactNameRegex(name: string): string {
  return `^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/** Nova over a session. */
export class NovaComputeClient implements ComputeClient {
  private readonly api: ServiceApi;

  constructor(session: Session, options: { microversion?: string } = {}) {
    const mv = options.microversion ?? COMPUTE_MICROVERSION;
    this.api = new ServiceApi(session, {
      serviceType: 'compute',
      root: (endpoint) =>
        /\/v2(\.1)?(\/|$)/.test(new URL(endpoint).pathname) ? '' : versionRoot(endpoint, ['v2.1']),
      headers: { 'openstack-api-version': `compute ${mv}`, 'x-openstack-nova-api-version': mv },
    });
  }

  listFlavors(): Promise<Flavor[]> {
    return this.api.list(FlavorWire, '/flavors/detail', 'flavors', 'links');
  }

  async getFlavor(id: string): Promise<Flavor> {
    return this.api.call(one('flavor', FlavorWire), 'GET', `/flavors/${seg(id)}`);
  }

  async findFlavor(nameOrId: string): Promise<Flavor | 'ambiguous' | undefined> {
    return single(await this.listFlavors(), nameOrId, (f) => f.name);
  }

  async createKeypair(input: { name: string; publicKey?: string; type?: string }): Promise<Keypair> {
    const body = { keypair: compact({ name: input.name, public_key: input.publicKey, type: input.type }) };
    return this.api.call(one('keypair', KeypairWire), 'POST', '/os-keypairs', { body });
  }

  async getKeypair(name: string): Promise<Keypair> {
    return this.api.call(one('keypair', KeypairWire), 'GET', `/os-keypairs/${seg(name)}`);
  }

  async listKeypairs(): Promise<Keypair[]> {
    const wrapped = await this.api.list(KeypairEntryWire, '/os-keypairs', 'keypairs', 'links');
    return wrapped.map((w) => w.keypair);
  }

  async deleteKeypair(name: string): Promise<void> {
    await this.api.send('DELETE', `/os-keypairs/${seg(name)}`);
  }

  async createServer(input: CreateServerInput): Promise<{ id: string; adminPass?: string }> {
    const networks =
      input.networks === undefined || typeof input.networks === 'string'
        ? input.networks
        : input.networks.map((n) =>
            'portId' in n ? { port: n.portId } : compact({ uuid: n.networkId, fixed_ip: n.fixedIp }),
          );
    const userData =
      input.userData === undefined ? undefined : Buffer.from(input.userData).toString('base64');
    const server = compact({
      name: input.name,
      flavorRef: input.flavorId,
      imageRef: input.imageId ?? (input.blockDevices?.length ? '' : undefined),
      availability_zone: input.availabilityZone,
      networks,
      security_groups: input.securityGroups?.map((name) => ({ name })),
      user_data: userData,
      metadata: input.metadata,
      tags: input.tags,
      key_name: input.keyName,
      block_device_mapping_v2: input.blockDevices?.map((b) =>
        compact({
          source_type: b.sourceType,
          destination_type: b.destinationType,
          uuid: b.uuid,
          boot_index: b.bootIndex,
          volume_size: b.volumeSizeGb,
          delete_on_termination: b.deleteOnTermination,
          volume_type: b.volumeType,
        }),
      ),
      config_drive: input.configDrive,
      description: input.description,
    });
    const body = {
      server,
      ...(input.schedulerHints ? { 'OS-SCH-HNT:scheduler_hints': input.schedulerHints } : {}),
    };
    const res = await this.api.call(ServerCreatedWire, 'POST', '/servers', { body });
    return compact({ id: res.server.id, adminPass: res.server.adminPass }) as {
      id: string;
      adminPass?: string;
    };
  }

  async getServer(id: string): Promise<Server> {
    return this.api.call(one('server', ServerWire), 'GET', `/servers/${seg(id)}`);
  }

  async listServers(filter: ListServersFilter = {}): Promise<Server[]> {
    const servers = await this.api.list(ServerWire, '/servers/detail', 'servers', 'links', {
      name: filter.name === undefined ? undefined : exactNameRegex(filter.name),
      tags: tagsQuery(filter.tags),
      status: filter.status,
      limit: filter.limit,
    });
    // The regex filter is the server's business; the exact match is ours.
    return filter.name === undefined ? servers : servers.filter((s) => s.name === filter.name);
  }

  async deleteServer(id: string): Promise<void> {
    await this.api.send('DELETE', `/servers/${seg(id)}`);
  }

  async listAvailabilityZones(): Promise<AvailabilityZone[]> {
    const schema = z.object({
      availabilityZoneInfo: z.array(
        z.looseObject({
          zoneName: z.string(),
          zoneState: z.looseObject({ available: z.boolean() }).nullish(),
        }),
      ),
    });
    const res = await this.api.call(schema, 'GET', '/os-availability-zone');
    return res.availabilityZoneInfo.map((z) => ({
      name: z.zoneName,
      available: z.zoneState?.available ?? true,
    }));
  }

  async getLimits(): Promise<ComputeLimits> {
    const res = await this.api.call(LimitsWire, 'GET', '/limits');
    const absolute: Record<string, number> = {};
    for (const [k, v] of Object.entries(res.limits.absolute)) if (v !== null) absolute[k] = v;
    const pair = (max: string, used: string) => ({ max: absolute[max] ?? -1, used: absolute[used] ?? 0 });
    return {
      absolute,
      cores: pair('maxTotalCores', 'totalCoresUsed'),
      instances: pair('maxTotalInstances', 'totalInstancesUsed'),
      ramMb: pair('maxTotalRAMSize', 'totalRAMUsed'),
    };
  }
}
