import { z } from 'zod';
import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, parseBool, q, type ServiceRoutes } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import { minorOf } from '../core/microversion.ts';
import type { Flavor } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import type { FastifyRequest } from 'fastify';
import { parseNovaBody } from './body.ts';
import { novaLinks } from './links.ts';

/** Flavors are global: stored in namespace '' under their id. */
export const FLAVOR_NS = '';

export function flavorNotFound(id: string): NotFoundError {
  return new NotFoundError(`Flavor ${id} could not be found.`);
}

export function flavorView(req: FastifyRequest, row: Row<Flavor>, detail: boolean): Record<string, unknown> {
  const f = row.rec;
  const minor = minorOf(req);
  const base: Record<string, unknown> = { id: f.id, name: f.name, links: novaLinks(req, 'flavors', f.id) };
  if (minor >= 55) base.description = f.description;
  if (!detail) return base;
  return {
    ...base,
    ram: f.ram,
    disk: f.disk,
    vcpus: f.vcpus,
    swap: f.swap === 0 && minor < 75 ? '' : f.swap,
    'OS-FLV-EXT-DATA:ephemeral': f.ephemeral,
    'OS-FLV-DISABLED:disabled': false,
    'os-flavor-access:is_public': f.is_public,
    rxtx_factor: f.rxtx_factor,
    ...(minor >= 61 ? { extra_specs: f.extra_specs } : {}),
  };
}

const num = z.union([
  z.number(),
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number),
]);

const FlavorCreate = z.object({
  name: z.string().min(1).max(255),
  ram: num.pipe(z.number().int().min(1)),
  vcpus: num.pipe(z.number().int().min(1)),
  disk: num.pipe(z.number().int().min(0)),
  id: z.string().max(255).nullable().optional(),
  swap: num.pipe(z.number().int().min(0)).optional(),
  'OS-FLV-EXT-DATA:ephemeral': num.pipe(z.number().int().min(0)).optional(),
  rxtx_factor: num.optional(),
  'os-flavor-access:is_public': z.boolean().optional(),
  description: z.string().max(65535).nullable().optional(),
});

