import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { dueAt, isoMicros, nowIso, type CloudContext } from '../core/context.ts';
import {
  asText,
  baseUrl,
  bodyOf,
  callerOf,
  p,
  parseBool,
  q,
  type Caller,
  type ServiceRoutes,
} from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import type { Volume } from '../core/records.ts';
import { retryOnConflict, type Row } from '../core/repo.ts';
import { parseNovaBody } from '../compute/body.ts';
import { findImage } from '../image/service.ts';
import { DEFAULT_VOLUME_TYPE, type VolumeService } from './service.ts';

const VolumeCreate = z.object({
  size: z
    .union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)])
    .nullable()
    .optional(),
  name: z.string().max(255).nullable().optional(),
  display_name: z.string().max(255).nullable().optional(),
  description: z.string().max(255).nullable().optional(),
  display_description: z.string().max(255).nullable().optional(),
  volume_type: z.string().nullable().optional(),
  availability_zone: z.string().nullable().optional(),
  imageRef: z.string().nullable().optional(),
  image_id: z.string().nullable().optional(),
  snapshot_id: z.string().nullable().optional(),
  source_volid: z.string().nullable().optional(),
  backup_id: z.string().nullable().optional(),
  consistencygroup_id: z.string().nullable().optional(),
  metadata: z.record(z.string().max(255), z.string().max(255)).nullable().optional(),
  multiattach: z.boolean().optional(),
});

const VolumeUpdate = z.object({
  name: z.string().max(255).nullable().optional(),
  display_name: z.string().max(255).nullable().optional(),
  description: z.string().max(255).nullable().optional(),
  display_description: z.string().max(255).nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
});

const DELETE_MESSAGE =
  'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.';

export function volumeLinks(req: FastifyRequest, project: string, id: string) {
  const base = `${baseUrl(req)}/cloud/volume`;
  return [
    { rel: 'self', href: `${base}/v3/${project}/volumes/${id}` },
    { rel: 'bookmark', href: `${base}/${project}/volumes/${id}` },
  ];
}

function volumeView(req: FastifyRequest, caller: Caller, row: Row<Volume>): Record<string, unknown> {
  const v = row.rec;
  const minor = minorOf(req);
  const out: Record<string, unknown> = {
    id: v.id,
    status: v.status,
    size: v.size,
    availability_zone: v.availability_zone,
    created_at: isoMicros(v.created_at),
    updated_at: v.updated_at ? isoMicros(v.updated_at) : null,
    name: v.name,
    description: v.description,
    volume_type: v.volume_type,
    snapshot_id: v.snapshot_id,
    source_volid: v.source_volid,
    metadata: v.metadata,
    links: volumeLinks(req, row.project, v.id),
    user_id: v.user_id,
    bootable: String(v.bootable),
    encrypted: false,
    replication_status: null,
    consistencygroup_id: null,
    multiattach: v.multiattach,
    attachments: v.attachments.map((a) => ({
      id: v.id,
      attachment_id: a.id,
      volume_id: v.id,
      server_id: a.server_id,
      host_name: null,
      device: a.device,
      attached_at: isoMicros(a.attached_at),
    })),
    'os-vol-tenant-attr:tenant_id': row.project,
  };
  if (Object.keys(v.image_metadata).length > 0) out.volume_image_metadata = v.image_metadata;
  if (caller.isAdmin) {
    out.migration_status = null;
    out['os-vol-host-attr:host'] = `cinder-volume@lvm#${v.availability_zone}`;
    out['os-vol-mig-status-attr:migstat'] = null;
    out['os-vol-mig-status-attr:name_id'] = null;
  }
  if (minor >= 13) out.group_id = null;
  if (minor >= 21 && caller.isAdmin) out.provider_id = null;
  if (minor >= 48) {
    out.shared_targets = false;
    out.service_uuid = null;
  }
  if (minor >= 61 && caller.isAdmin) out.cluster_name = null;
  if (minor >= 63) out.volume_type_id = DEFAULT_VOLUME_TYPE.id;
  if (minor >= 64) out.encryption_key_id = null;
  if (minor >= 65) out.consumes_quota = true;
  return out;
}

function typeView() {
  return {
    id: DEFAULT_VOLUME_TYPE.id,
    name: DEFAULT_VOLUME_TYPE.name,
    description: DEFAULT_VOLUME_TYPE.description,
    is_public: true,
    extra_specs: {},
    qos_specs_id: null,
    'os-volume-type-access:is_public': true,
  };
}

