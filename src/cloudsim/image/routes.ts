import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { Blobs } from '../core/blobs.ts';
import { isoSeconds, nowIso, type CloudContext } from '../core/context.ts';
import { CloudHttpError } from '../core/errors.ts';
import { asText, callerOf, p, parseBool, q, qAll, type Caller, type ServiceRoutes } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import type { Image } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { canSeeImage } from './service.ts';

const DISK_FORMATS = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];
const CONTAINER_FORMATS = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];
const READ_ONLY = [
  'status',
  'size',
  'virtual_size',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'created_at',
  'updated_at',
  'self',
  'file',
  'schema',
  'direct_url',
  'locations',
];
const CORE = new Set([
  'id',
  'name',
  'disk_format',
  'container_format',
  'visibility',
  'protected',
  'min_disk',
  'min_ram',
  'tags',
  'owner',
  'os_hidden',
  ...READ_ONLY,
]);

/** Glance v2's image view: core attributes plus custom properties at the top level. */
export function imageView(row: Row<Image>): Record<string, unknown> {
  const i = row.rec;
  return {
    ...i.properties,
    name: i.name,
    disk_format: i.disk_format,
    container_format: i.container_format,
    visibility: i.visibility,
    size: i.size,
    virtual_size: i.virtual_size,
    status: i.status,
    checksum: i.checksum,
    protected: i.protected,
    min_ram: i.min_ram,
    min_disk: i.min_disk,
    owner: i.owner,
    os_hidden: false,
    os_hash_algo: i.os_hash_algo,
    os_hash_value: i.os_hash_value,
    id: i.id,
    created_at: isoSeconds(i.created_at),
    updated_at: isoSeconds(i.updated_at),
    tags: i.tags,
    self: `/v2/images/${i.id}`,
    file: `/v2/images/${i.id}/file`,
    schema: '/v2/schemas/image',
  };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No image found with ID ${id}`);
}

/** Apply one core or custom attribute, with Glance's checks. */
function setAttr(rec: Image, caller: Caller, key: string, value: unknown): void {
  if (READ_ONLY.includes(key) || key === 'id' || (key === 'owner' && !caller.isAdmin)) {
    throw new NotAllowedError(`Attribute '${key}' is read-only.`);
  }
  const bad = () => new InputError(`Invalid value '${asText(value)}' for parameter '${key}'`);
  switch (key) {
    case 'name':
      if (value !== null && (typeof value !== 'string' || value.length > 255)) throw bad();
      rec.name = value;
      return;
    case 'disk_format':
      if (value !== null && (typeof value !== 'string' || !DISK_FORMATS.includes(value)))
        throw new InputError(`Invalid disk format '${asText(value)}' for image.`);
      rec.disk_format = value;
      return;
    case 'container_format':
      if (value !== null && (typeof value !== 'string' || !CONTAINER_FORMATS.includes(value)))
        throw new InputError(`Invalid container format '${asText(value)}' for image.`);
      rec.container_format = value;
      return;
    case 'visibility':
      if (value !== 'public' && value !== 'private' && value !== 'shared' && value !== 'community')
        throw bad();
      if (value === 'public' && !caller.isAdmin)
        throw new NotAllowedError('You are not authorized to complete publicize_image action.');
      rec.visibility = value;
      return;
    case 'protected':
    case 'os_hidden':
      if (typeof value !== 'boolean') throw bad();
      if (key === 'protected') rec.protected = value;
      return;
    case 'min_disk':
    case 'min_ram':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw bad();
      rec[key] = value;
      return;
    case 'tags':
      if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) throw bad();
      rec.tags = [...new Set(value)];
      return;
    case 'owner':
      if (typeof value !== 'string') throw bad();
      rec.owner = value;
      return;
    default:
      if (typeof value !== 'string' && value !== null)
        throw new InputError(
          `Provided object does not match schema 'image': ${JSON.stringify(value)} is not of type 'string'`,
        );
      rec.properties = { ...rec.properties, [key]: value };
  }
}

/** Glance v2 routes. */
export function registerImageRoutes(r: ServiceRoutes, ctx: CloudContext): void {
  const repos = ctx.repos;
  const blobs = new Blobs(repos);

  async function load(req: FastifyRequest): Promise<{ caller: Caller; row: Row<Image> }> {
    const caller = callerOf(req);
    const row = await repos.images.find(p(req, 'id'));
    if (!row || !canSeeImage(caller, row)) throw notFound(p(req, 'id'));
    return { caller, row };
  }
  const mayEdit = (caller: Caller, row: Row<Image>) => {
    if (!caller.isAdmin && row.rec.owner !== caller.project)
      throw new NotAllowedError('You are not permitted to modify this image.');
  };

  r.get('/v2/images', 'images.list', async (req) => {
    const caller = callerOf(req);
    let rows = (await repos.images.list()).filter((i) => canSeeImage(caller, i));
    const visibility = q(req, 'visibility');
    if (visibility && visibility !== 'all') rows = rows.filter((i) => i.rec.visibility === visibility);
    else if (!visibility)
      rows = rows.filter((i) => i.rec.visibility !== 'community' || i.rec.owner === caller.project);
    const query = req.query as Record<string, string | string[]>;
    for (const key of Object.keys(query)) {
      const value = q(req, key)!;
      switch (key) {
        case 'limit':
        case 'marker':
        case 'sort_key':
        case 'sort_dir':
        case 'sort':
        case 'visibility':
        case 'member_status':
        case 'os_hidden':
          break;
        case 'tag': {
          const tags = qAll(req, 'tag');
          rows = rows.filter((i) => tags.every((t) => i.rec.tags.includes(t)));
          break;
        }
        case 'name':
          rows = rows.filter((i) =>
            value.startsWith('in:')
              ? value
                  .slice(3)
                  .split(',')
                  .includes(i.rec.name ?? '')
              : i.rec.name === value,
          );
          break;
        case 'status':
        case 'owner':
        case 'disk_format':
        case 'container_format':
          rows = rows.filter((i) => String(i.rec[key]) === value);
          break;
        case 'protected':
          rows = rows.filter((i) => i.rec.protected === parseBool(value));
          break;
        case 'size_min':
          rows = rows.filter((i) => (i.rec.size ?? 0) >= Number(value));
          break;
        case 'size_max':
          rows = rows.filter((i) => (i.rec.size ?? 0) <= Number(value));
          break;
        case 'id':
          rows = rows.filter((i) =>
            value.startsWith('in:') ? value.slice(3).split(',').includes(i.id) : i.id === value,
          );
          break;
        default:
          rows = rows.filter((i) => asText(i.rec.properties[key]) === value);
      }
    }
    let sortKey = q(req, 'sort_key') ?? 'created_at';
    let dir = q(req, 'sort_dir') ?? 'desc';
    const sort = q(req, 'sort');
    if (sort) {
      const [k, d] = sort.split(',')[0]!.split(':');
      sortKey = k ?? sortKey;
      dir = d ?? 'asc';
    }
    const val = (i: Image): string | number => {
      const v = sortKey === 'id' ? i.id : (i as Record<string, unknown>)[sortKey];
      return typeof v === 'number' ? v : asText(v);
    };
    const sign = dir === 'asc' ? 1 : -1;
    rows.sort((a, b) =>
      val(a.rec) < val(b.rec) ? -sign : val(a.rec) > val(b.rec) ? sign : a.id < b.id ? sign : -sign,
    );
    const marker = q(req, 'marker');
    if (marker !== undefined) {
      const i = rows.findIndex((x) => x.id === marker);
      if (i < 0) throw new InputError(`marker not found: ${marker}`);
      rows = rows.slice(i + 1);
    }
    const limitText = q(req, 'limit');
    const limit = Math.min(limitText !== undefined ? Number(limitText) : 25, 1000);
    if (!Number.isInteger(limit) || limit < 0) throw new InputError('limit param must be an integer');
    const body: Record<string, unknown> = {
      images: rows.slice(0, limit).map(imageView),
      first: '/v2/images',
      schema: '/v2/schemas/images',
    };
    if (rows.length > limit && limit > 0) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query))
        if (k !== 'marker') for (const x of Array.isArray(v) ? v : [v]) params.append(k, x);
      params.set('marker', rows[limit - 1]!.id);
      body.next = `/v2/images?${params.toString()}`;
    }
    return body;
  });

  r.get('/v2/images/:id', 'images.show', async (req) => imageView((await load(req)).row));

  r.post('/v2/images', 'images.create', async (req, reply) => {
    const caller = callerOf(req);
    const body = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new InputError('Request body must be a JSON object');
    const b = body as Record<string, unknown>;
    const id = typeof b.id === 'string' ? b.id : newId();
    if (
      typeof b.id === 'string' &&
      !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(b.id)
    )
      throw new InputError(`id: '${b.id}' is not a valid UUID`);
    if (await repos.images.find(id)) throw new ConflictError(`Image with identifier ${id} already exists!`);
    const now = nowIso(ctx);
    const rec: Image = {
      id,
      name: null,
      disk_format: null,
      container_format: null,
      visibility: 'shared',
      protected: false,
      min_disk: 0,
      min_ram: 0,
      tags: [],
      properties: {},
      owner: caller.project,
      status: 'queued',
      size: null,
      virtual_size: null,
      checksum: null,
      os_hash_algo: null,
      os_hash_value: null,
      blob: null,
      created_at: now,
      updated_at: now,
    };
    for (const [k, v] of Object.entries(b)) if (k !== 'id') setAttr(rec, caller, k, v);
    const row = await repos.images.create(rec.owner, id, rec);
    return reply.code(201).header('location', `/v2/images/${id}`).send(imageView(row));
  });

  r.patch('/v2/images/:id', 'images.update', async (req) => {
    const { caller, row } = await load(req);
    mayEdit(caller, row);
    const raw = req.body;
    const text = Buffer.isBuffer(raw)
      ? raw.toString('utf8')
      : typeof raw === 'string'
        ? raw
        : JSON.stringify(raw);
    const ct = String(req.headers['content-type'] ?? '');
    if (
      !ct.startsWith('application/openstack-images-v2.1-json-patch') &&
      !ct.startsWith('application/openstack-images-v2.0-json-patch')
    ) {
      throw new CloudHttpError(415, `Unsupported Content-Type`);
    }
    let ops: unknown;
    try {
      ops = JSON.parse(text);
    } catch {
      throw new InputError('Malformed JSON in request body.');
    }
    const parsed = z
      .array(
        z.object({
          op: z.enum(['add', 'replace', 'remove']),
          path: z.string(),
          value: z.unknown().optional(),
        }),
      )
      .safeParse(ops);
    if (!parsed.success) throw new InputError('Request body must be a JSON array of operation objects.');
    const next = await repos.images.mutate(row.project, row.id, (cur) => {
      const rec: Image = { ...cur.rec, properties: { ...cur.rec.properties }, updated_at: nowIso(ctx) };
      for (const op of parsed.data) {
        const key = op.path.replace(/^\//, '').replace(/~1/g, '/').replace(/~0/g, '~');
        if (op.op === 'remove') {
          if (CORE.has(key)) throw new NotAllowedError(`Attribute '${key}' is read-only.`);
          if (!(key in rec.properties)) throw new ConflictError(`Property ${key} does not exist.`);
          delete rec.properties[key];
        } else setAttr(rec, caller, key, op.value);
      }
      return rec;
    });
    return imageView(next);
  });

  r.delete('/v2/images/:id', 'images.delete', async (req, reply) => {
    const { caller, row } = await load(req);
    mayEdit(caller, row);
    if (row.rec.protected) throw new NotAllowedError(`Image ${row.id} is protected and cannot be deleted.`);
    await ctx.store.commit([
      ...(row.rec.blob ? await blobs.deleteOps(row.project, row.rec.blob) : []),
      repos.images.deleteOp(row),
    ]);
    return reply.code(204).send();
  });

  const upload = async (req: FastifyRequest, reply: FastifyReply) => {
    const { caller, row } = await load(req);
    mayEdit(caller, row);
    if (row.rec.status !== 'queued')
      throw new ConflictError(`Image status transition from ${row.rec.status} to saving is not allowed`);
    const data = Buffer.isBuffer(req.body)
      ? req.body
      : Buffer.from(typeof req.body === 'string' ? req.body : '');
    const { ref, ops } = blobs.writeOps(row.project, data);
    const rec: Image = {
      ...row.rec,
      status: 'active',
      size: data.length,
      virtual_size: null,
      checksum: createHash('md5').update(data).digest('hex'),
      os_hash_algo: 'sha512',
      os_hash_value: createHash('sha512').update(data).digest('hex'),
      blob: ref,
      updated_at: nowIso(ctx),
    };
    await ctx.store.commit([repos.images.updateOp(row, rec), ...ops]);
    return reply.code(204).send();
  };
  r.put('/v2/images/:id/file', 'images.upload', upload, 512 * 1024 * 1024);

  r.get('/v2/images/:id/file', 'images.download', async (req, reply) => {
    const { row } = await load(req);
    if (!row.rec.blob) return reply.code(204).send();
    const data = await blobs.read(row.project, row.rec.blob);
    return reply
      .code(200)
      .header('content-type', 'application/octet-stream')
      .header('content-md5', row.rec.checksum ?? '')
      .send(data);
  });

  r.put('/v2/images/:id/tags/:tag', 'images.tags.add', async (req, reply) => {
    const { caller, row } = await load(req);
    mayEdit(caller, row);
    await repos.images.mutate(row.project, row.id, (cur) =>
      cur.rec.tags.includes(p(req, 'tag'))
        ? undefined
        : { ...cur.rec, tags: [...cur.rec.tags, p(req, 'tag')], updated_at: nowIso(ctx) },
    );
    return reply.code(204).send();
  });
  r.delete('/v2/images/:id/tags/:tag', 'images.tags.remove', async (req, reply) => {
    const { caller, row } = await load(req);
    mayEdit(caller, row);
    if (!row.rec.tags.includes(p(req, 'tag'))) throw new NotFoundError(`Tag ${p(req, 'tag')} not found`);
    await repos.images.mutate(row.project, row.id, (cur) => ({
      ...cur.rec,
      tags: cur.rec.tags.filter((t) => t !== p(req, 'tag')),
      updated_at: nowIso(ctx),
    }));
    return reply.code(204).send();
  });
  r.get('/v2/images/:id/members', 'images.members.list', async (req) => {
    await load(req);
    return { members: [], schema: '/v2/schemas/members' };
  });

  r.get('/v2/schemas/image', 'schemas.image', async () => imageSchema());
  r.get('/v2/schemas/images', 'schemas.images', async () => ({
    name: 'images',
    properties: {
      images: { type: 'array', items: imageSchema() },
      schema: { type: 'string' },
      first: { type: 'string' },
      next: { type: 'string' },
    },
    links: [
      { rel: 'first', href: '{first}' },
      { rel: 'next', href: '{next}' },
      { rel: 'describedby', href: '{schema}' },
    ],
  }));
  r.get('/v2/info/import', 'info.import', async () => ({
    'import-methods': { description: 'Import methods available.', type: 'array', value: ['glance-direct'] },
  }));
  r.get('/v2/info/stores', 'info.stores', async () => ({
    stores: [{ id: 'file', default: true, description: 'Embedded cloud store' }],
  }));
}

function imageSchema() {
  const s = (type: unknown, extra: Record<string, unknown> = {}) => ({ type, ...extra });
  return {
    name: 'image',
    additionalProperties: { type: 'string' },
    properties: {
      id: s('string', {
        pattern: '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$',
      }),
      name: s(['null', 'string'], { maxLength: 255 }),
      visibility: s('string', { enum: ['community', 'public', 'private', 'shared'] }),
      protected: s('boolean'),
      os_hidden: s('boolean'),
      checksum: s(['null', 'string'], { readOnly: true }),
      os_hash_algo: s(['null', 'string'], { readOnly: true }),
      os_hash_value: s(['null', 'string'], { readOnly: true }),
      owner: s(['null', 'string']),
      size: s(['null', 'integer'], { readOnly: true }),
      virtual_size: s(['null', 'integer'], { readOnly: true }),
      container_format: s(['null', 'string'], { enum: [null, ...CONTAINER_FORMATS] }),
      disk_format: s(['null', 'string'], { enum: [null, ...DISK_FORMATS] }),
      created_at: s('string', { readOnly: true }),
      updated_at: s('string', { readOnly: true }),
      tags: s('array', { items: { type: 'string', maxLength: 255 } }),
      status: s('string', {
        readOnly: true,
        enum: [
          'queued',
          'saving',
          'active',
          'killed',
          'deleted',
          'uploading',
          'importing',
          'pending_delete',
          'deactivated',
        ],
      }),
      min_ram: s('integer'),
      min_disk: s('integer'),
      self: s('string', { readOnly: true }),
      file: s('string', { readOnly: true }),
      schema: s('string', { readOnly: true }),
      os_distro: s('string'),
      os_admin_user: s('string'),
      os_version: s('string'),
    },
    links: [
      { rel: 'self', href: '{self}' },
      { rel: 'enclosure', href: '{file}' },
      { rel: 'describedby', href: '{schema}' },
    ],
  };
}
