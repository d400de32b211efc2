import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ConflictError, InputError, NotAllowedError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import type { Caller } from '../core/http.ts';
import { USAGE_LABEL } from '../core/repos.ts';
import { newId, newPassword } from '../core/ids.ts';
import { minorOf } from '../core/microversion.ts';
import type { Flavor, Network, Server } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { findImage } from '../image/service.ts';
import { securityGroupLabels, type NetworkService } from '../network/index.ts';
import type { VolumeService } from '../volume/service.ts';
import { parseNovaBody } from './body.ts';
import { FLAVOR_NS } from './flavors.ts';
import { POWER, type ServerLifecycle } from './server-lifecycle.ts';

const NetworkReq = z.object({
  uuid: z.string().optional(),
  port: z.string().optional(),
  fixed_ip: z.string().optional(),
  tag: z.string().max(60).optional(),
});

const Bdm = z.object({
  boot_index: z
    .union([
      z.number().int(),
      z
        .string()
        .regex(/^-?\d+$/)
        .transform(Number),
    ])
    .nullable()
    .optional(),
  uuid: z.string().optional(),
  source_type: z.enum(['image', 'volume', 'snapshot', 'blank']).optional(),
  destination_type: z.enum(['volume', 'local']).optional(),
  volume_size: z
    .union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)])
    .nullable()
    .optional(),
  delete_on_termination: z.boolean().optional(),
  device_name: z.string().nullable().optional(),
  volume_type: z.string().nullable().optional(),
  tag: z.string().optional(),
});

const ServerCreate = z.object({
  name: z.string().min(1).max(255),
  flavorRef: z.union([z.string().min(1), z.number().int().transform(String)]),
  imageRef: z.string().optional(),
  networks: z.union([z.literal('auto'), z.literal('none'), z.array(NetworkReq)]).optional(),
  availability_zone: z.string().optional(),
  key_name: z.string().nullable().optional(),
  user_data: z.string().max(65535).nullable().optional(),
  metadata: z.record(z.string().min(1).max(255), z.string().max(255)).optional(),
  security_groups: z.array(z.object({ name: z.string() })).optional(),
  tags: z.array(z.string().min(1).max(60)).max(50).optional(),
  description: z.string().max(255).nullable().optional(),
  config_drive: z.union([z.boolean(), z.string()]).optional(),
  min_count: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]).optional(),
  max_count: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]).optional(),
  return_reservation_id: z.boolean().optional(),
  block_device_mapping_v2: z.array(Bdm).optional(),
  adminPass: z.string().optional(),
  accessIPv4: z.string().optional(),
  accessIPv6: z.string().optional(),
  'OS-DCF:diskConfig': z.enum(['AUTO', 'MANUAL']).optional(),
  hostname: z.string().optional(),
});

type CreateBody = z.infer<typeof ServerCreate>;