/** Cinder v3 routes under `/v3/{project_id}`. */
export function registerVolumeRoutes(r: ServiceRoutes, ctx: CloudContext, svc: VolumeService): void {
  const repos = ctx.repos;

  ctx.transitions.register(repos.volumes, (project, id) =>
    retryOnConflict(async () => {
      const row = await repos.volumes.get(project, id);
      const t = row?.rec.transition;
      if (!row || !t || t.at > ctx.clock.now()) return;
      switch (t.action) {
        case 'delete':
          await repos.volumes.remove(row);
          return;
        case 'create':
          await repos.volumes.update(row, {
            ...row.rec,
            status: t.detail !== undefined ? 'error' : 'available',
            transition: null,
            updated_at: nowIso(ctx),
          });
          return;
        default:
          await repos.volumes.update(row, {
            ...row.rec,
            status: row.rec.attachments.length > 0 ? 'in-use' : 'available',
            transition: null,
            updated_at: nowIso(ctx),
          });
      }
    }),
  );

  /** The project in the URL must be the token's (admins may name another). */
  function projectOf(req: FastifyRequest): { caller: Caller; project: string } {
    const caller = callerOf(req);
    const project = p(req, 'project');
    if (project !== caller.project && !caller.isAdmin) {
      throw new NotAllowedError(`Policy doesn't allow volume:get_all to be performed.`);
    }
    return { caller, project };
  }

  async function load(req: FastifyRequest): Promise<{ caller: Caller; project: string; row: Row<Volume> }> {
    const { caller, project } = projectOf(req);
    let row: Row<Volume> | undefined = await svc.get(caller, project, p(req, 'id'));
    row = await ctx.transitions.settle(repos.volumes, row);
    if (!row)
      throw new NotFoundError(`Volume ${p(req, 'id')} could not be found.`, { code: 'VolumeNotFound' });
    return { caller, project, row };
  }

  async function list(req: FastifyRequest): Promise<Row<Volume>[]> {
    const { caller, project } = projectOf(req);
    const all = caller.isAdmin && parseBool(q(req, 'all_tenants') ?? 'false') === true;
    const filterProject = caller.isAdmin ? q(req, 'project_id') : undefined;
    let rows = await repos.volumes.list(all && !filterProject ? {} : { project: filterProject ?? project });
    rows = await ctx.transitions.settleAll(repos.volumes, rows);
    const name = q(req, 'name');
    if (name !== undefined) rows = rows.filter((v) => v.rec.name === name);
    const status = q(req, 'status');
    if (status !== undefined) rows = rows.filter((v) => v.rec.status === status);
    const bootable = q(req, 'bootable');
    if (bootable !== undefined) rows = rows.filter((v) => v.rec.bootable === parseBool(bootable));
    const az = q(req, 'availability_zone');
    if (az !== undefined) rows = rows.filter((v) => v.rec.availability_zone === az);
    rows.sort((a, b) =>
      a.rec.created_at < b.rec.created_at
        ? 1
        : a.rec.created_at > b.rec.created_at
          ? -1
          : a.id < b.id
            ? 1
            : -1,
    );
    const marker = q(req, 'marker');
    if (marker !== undefined) {
      const i = rows.findIndex((v) => v.id === marker);
      if (i < 0) throw new NotFoundError(`Marker ${marker} could not be found.`);
      rows = rows.slice(i + 1);
    }
    const limit = q(req, 'limit');
    if (limit !== undefined) {
      const n = Number(limit);
      if (!Number.isInteger(n) || n < 0)
        throw new InputError('Invalid input received: limit param must be an integer');
      rows = rows.slice(0, n);
    }
    return rows;
  }

  r.get('/v3/:project/volumes', 'volumes.list', async (req) => ({
    volumes: (await list(req)).map((v) => ({
      id: v.id,
      name: v.rec.name,
      links: volumeLinks(req, v.project, v.id),
    })),
  }));

  r.get('/v3/:project/volumes/detail', 'volumes.detail', async (req) => {
    const caller = callerOf(req);
    return { volumes: (await list(req)).map((v) => volumeView(req, caller, v)) };
  });

  r.get('/v3/:project/volumes/:id', 'volumes.show', async (req) => {
    const { caller, row } = await load(req);
    return { volume: volumeView(req, caller, row) };
  });

  r.post('/v3/:project/volumes', 'volumes.create', async (req, reply) => {
    const { caller, project } = projectOf(req);
    const b = parseNovaBody(bodyOf(req), 'volume', VolumeCreate);
    const imageRef = b.imageRef ?? b.image_id ?? null;
    let size = b.size ?? null;
    let imageMetadata: Record<string, string> = {};
    if (b.snapshot_id) throw new NotFoundError(`Snapshot ${b.snapshot_id} could not be found.`);
    if (b.backup_id) throw new NotFoundError(`Backup ${b.backup_id} could not be found.`);
    let source: Row<Volume> | undefined;
    if (b.source_volid) {
      source = await repos.volumes.get(project, b.source_volid);
      if (!source) throw new NotFoundError(`Volume ${b.source_volid} could not be found.`);
      size ??= source.rec.size;
      if (size < source.rec.size)
        throw new InputError(
          `Invalid input received: Volume size '${size}' must be an integer and greater than 0 and not less than source volume size ${source.rec.size}`,
        );
    }
    if (imageRef) {
      const image = await findImage(ctx, caller, imageRef);
      if (!image) throw new InputError(`Invalid image identifier or unable to access requested image.`);
      const minGb = Math.max(image.rec.min_disk, Math.ceil((image.rec.size ?? 0) / 1073741824));
      size ??= minGb;
      if (size < minGb)
        throw new InputError(
          `Invalid input received: Size of specified image ${minGb}GB is larger than volume size ${size}GB.`,
        );
      imageMetadata = Object.fromEntries(
        Object.entries(image.rec.properties).map(([k, v]) => [k, String(v)]),
      );
      Object.assign(imageMetadata, {
        image_id: image.id,
        image_name: image.rec.name ?? '',
        container_format: image.rec.container_format ?? '',
        disk_format: image.rec.disk_format ?? '',
        min_disk: String(image.rec.min_disk),
        min_ram: String(image.rec.min_ram),
        size: String(image.rec.size ?? 0),
      });
    }
    if (size === null || size === undefined || size < 1) {
      throw new InputError(
        `Invalid input received: Volume size '${b.size ?? 'None'}' must be an integer and greater than 0.`,
      );
    }
    if (
      b.volume_type &&
      b.volume_type !== DEFAULT_VOLUME_TYPE.name &&
      b.volume_type !== DEFAULT_VOLUME_TYPE.id
    ) {
      throw new NotFoundError(`Volume type with name ${b.volume_type} could not be found.`);
    }
    const az = b.availability_zone ?? ctx.availabilityZones[0]!;
    if (!ctx.availabilityZones.includes(az) && az !== 'nova')
      throw new InputError(`Invalid availability zone: ${az}.`);
    await svc.checkQuota(project, 1, size);
    const injected = ctx.faults.takeErrorState('volume.volumes.create');
    const rec = svc.newVolume({
      size,
      name: b.name ?? b.display_name ?? null,
      description: b.description ?? b.display_description ?? null,
      availabilityZone: az,
      imageId: imageRef,
      imageMetadata,
      metadata: b.metadata ?? {},
      multiattach: b.multiattach ?? false,
      sourceVolid: source?.id ?? null,
      userId: caller.userId,
    });
    if (source) rec.bootable = source.rec.bootable;
    rec.transition = {
      action: 'create',
      at: dueAt(ctx),
      ...(injected !== undefined ? { detail: injected } : {}),
    };
    const row = await repos.volumes.create(project, rec.id, rec);
    ctx.transitions.schedule('Volume', project, rec.id, rec.transition.at);
    void reply.code(202);
    return { volume: volumeView(req, caller, row) };
  });

  r.put('/v3/:project/volumes/:id', 'volumes.update', async (req) => {
    const { caller, row } = await load(req);
    const b = parseNovaBody(bodyOf(req), 'volume', VolumeUpdate);
    const next = await repos.volumes.mutate(row.project, row.id, (cur) => ({
      ...cur.rec,
      ...(b.name !== undefined || b.display_name !== undefined
        ? { name: b.name ?? b.display_name ?? null }
        : {}),
      ...(b.description !== undefined || b.display_description !== undefined
        ? { description: b.description ?? b.display_description ?? null }
        : {}),
      ...(b.metadata !== undefined ? { metadata: b.metadata ?? {} } : {}),
      updated_at: nowIso(ctx),
    }));
    return { volume: volumeView(req, caller, next) };
  });

  r.delete('/v3/:project/volumes/:id', 'volumes.delete', async (req, reply) => {
    const { caller, row } = await load(req);
    const force = caller.isAdmin && parseBool(q(req, 'force') ?? 'false') === true;
    const ok = ['available', 'error', 'error_restoring', 'error_extending', 'error_managing'].includes(
      row.rec.status,
    );
    if (!force && (!ok || row.rec.attachments.length > 0))
      throw new InputError(DELETE_MESSAGE, { code: 'InvalidVolume' });
    if (row.rec.transition?.action !== 'delete') {
      const at = dueAt(ctx, 0.5);
      await repos.volumes.mutate(row.project, row.id, (cur) => ({
        ...cur.rec,
        status: 'deleting',
        transition: { action: 'delete', at },
        updated_at: nowIso(ctx),
      }));
      ctx.transitions.schedule('Volume', row.project, row.id, at);
    }
    return reply.code(202).send();
  });

  r.post('/v3/:project/volumes/:id/action', 'volumes.action', async (req, reply) => {
    const { caller, row } = await load(req);
    const body = bodyOf(req) as Record<string, unknown>;
    const action = Object.keys(body)[0] ?? '';
    const arg = (body[action] ?? {}) as Record<string, unknown>;
    switch (action) {
      case 'os-extend': {
        const size = Number(arg.new_size);
        if (!Number.isInteger(size) || size <= row.rec.size) {
          throw new InputError(
            `Invalid input received: New size for extend must be greater than current size. (current: ${row.rec.size}, extended: ${String(arg.new_size)}).`,
          );
        }
        if (row.rec.status !== 'available' && !(row.rec.status === 'in-use' && minorOf(req) >= 42)) {
          throw new InputError(
            `Invalid volume: Volume ${row.id} status must be 'available' or 'in-use' to extend. Current status is ${row.rec.status}.`,
            { code: 'InvalidVolume' },
          );
        }
        await svc.checkQuota(row.project, 0, size - row.rec.size);
        const at = dueAt(ctx, 0.5);
        await repos.volumes.mutate(row.project, row.id, (cur) => ({
          ...cur.rec,
          size,
          status: 'extending',
          transition: { action: 'extend', at },
          updated_at: nowIso(ctx),
        }));
        ctx.transitions.schedule('Volume', row.project, row.id, at);
        return reply.code(202).send();
      }
      case 'os-set_bootable': {
        const bootable = arg.bootable === true || parseBool(String(arg.bootable)) === true;
        await repos.volumes.mutate(row.project, row.id, (cur) => ({
          ...cur.rec,
          bootable,
          updated_at: nowIso(ctx),
        }));
        return reply.code(200).send();
      }
      case 'os-reset_status': {
        if (!caller.isAdmin)
          throw new NotAllowedError(
            `Policy doesn't allow volume_extension:volume_admin_actions:reset_status to be performed.`,
          );
        const status = asText(arg.status);
        if (!status) throw new InputError('Must specify a status to reset to.');
        await repos.volumes.mutate(row.project, row.id, (cur) => ({
          ...cur.rec,
          status,
          transition: null,
          updated_at: nowIso(ctx),
        }));
        return reply.code(202).send();
      }
      case 'os-force_delete': {
        if (!caller.isAdmin)
          throw new NotAllowedError(
            `Policy doesn't allow volume_extension:volume_admin_actions:force_delete to be performed.`,
          );
        await repos.volumes.remove(row);
        return reply.code(202).send();
      }
      case 'os-update_readonly_flag':
        return reply.code(202).send();
      default:
        throw new InputError(`There is no such action: ${action}`);
    }
  });

  // --- metadata ---
  r.get('/v3/:project/volumes/:id/metadata', 'volumes.metadata.list', async (req) => ({
    metadata: (await load(req)).row.rec.metadata,
  }));
  r.post('/v3/:project/volumes/:id/metadata', 'volumes.metadata.update', async (req) => {
    const { row } = await load(req);
    const metadata = parseNovaBody(bodyOf(req), 'metadata', z.record(z.string(), z.string()));
    const next = await repos.volumes.mutate(row.project, row.id, (cur) => ({
      ...cur.rec,
      metadata: { ...cur.rec.metadata, ...metadata },
      updated_at: nowIso(ctx),
    }));
    return { metadata: next.rec.metadata };
  });

  // --- types, zones, limits, quotas, empty collections ---
  r.get('/v3/:project/types', 'types.list', async (req) => {
    projectOf(req);
    return { volume_types: [typeView()] };
  });
  r.get('/v3/:project/types/default', 'types.default', async (req) => {
    projectOf(req);
    return { volume_type: typeView() };
  });
  r.get('/v3/:project/types/:id', 'types.show', async (req) => {
    projectOf(req);
    const id = p(req, 'id');
    if (id !== DEFAULT_VOLUME_TYPE.id && id !== DEFAULT_VOLUME_TYPE.name)
      throw new NotFoundError(`Volume type ${id} could not be found.`);
    return { volume_type: typeView() };
  });
  r.get('/v3/:project/os-availability-zone', 'availability_zones.list', async (req) => {
    projectOf(req);
    return {
      availabilityZoneInfo: ctx.availabilityZones.map((zoneName) => ({
        zoneName,
        zoneState: { available: true },
      })),
    };
  });
  for (const c of ['snapshots', 'backups', 'groups', 'attachments']) {
    r.get(`/v3/:project/${c}`, `${c}.list`, async (req) => {
      projectOf(req);
      return { [c]: [] };
    });
    r.get(`/v3/:project/${c}/detail`, `${c}.detail`, async (req) => {
      projectOf(req);
      return { [c]: [] };
    });
  }

  r.get('/v3/:project/limits', 'limits.show', async (req) => {
    const { project } = projectOf(req);
    const l = await ctx.quotas.limits(project, 'volume');
    const u = await svc.usage(project);
    return {
      limits: {
        rate: [],
        absolute: {
          totalSnapshotsUsed: 0,
          maxTotalBackups: l.backups ?? -1,
          maxTotalVolumeGigabytes: l.gigabytes ?? -1,
          maxTotalSnapshots: l.snapshots ?? -1,
          maxTotalBackupGigabytes: l.backup_gigabytes ?? -1,
          totalBackupGigabytesUsed: 0,
          maxTotalVolumes: l.volumes ?? -1,
          totalVolumesUsed: u.volumes,
          totalBackupsUsed: 0,
          totalGigabytesUsed: u.gigabytes,
        },
      },
    };
  });

  const quotaAccess = (caller: Caller, project: string) => {
    if (!caller.isAdmin && project !== caller.project)
      throw new NotAllowedError(`Policy doesn't allow volume_extension:quotas:show to be performed.`);
  };

  r.get('/v3/:project/os-quota-sets/:target', 'quota_sets.show', async (req) => {
    const { caller } = projectOf(req);
    const target = p(req, 'target');
    quotaAccess(caller, target);
    const limits = await ctx.quotas.limits(target, 'volume');
    const typed = {
      [`volumes_${DEFAULT_VOLUME_TYPE.name}`]: -1,
      [`gigabytes_${DEFAULT_VOLUME_TYPE.name}`]: -1,
      [`snapshots_${DEFAULT_VOLUME_TYPE.name}`]: -1,
    };
    if (parseBool(q(req, 'usage') ?? 'false') === true) {
      const u = await svc.usage(target);
      const used: Record<string, number> = { volumes: u.volumes, gigabytes: u.gigabytes };
      const detail = Object.fromEntries(
        Object.entries({ ...limits, ...typed }).map(([k, limit]) => [
          k,
          { limit, in_use: used[k] ?? 0, reserved: 0, allocated: 0 },
        ]),
      );
      return { quota_set: { id: target, ...detail } };
    }
    return { quota_set: { id: target, ...limits, ...typed } };
  });
  r.get('/v3/:project/os-quota-sets/:target/defaults', 'quota_sets.defaults', async (req) => {
    projectOf(req);
    return { quota_set: { id: p(req, 'target'), ...ctx.quotas.defaultsOf('volume') } };
  });
  r.put('/v3/:project/os-quota-sets/:target', 'quota_sets.update', async (req) => {
    const { caller } = projectOf(req);
    if (!caller.isAdmin)
      throw new NotAllowedError(`Policy doesn't allow volume_extension:quotas:update to be performed.`);
    const b = parseNovaBody(
      bodyOf(req),
      'quota_set',
      z.record(
        z.string(),
        z.union([
          z.number().int(),
          z
            .string()
            .regex(/^-?\d+$/)
            .transform(Number),
        ]),
      ),
    );
    for (const [k, v] of Object.entries(b)) {
      if (!(k in ctx.quotas.defaultsOf('volume'))) throw new InputError(`Bad key(s) in quota set: ${k}`);
      if (v < -1)
        throw new InputError(`Invalid input received: Quota limit ${v} for ${k} must be -1 or greater.`);
    }
    return { quota_set: await ctx.quotas.set(p(req, 'target'), 'volume', b) };
  });
  r.delete('/v3/:project/os-quota-sets/:target', 'quota_sets.delete', async (req, reply) => {
    const { caller } = projectOf(req);
    if (!caller.isAdmin)
      throw new NotAllowedError(`Policy doesn't allow volume_extension:quotas:delete to be performed.`);
    await ctx.quotas.reset(p(req, 'target'), 'volume');
    return reply.code(200).send();
  });
}