export function registerFlavorRoutes(r: ServiceRoutes, ctx: CloudContext): void {
  const repos = ctx.repos;

  async function visible(req: FastifyRequest): Promise<Row<Flavor>[]> {
    const caller = callerOf(req);
    let rows = await repos.flavors.list({ project: FLAVOR_NS });
    const isPublic = q(req, 'is_public');
    if (!caller.isAdmin || isPublic === undefined) rows = rows.filter((f) => f.rec.is_public);
    else if (isPublic.toLowerCase() !== 'none') {
      const want = parseBool(isPublic);
      if (want !== undefined) rows = rows.filter((f) => f.rec.is_public === want);
    }
    const minDisk = q(req, 'minDisk');
    const minRam = q(req, 'minRam');
    if (minDisk !== undefined) rows = rows.filter((f) => f.rec.disk >= Number(minDisk));
    if (minRam !== undefined) rows = rows.filter((f) => f.rec.ram >= Number(minRam));
    const key = q(req, 'sort_key') ?? 'flavorid';
    const dir = q(req, 'sort_dir') === 'desc' ? -1 : 1;
    const val = (f: Flavor): string | number => {
      switch (key) {
        case 'name':
          return f.name;
        case 'memory_mb':
          return f.ram;
        case 'vcpus':
          return f.vcpus;
        case 'root_gb':
          return f.disk;
        default:
          return /^\d+$/.test(f.id) ? Number(f.id) : f.id;
      }
    };
    rows.sort((a, b) => (val(a.rec) < val(b.rec) ? -dir : val(a.rec) > val(b.rec) ? dir : 0));
    const marker = q(req, 'marker');
    if (marker !== undefined) {
      const i = rows.findIndex((f) => f.rec.id === marker);
      if (i < 0) throw new InputError(`marker [${marker}] not found`);
      rows = rows.slice(i + 1);
    }
    const limit = q(req, 'limit');
    if (limit !== undefined) rows = rows.slice(0, Number(limit));
    return rows;
  }

  async function get(req: FastifyRequest): Promise<Row<Flavor>> {
    const id = p(req, 'id');
    const row = await repos.flavors.get(FLAVOR_NS, id);
    if (!row) throw flavorNotFound(id);
    if (!row.rec.is_public && !callerOf(req).isAdmin) throw flavorNotFound(id);
    return row;
  }

  const admin = (req: FastifyRequest, action: string) => {
    if (!callerOf(req).isAdmin)
      throw new NotAllowedError(
        `Policy doesn't allow os_compute_api:os-flavor-manage:${action} to be performed.`,
      );
  };

  r.get('/flavors', 'flavors.list', async (req) => ({
    flavors: (await visible(req)).map((f) => flavorView(req, f, false)),
  }));
  r.get('/flavors/detail', 'flavors.detail', async (req) => ({
    flavors: (await visible(req)).map((f) => flavorView(req, f, true)),
  }));
  r.get('/flavors/:id', 'flavors.show', async (req) => ({ flavor: flavorView(req, await get(req), true) }));

  r.post('/flavors', 'flavors.create', async (req) => {
    admin(req, 'create');
    const b = parseNovaBody(bodyOf(req), 'flavor', FlavorCreate);
    const id = b.id ?? newId();
    const all = await repos.flavors.list({ project: FLAVOR_NS });
    if (all.some((f) => f.rec.name === b.name))
      throw new ConflictError(`Flavor with name ${b.name} already exists.`);
    if (all.some((f) => f.rec.id === id)) throw new ConflictError(`Flavor with ID ${id} already exists.`);
    const rec: Flavor = {
      id,
      name: b.name,
      vcpus: b.vcpus,
      ram: b.ram,
      disk: b.disk,
      ephemeral: b['OS-FLV-EXT-DATA:ephemeral'] ?? 0,
      swap: b.swap ?? 0,
      rxtx_factor: b.rxtx_factor ?? 1,
      is_public: b['os-flavor-access:is_public'] ?? true,
      description: b.description ?? null,
      extra_specs: {},
      created_at: nowIso(ctx),
    };
    const row = await repos.flavors.create(FLAVOR_NS, id, rec, { uid: null });
    return { flavor: flavorView(req, row, true) };
  });

  r.delete('/flavors/:id', 'flavors.delete', async (req, reply) => {
    admin(req, 'delete');
    const row = await get(req);
    await repos.flavors.remove(row);
    return reply.code(202).send();
  });

  r.get('/flavors/:id/os-extra_specs', 'flavors.extra_specs.list', async (req) => ({
    extra_specs: (await get(req)).rec.extra_specs,
  }));
  r.get('/flavors/:id/os-extra_specs/:key', 'flavors.extra_specs.show', async (req) => {
    const row = await get(req);
    const key = p(req, 'key');
    const v = row.rec.extra_specs[key];
    if (v === undefined) throw new NotFoundError(`Flavor ${row.id} has no extra specs with key ${key}.`);
    return { [key]: v };
  });
  r.post('/flavors/:id/os-extra_specs', 'flavors.extra_specs.create', async (req) => {
    admin(req, 'update');
    const row = await get(req);
    const b = z
      .object({
        extra_specs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)),
      })
      .safeParse(bodyOf(req));
    if (!b.success)
      throw new InputError(
        `Invalid input for field/attribute extra_specs. Value: None. 'extra_specs' is a required property`,
      );
    const next = await repos.flavors.mutate(FLAVOR_NS, row.id, (cur) => ({
      ...cur.rec,
      extra_specs: { ...cur.rec.extra_specs, ...b.data.extra_specs },
    }));
    return { extra_specs: next.rec.extra_specs };
  });
  r.delete('/flavors/:id/os-extra_specs/:key', 'flavors.extra_specs.delete', async (req, reply) => {
    admin(req, 'update');
    const row = await get(req);
    const key = p(req, 'key');
    if (row.rec.extra_specs[key] === undefined)
      throw new NotFoundError(`Flavor ${row.id} has no extra specs with key ${key}.`);
    await repos.flavors.mutate(FLAVOR_NS, row.id, (cur) => {
      const specs = { ...cur.rec.extra_specs };
      delete specs[key];
      return { ...cur.rec, extra_specs: specs };
    });
    return reply.code(200).send();
  });
  r.get('/flavors/:id/os-flavor-access', 'flavors.access.list', async (req) => {
    const row = await get(req);
    if (row.rec.is_public) throw new NotFoundError('Access list not available for public flavors.');
    return { flavor_access: [] };
  });
}