function refId(ref: string): string {
  const parts = ref.split('/');
  return parts[parts.length - 1] ?? ref;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Hosts of each availability zone (three per zone). */
export function hostFor(az: string, id: string): string {
  const n = (parseInt(id.replace(/-/g, '').slice(0, 8), 16) % 3) + 1;
  return `${az.toLowerCase()}-compute-${n}`;
}

/** What the server-create handler produces. */
export interface CreatedServer {
  row: Row<Server>;
  adminPass: string;
}

/**
 * Nova's server create: validation in the order Nova does it (body, flavor, image, key, zone,
 * networks, security groups, block devices, quota), then one atomic write of the server with
 * the ports and volumes it needs, and a scheduled BUILD → ACTIVE transition.
 */
export class ServerCreator {
  private rr = 0;

  constructor(
    private readonly ctx: CloudContext,
    private readonly net: NetworkService,
    private readonly vol: VolumeService,
    private readonly life: ServerLifecycle,
  ) {}

  async create(req: FastifyRequest, caller: Caller, body: unknown): Promise<CreatedServer> {
    const ctx = this.ctx;
    const minor = minorOf(req);
    const b = parseNovaBody(body, 'server', ServerCreate);
    if (minor >= 37 && b.networks === undefined) {
      throw new InputError(
        `Invalid input for field/attribute server. Value: ${JSON.stringify((body as Record<string, unknown>).server)}. 'networks' is a required property`,
      );
    }
    if (minor < 37 && (b.networks === 'auto' || b.networks === 'none')) {
      throw new InputError(
        `Invalid input for field/attribute networks. Value: ${b.networks}. '${b.networks}' is not of type 'array'`,
      );
    }
    if (b.tags && minor < 52)
      throw new InputError(
        `Invalid input for field/attribute server. Value: ${JSON.stringify(b)}. Additional properties are not allowed ('tags' was unexpected)`,
      );
    if (b.min_count !== undefined && b.max_count !== undefined && b.min_count > b.max_count)
      throw new InputError('min_count must be <= max_count');
    if ((b.min_count ?? 1) > 1 || (b.max_count ?? 1) > 1) {
      throw new InputError(
        'The embedded cloud creates one server per request (min_count/max_count > 1 is not supported)',
      );
    }
    if (b.user_data != null && !BASE64.test(b.user_data.replace(/\s/g, ''))) {
      throw new InputError(
        `Invalid input for field/attribute user_data. Value: ${b.user_data}. '${b.user_data}' is not a 'base64'`,
      );
    }

    const flavorId = refId(b.flavorRef);
    const flavor = await ctx.repos.flavors.get(FLAVOR_NS, flavorId);
    if (!flavor || (!flavor.rec.is_public && !caller.isAdmin))
      throw new InputError(`Flavor ${flavorId} could not be found.`);

    const bdms = b.block_device_mapping_v2 ?? [];
    const bootBdm = bdms.find((d) => Number(d.boot_index ?? -1) === 0);
    const bootFromVolume = bootBdm !== undefined && (bootBdm.destination_type ?? 'local') === 'volume';
    let imageId = '';
    const imageRef =
      b.imageRef ?? (bootBdm?.source_type === 'image' && !bootFromVolume ? bootBdm.uuid : undefined);
    if (!bootFromVolume) {
      if (!imageRef)
        throw new InputError(
          'Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.',
        );
      const image = await findImage(ctx, caller, refId(imageRef));
      if (!image) throw new InputError('Can not find requested image');
      if (image.rec.status !== 'active') throw new InputError(`Image ${image.id} is not active.`);
      if (image.rec.min_disk > flavor.rec.disk && flavor.rec.disk > 0) {
        throw new InputError(
          `Flavor's disk is too small for requested image. Flavor disk is ${flavor.rec.disk * 1073741824} bytes, image is ${image.rec.min_disk * 1073741824} bytes.`,
        );
      }
      if (image.rec.min_ram > flavor.rec.ram)
        throw new InputError(`Flavor's memory is too small for requested image.`);
      imageId = image.id;
    }

    let keyName: string | null = null;
    if (b.key_name) {
      const kp = await ctx.repos.keypairs.get(caller.userId, b.key_name);
      if (!kp) throw new InputError('Invalid key_name provided.');
      keyName = kp.rec.name;
    }

    let az: string;
    if (b.availability_zone) {
      const zone = b.availability_zone.split(':')[0]!;
      if (!ctx.availabilityZones.includes(zone))
        throw new InputError('The requested availability zone is not available');
      az = zone;
    } else {
      az = ctx.availabilityZones[this.rr++ % ctx.availabilityZones.length]!;
    }

    const metadata = b.metadata ?? {};
    const metaLimit = await ctx.quotas.limit(caller.project, 'compute', 'metadata_items');
    if (metaLimit >= 0 && Object.keys(metadata).length > metaLimit) {
      throw new NotAllowedError(
        `Quota exceeded for metadata_items: Requested ${Object.keys(metadata).length}, but already used 0 of ${metaLimit} metadata_items`,
      );
    }

    await this.checkQuota(caller.project, flavor.rec.vcpus, flavor.rec.ram);

    const fixedAddresses = Array.isArray(b.networks) && b.networks.some((n) => n.fixed_ip);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.build(caller, b, { flavor, imageId, keyName, az, metadata });
      } catch (err) {
        // a concurrent create took the same address: choose again (an asked-for address is final)
        if (!(err instanceof ConflictError && err.code === 'AlreadyExists') || fixedAddresses || attempt >= 5)
          throw err;
      }
    }
  }

  /** Resolve security groups, networks and block devices, then write the server with its ports and volumes atomically. */
  private async build(
    caller: Caller,
    b: CreateBody,
    r: {
      flavor: Row<Flavor>;
      imageId: string;
      keyName: string | null;
      az: string;
      metadata: Record<string, string>;
    },
  ): Promise<CreatedServer> {
    const ctx = this.ctx;
    const { flavor, imageId, keyName, az, metadata } = r;
    const id = newId();
    const sgNames = (b.security_groups ?? [{ name: 'default' }]).map((s) => s.name);
    const sgIds = await this.resolveSecurityGroups(caller, sgNames);
    const ops: WriteOp[] = [];
    const portRefs: Server['ports'] = [];
    for (const nr of await this.resolveNetworks(caller, b)) {
      if (nr.kind === 'port') {
        const port = nr.port;
        const rec = {
          ...port.rec,
          device_id: id,
          device_owner: `compute:${az}`,
          updated_at: nowIso(ctx),
          revision_number: port.rec.revision_number + 1,
        };
        ops.push(ctx.repos.ports.updateOp(port, rec));
        portRefs.push({
          port_id: port.id,
          network_id: port.rec.network_id,
          created_by_nova: false,
          tag: nr.tag ?? null,
        });
      } else {
        const prepared = await this.net.preparePort({
          project: caller.project,
          tenantId: caller.project,
          network: nr.network,
          deviceId: id,
          deviceOwner: `compute:${az}`,
          securityGroups: nr.network.rec.port_security_enabled ? sgIds : [],
          ...(nr.fixedIp ? { fixedIps: [{ ip_address: nr.fixedIp }] } : {}),
        });
        ops.push(...prepared.ops);
        portRefs.push({
          port_id: prepared.rec.id,
          network_id: nr.network.id,
          created_by_nova: true,
          tag: nr.tag ?? null,
        });
      }
    }

    const { volumeRefs, volumeOps, buildFailure } = await this.blockDevices(
      caller,
      b.block_device_mapping_v2 ?? [],
      az,
      id,
    );
    ops.push(...volumeOps);

    const injected = ctx.faults.takeErrorState('compute.servers.create');
    const now = nowIso(ctx);
    const adminPass = b.adminPass ?? newPassword();
    let rec: Server = {
      id,
      name: b.name,
      user_id: caller.userId,
      flavor: {
        id: flavor.rec.id,
        original_name: flavor.rec.name,
        vcpus: flavor.rec.vcpus,
        ram: flavor.rec.ram,
        disk: flavor.rec.disk,
        ephemeral: flavor.rec.ephemeral,
        swap: flavor.rec.swap,
        extra_specs: flavor.rec.extra_specs,
      },
      image_id: imageId,
      key_name: keyName,
      availability_zone: az,
      user_data: b.user_data ?? null,
      metadata,
      tags: [...new Set(b.tags ?? [])],
      description: b.description === undefined ? b.name : b.description,
      security_groups: portRefs.length > 0 ? sgNames : [],
      ports: portRefs,
      volumes: volumeRefs,
      config_drive:
        b.config_drive === true || b.config_drive === 'True' || b.config_drive === 'true' ? 'True' : '',
      hostname: (b.hostname ?? b.name)
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')
        .slice(0, 63),
      host: hostFor(az, id),
      instance_name: `instance-${id.slice(0, 8)}`,
      access_ipv4: b.accessIPv4 ?? '',
      access_ipv6: b.accessIPv6 ?? '',
      status: 'BUILD',
      vm_state: 'building',
      task_state: 'scheduling',
      power_state: POWER.NOSTATE,
      fault: null,
      launched_at: null,
      locked: false,
      locked_reason: null,
      progress: 0,
      admin_pass: adminPass,
      created_at: now,
      updated_at: now,
      transition: null,
    };
    rec = this.life.begin(rec, 'build', 1, buildFailure ?? injected);
    ops.unshift(ctx.repos.servers.createOp(caller.project, id, rec));
    await ctx.store.commit(ops);
    const row = (await ctx.repos.servers.get(caller.project, id))!;
    this.life.schedule(row);
    return { row, adminPass };
  }

  /** Nova's quota check for instances, cores and RAM (403 with Nova's message). */
  async checkQuota(project: string, cores: number, ram: number): Promise<void> {
    const limits = await this.ctx.quotas.limits(project, 'compute');
    const want: [string, number][] = [
      ['cores', cores],
      ['instances', 1],
      ['ram', ram],
    ];
    if (want.every(([k]) => (limits[k] ?? -1) < 0)) return;
    const used: Record<string, number> = await computeUsage(this.ctx, project);
    const overs = want.filter(([k, n]) => (limits[k] ?? -1) >= 0 && used[k]! + n > limits[k]!);
    if (overs.length === 0) return;
    const names = overs.map(([k]) => k).join(', ');
    throw new NotAllowedError(
      `Quota exceeded for ${names}: Requested ${overs.map(([, n]) => n).join(', ')}, but already used ${overs.map(([k]) => used[k]).join(', ')} of ${overs.map(([k]) => limits[k]).join(', ')} ${names}`,
      { code: 'QuotaExceeded' },
    );
  }

  private async resolveSecurityGroups(caller: Caller, names: string[]): Promise<string[]> {
    await this.net.ensureDefaultSecurityGroup(caller.project);
    const groups = this.ctx.repos.securityGroups;
    const ids: string[] = [];
    for (const name of names) {
      const byId = await groups.get(caller.project, name);
      if (byId) {
        ids.push(byId.id);
        continue;
      }
      // by name through the name label's index, then the exact name
      const matches = (
        await groups.list({ project: caller.project, labels: securityGroupLabels({ name }) })
      ).filter((g) => g.rec.name === name);
      if (matches.length === 0) throw new InputError(`Security group ${name} not found.`);
      if (matches.length > 1)
        throw new ConflictError(
          `Multiple security groups found matching '${name}'. Use an ID to be more specific.`,
        );
      ids.push(matches[0]!.id);
    }
    return [...new Set(ids)];
  }

  private async resolveNetworks(
    caller: Caller,
    b: CreateBody,
  ): Promise<
    (
      | { kind: 'network'; network: Row<Network>; fixedIp?: string; tag?: string }
      | { kind: 'port'; port: Row<import('../core/records.ts').Port>; tag?: string }
    )[]
  > {
    const ctx = this.ctx;
    const candidates = async () =>
      (await ctx.repos.networks.list()).filter(
        (n) =>
          !n.rec.external &&
          this.net.canUseNetwork(caller, n) &&
          (n.project === caller.project || n.rec.shared),
      );
    if (b.networks === 'none') return [];
    if (b.networks === 'auto' || b.networks === undefined) {
      const nets = await candidates();
      if (nets.length === 0) {
        if (b.networks === undefined) return [];
        throw new InputError(`Unable to automatically allocate a network for project ${caller.project}`);
      }
      if (nets.length > 1)
        throw new ConflictError(
          'More than one possible network found. Specify network ID(s) to select which one(s) to connect to.',
        );
      await this.requireSubnet(nets[0]!);
      return [{ kind: 'network', network: nets[0]! }];
    }
    const out: Awaited<ReturnType<ServerCreator['resolveNetworks']>> = [];
    for (const n of b.networks) {
      if (n.port) {
        const port = await ctx.repos.ports.find(n.port);
        if (!port || (!caller.isAdmin && port.rec.tenant_id !== caller.project))
          throw new InputError(`Port id ${n.port} could not be found.`);
        if (port.rec.device_id !== '') throw new ConflictError(`Port ${n.port} is still in use.`);
        if (port.rec.fixed_ips.length === 0)
          throw new InputError(`Port ${n.port} requires a FixedIP in order to be used.`);
        out.push({ kind: 'port', port, ...(n.tag ? { tag: n.tag } : {}) });
        continue;
      }
      if (!n.uuid) throw new InputError('Bad networks format: network uuid is not in proper format ()');
      const net = await ctx.repos.networks.find(n.uuid);
      if (!net || !this.net.canSeeNetwork(caller, net))
        throw new InputError(`Network ${n.uuid} could not be found.`);
      if (net.rec.external && !net.rec.shared && !caller.isAdmin) {
        throw new NotAllowedError(`It is not allowed to create an interface on external network ${net.id}`);
      }
      await this.requireSubnet(net);
      out.push({
        kind: 'network',
        network: net,
        ...(n.fixed_ip ? { fixedIp: n.fixed_ip } : {}),
        ...(n.tag ? { tag: n.tag } : {}),
      });
    }
    return out;
  }

  private async requireSubnet(net: Row<Network>): Promise<void> {
    if (net.rec.subnets.length === 0)
      throw new InputError(`Network ${net.id} requires a subnet in order to boot instances on.`);
  }

  /** Volumes of a server: boot volume from an image, existing volumes, blank volumes. */
  private async blockDevices(
    caller: Caller,
    bdms: z.infer<typeof Bdm>[],
    az: string,
    serverId: string,
  ): Promise<{ volumeRefs: Server['volumes']; volumeOps: WriteOp[]; buildFailure?: string }> {
    const ctx = this.ctx;
    const volumeRefs: Server['volumes'] = [];
    const volumeOps: WriteOp[] = [];
    const toCreate: {
      size: number;
      imageId: string | null;
      ref: Server['volumes'][number];
      volumeType: string | null;
    }[] = [];
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    let next = 0;
    const sorted = [...bdms].sort((a, b) => Number(a.boot_index ?? 99) - Number(b.boot_index ?? 99));
    for (const d of sorted) {
      const dest = d.destination_type ?? 'local';
      if (dest !== 'volume') continue;
      const boot = d.boot_index === undefined || d.boot_index === null ? null : Number(d.boot_index);
      const device = d.device_name ?? `/dev/vd${letters[next++] ?? 'z'}`;
      const source = d.source_type ?? 'blank';
      switch (source) {
        case 'volume': {
          if (!d.uuid) throw new InputError('Block Device Mapping is Invalid: failed to get volume .');
          const v = await ctx.repos.volumes.get(caller.project, d.uuid);
          if (!v) throw new InputError(`Block Device Mapping is Invalid: failed to get volume ${d.uuid}.`);
          if (v.rec.status !== 'available' && !(v.rec.multiattach && v.rec.status === 'in-use')) {
            throw new InputError(
              `Invalid volume: volume '${v.id}' status must be 'available'. Currently in '${v.rec.status}'`,
            );
          }
          if (boot === 0 && !v.rec.bootable) throw new InputError(`Block Device ${v.id} is not bootable.`);
          const ref = {
            volume_id: v.id,
            delete_on_termination: d.delete_on_termination ?? false,
            boot_index: boot,
            device,
            tag: d.tag ?? null,
          };
          volumeRefs.push(ref);
          volumeOps.push(
            ctx.repos.volumes.updateOp(v, { ...v.rec, status: 'attaching', updated_at: nowIso(ctx) }),
          );
          break;
        }
        case 'image': {
          if (!d.uuid) throw new InputError('Block Device Mapping is Invalid: failed to get image .');
          const image = await findImage(ctx, caller, d.uuid);
          if (!image) throw new InputError(`Block Device Mapping is Invalid: failed to get image ${d.uuid}.`);
          if (!d.volume_size)
            throw new InputError(
              `Images with destination_type 'volume' need to have a non-zero size specified`,
            );
          toCreate.push({
            size: d.volume_size,
            imageId: image.id,
            volumeType: d.volume_type ?? null,
            ref: {
              volume_id: '',
              delete_on_termination: d.delete_on_termination ?? false,
              boot_index: boot,
              device,
              tag: d.tag ?? null,
            },
          });
          break;
        }
        case 'blank':
          if (!d.volume_size) throw new InputError(`Blank volumes need a volume_size`);
          toCreate.push({
            size: d.volume_size,
            imageId: null,
            volumeType: d.volume_type ?? null,
            ref: {
              volume_id: '',
              delete_on_termination: d.delete_on_termination ?? false,
              boot_index: boot,
              device,
              tag: d.tag ?? null,
            },
          });
          break;
        case 'snapshot':
          throw new InputError(
            'Block Device Mapping is Invalid: volume snapshots are not supported by the embedded cloud.',
          );
      }
    }
    if (toCreate.length === 0) return { volumeRefs, volumeOps };
    try {
      await this.vol.checkQuota(
        caller.project,
        toCreate.length,
        toCreate.reduce((n, v) => n + v.size, 0),
      );
    } catch (err) {
      return {
        volumeRefs,
        volumeOps,
        buildFailure: `Build of instance ${serverId} aborted: ${(err as Error).message}`,
      };
    }
    for (const c of toCreate) {
      const image = c.imageId ? await ctx.repos.images.find(c.imageId) : undefined;
      const imageMetadata: Record<string, string> = {};
      if (image) {
        for (const [k, v] of Object.entries(image.rec.properties)) imageMetadata[k] = String(v);
        imageMetadata.image_id = image.id;
        imageMetadata.image_name = image.rec.name ?? '';
      }
      const rec = this.vol.newVolume({
        size: c.size,
        name: '',
        availabilityZone: az,
        imageId: c.imageId,
        imageMetadata,
        userId: caller.userId,
        status: 'attaching',
        ...(c.volumeType ? { volumeType: c.volumeType } : {}),
      });
      c.ref.volume_id = rec.id;
      volumeRefs.push(c.ref);
      volumeOps.push(ctx.repos.volumes.createOp(caller.project, rec.id, rec));
    }
    return { volumeRefs, volumeOps };
  }
}

/** Instances, cores and RAM a project's servers use. */
export async function computeUsage(
  ctx: CloudContext,
  project: string,
): Promise<{ instances: number; cores: number; ram: number }> {
  const servers = ctx.repos.servers;
  const [instances, sizes] = await Promise.all([
    servers.count(project),
    ctx.store.countByLabel(servers.type, project, USAGE_LABEL),
  ]);
  let cores = 0;
  let ram = 0;
  let counted = 0;
  for (const [size, n] of sizes) {
    const [c, r] = size.split(':').map(Number);
    cores += (c ?? 0) * n;
    ram += (r ?? 0) * n;
    counted += n;
  }
  if (counted === instances) return { instances, cores, ram };
  // servers stored before the label existed (or a write in between): read them all
  const rows = await servers.list({ project });
  return {
    instances: rows.length,
    cores: rows.reduce((n, x) => n + x.rec.flavor.vcpus, 0),
    ram: rows.reduce((n, x) => n + x.rec.flavor.ram, 0),
  };
}
