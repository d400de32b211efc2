import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ConflictError, InputError, NotFoundError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import {
  baseUrl,
  bodyOf,
  callerOf,
  p,
  parseBool,
  q,
  qAll,
  type Caller,
  type ServiceRoutes,
} from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import type { Server } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { parseNovaBody } from './body.ts';
import type { ServerCreator } from './server-create.ts';
import type { ServerLifecycle } from './server-lifecycle.ts';
import { serverBrief, serverView } from './server-view.ts';
import { novaLinks } from './links.ts';

export function serverNotFound(id: string): NotFoundError {
  return new NotFoundError(`Instance ${id} could not be found.`);
}

/** Find a server as the caller may see it (admins: any project), applying a due transition first. */
export async function loadServer(ctx: CloudContext, caller: Caller, id: string): Promise<Row<Server>> {
  let row = caller.isAdmin
    ? await ctx.repos.servers.find(id)
    : await ctx.repos.servers.get(caller.project, id);
  if (row) row = await ctx.transitions.settle(ctx.repos.servers, row);
  if (!row) throw serverNotFound(id);
  return row;
}

function invalidState(id: string, attr: string, state: string, method: string): ConflictError {
  return new ConflictError(`Cannot '${method}' instance ${id} while it is in ${attr} ${state}`);
}

const ServerUpdate = z.object({
  name: z.string().min(1).max(255).optional(),
  description: z.string().max(255).nullable().optional(),
  accessIPv4: z.string().optional(),
  accessIPv6: z.string().optional(),
  hostname: z.string().optional(),
  'OS-DCF:diskConfig': z.string().optional(),
});

function tagList(req: FastifyRequest, name: string): string[] {
  return qAll(req, name)
    .flatMap((s) => s.split(','))
    .filter((s) => s !== '');
}

export function registerServerRoutes(
  r: ServiceRoutes,
  ctx: CloudContext,
  creator: ServerCreator,
  life: ServerLifecycle,
): void {
  const repos = ctx.repos;

  async function listServers(req: FastifyRequest): Promise<Row<Server>[]> {
    const caller = callerOf(req);
    const allTenants =
      caller.isAdmin &&
      q(req, 'all_tenants') !== undefined &&
      parseBool(q(req, 'all_tenants') || 'true') !== false;
    const projectFilter = caller.isAdmin ? (q(req, 'project_id') ?? q(req, 'tenant_id')) : undefined;
    // `^literal$` (how clients ask for one exact name) reads through the name label's index.
    const exact = /^\^((?:[A-Za-z0-9_-]|\\\.){1,63})\$$/.exec(q(req, 'name') ?? '');
    const labels = exact ? { name: exact[1]!.replace(/\\\./g, '.') } : undefined;
    let rows =
      allTenants || projectFilter
        ? await repos.servers.list({ ...(projectFilter ? { project: projectFilter } : {}), labels })
        : await repos.servers.list({ project: caller.project, labels });
    // Names do not change as servers settle: filter first, so only the matches are settled.
    const name = q(req, 'name');
    if (name !== undefined) {
      let re: RegExp;
      try {
        re = new RegExp(name);
      } catch {
        re = new RegExp(name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      }
      rows = rows.filter((s) => re.test(s.rec.name));
    }
    rows = await ctx.transitions.settleAll(repos.servers, rows);
    const status = q(req, 'status');
    if (status !== undefined) rows = rows.filter((s) => s.rec.status === status.toUpperCase());
    const image = q(req, 'image');
    if (image !== undefined) rows = rows.filter((s) => s.rec.image_id === image.split('/').pop());
    const flavor = q(req, 'flavor');
    if (flavor !== undefined) rows = rows.filter((s) => s.rec.flavor.id === flavor.split('/').pop());
    const az = q(req, 'availability_zone');
    if (az !== undefined && (caller.isAdmin || minorOf(req) >= 83))
      rows = rows.filter((s) => s.rec.availability_zone === az);
    const keyName = q(req, 'key_name');
    if (keyName !== undefined && (caller.isAdmin || minorOf(req) >= 83))
      rows = rows.filter((s) => s.rec.key_name === keyName);
    const since = q(req, 'changes-since');
    if (since !== undefined) {
      const t = Date.parse(since);
      if (Number.isNaN(t))
        throw new InputError(
          `Invalid input for field/attribute changes-since. Value: ${since}. '${since}' is not a 'date-time'`,
        );
      rows = rows.filter((s) => Date.parse(s.rec.updated_at) >= t);
    }
    const ip = q(req, 'ip');
    if (ip !== undefined) {
      const re = new RegExp(ip);
      const keep: Row<Server>[] = [];
      for (const s of rows) {
        for (const ref of s.rec.ports) {
          const port = await repos.ports.find(ref.port_id);
          if (port?.rec.fixed_ips.some((f) => re.test(f.ip_address))) {
            keep.push(s);
            break;
          }
        }
      }
      rows = keep;
    }
    const all = tagList(req, 'tags');
    const any = tagList(req, 'tags-any');
    const notAll = tagList(req, 'not-tags');
    const notAny = tagList(req, 'not-tags-any');
    if (all.length) rows = rows.filter((s) => all.every((t) => s.rec.tags.includes(t)));
    if (any.length) rows = rows.filter((s) => any.some((t) => s.rec.tags.includes(t)));
    if (notAll.length) rows = rows.filter((s) => !notAll.every((t) => s.rec.tags.includes(t)));
    if (notAny.length) rows = rows.filter((s) => !notAny.some((t) => s.rec.tags.includes(t)));
    const locked = q(req, 'locked');
    if (locked !== undefined && minorOf(req) >= 73)
      rows = rows.filter((s) => s.rec.locked === parseBool(locked));

    const sortKey = q(req, 'sort_key') ?? 'created_at';
    const dir = (q(req, 'sort_dir') ?? 'desc') === 'asc' ? 1 : -1;
    const keyOf = (s: Server): string => {
      switch (sortKey) {
        case 'display_name':
        case 'name':
          return s.name;
        case 'updated_at':
          return s.updated_at;
        case 'vm_state':
          return s.vm_state;
        case 'availability_zone':
          return s.availability_zone;
        case 'uuid':
          return s.id;
        default:
          return s.created_at;
      }
    };
    rows.sort((a, b) => {
      const ka = keyOf(a.rec);
      const kb = keyOf(b.rec);
      if (ka !== kb) return ka < kb ? -dir : dir;
      return a.id < b.id ? -dir : a.id > b.id ? dir : 0;
    });
    const marker = q(req, 'marker');
    if (marker !== undefined) {
      const i = rows.findIndex((s) => s.id === marker);
      if (i < 0) throw new InputError(`marker [${marker}] not found`);
      rows = rows.slice(i + 1);
    }
    return rows;
  }

  function page(
    req: FastifyRequest,
    rows: Row<Server>[],
    detail: boolean,
  ): { rows: Row<Server>[]; links?: unknown[] } {
    const limitText = q(req, 'limit');
    const limit = Math.min(limitText !== undefined ? Number(limitText) : 1000, 1000);
    if (!Number.isInteger(limit) || limit < 0)
      throw new InputError(
        `Invalid input for query parameters limit. Value: ${limitText ?? ''}. '${limitText ?? ''}' does not match '^[0-9]*$'`,
      );
    if (rows.length <= limit && limitText === undefined) return { rows };
    const pageRows = rows.slice(0, limit);
    if (pageRows.length < limit || pageRows.length === 0) return { rows: pageRows };
    const last = pageRows[pageRows.length - 1]!;
    const path = `${baseUrl(req)}/cloud/compute/v2.1/servers${detail ? '/detail' : ''}`;
    return { rows: pageRows, links: [{ rel: 'next', href: `${path}?limit=${limit}&marker=${last.id}` }] };
  }

  r.get('/servers', 'servers.list', async (req) => {
    const { rows, links } = page(req, await listServers(req), false);
    return { servers: rows.map((s) => serverBrief(req, s)), ...(links ? { servers_links: links } : {}) };
  });

  r.get('/servers/detail', 'servers.detail', async (req) => {
    const caller = callerOf(req);
    const { rows, links } = page(req, await listServers(req), true);
    const views = [];
    for (const s of rows) views.push(await serverView(ctx, req, caller, s));
    return { servers: views, ...(links ? { servers_links: links } : {}) };
  });

  r.get('/servers/:id', 'servers.show', async (req) => {
    const caller = callerOf(req);
    return { server: await serverView(ctx, req, caller, await loadServer(ctx, caller, p(req, 'id'))) };
  });

  r.post('/servers', 'servers.create', async (req, reply) => {
    const caller = callerOf(req);
    const body = bodyOf(req);
    const { row, adminPass } = await creator.create(req, caller, body);
    const links = novaLinks(req, 'servers', row.id);
    void reply.code(202).header('location', links[0]!.href);
    const b = (body as { server?: { return_reservation_id?: boolean } }).server;
    if (b?.return_reservation_id) return { reservation_id: `r-${row.id.slice(0, 8)}` };
    return {
      server: {
        id: row.id,
        links,
        'OS-DCF:diskConfig': 'MANUAL',
        ...(row.rec.ports.length > 0
          ? { security_groups: row.rec.security_groups.map((name) => ({ name })) }
          : {}),
        adminPass,
      },
    };
  });

  r.put('/servers/:id', 'servers.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNovaBody(bodyOf(req), 'server', ServerUpdate);
    if (b.description !== undefined && minorOf(req) < 19)
      throw new InputError(
        `Invalid input for field/attribute server. Additional properties are not allowed ('description' was unexpected)`,
      );
    const server = await loadServer(ctx, caller, p(req, 'id'));
    const row = await repos.servers.mutate(server.project, server.id, (cur) => ({
      ...cur.rec,
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.description !== undefined ? { description: b.description } : {}),
      ...(b.accessIPv4 !== undefined ? { access_ipv4: b.accessIPv4 } : {}),
      ...(b.accessIPv6 !== undefined ? { access_ipv6: b.accessIPv6 } : {}),
      ...(b.hostname !== undefined ? { hostname: b.hostname } : {}),
      updated_at: nowIso(ctx),
    }));
    return { server: await serverView(ctx, req, caller, row) };
  });

  r.delete('/servers/:id', 'servers.delete', async (req, reply) => {
    const caller = callerOf(req);
    const server = await loadServer(ctx, caller, p(req, 'id'));
    if (server.rec.locked && !caller.isAdmin) throw new ConflictError(`Instance ${server.id} is locked`);
    if (server.rec.transition?.action !== 'delete') {
      const row = await repos.servers.mutate(server.project, server.id, (cur) =>
        cur.rec.transition?.action === 'delete'
          ? undefined
          : life.begin({ ...cur.rec, task_state: 'deleting' }, 'delete', 0.5),
      );
      life.schedule(row);
    }
    return reply.code(204).send();
  });

  r.post('/servers/:id/action', 'servers.action', async (req, reply) => {
    const caller = callerOf(req);
    const body = bodyOf(req) as Record<string, unknown>;
    const action = Object.keys(body)[0] ?? '';
    const server = await loadServer(ctx, caller, p(req, 'id'));
    const s = server.rec;
    const guard = (allowed: string[], method: string) => {
      if (s.task_state !== null) throw invalidState(s.id, 'task_state', s.task_state, method);
      if (!allowed.includes(s.vm_state)) throw invalidState(s.id, 'vm_state', s.vm_state, method);
      if (s.locked && !caller.isAdmin) throw new ConflictError(`Instance ${s.id} is locked`);
    };
    const start = async (rec: Server, act: 'stop' | 'start' | 'reboot') => {
      const row = await repos.servers.mutate(server.project, server.id, () => life.begin(rec, act, 0.5));
      life.schedule(row);
      return reply.code(202).send();
    };
    switch (action) {
      case 'os-stop':
        guard(['active', 'error'], 'stop');
        return start({ ...s, task_state: 'powering-off' }, 'stop');
      case 'os-start':
        guard(['stopped'], 'start');
        return start({ ...s, task_state: 'powering-on' }, 'start');
      case 'reboot': {
        const type = String((body.reboot as { type?: string } | null)?.type ?? '').toUpperCase();
        if (type !== 'SOFT' && type !== 'HARD')
          throw new InputError(
            `Invalid input for field/attribute type. Value: ${type}. '${type}' is not one of ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']`,
          );
        guard(type === 'SOFT' ? ['active'] : ['active', 'stopped', 'error'], 'reboot');
        return start(
          {
            ...s,
            status: type === 'SOFT' ? 'REBOOT' : 'HARD_REBOOT',
            task_state: type === 'SOFT' ? 'rebooting' : 'rebooting_hard',
          },
          'reboot',
        );
      }
      case 'lock': {
        const reason = (body.lock as { locked_reason?: string } | null)?.locked_reason ?? null;
        await repos.servers.mutate(server.project, server.id, (cur) => ({
          ...cur.rec,
          locked: true,
          locked_reason: reason,
          updated_at: nowIso(ctx),
        }));
        return reply.code(202).send();
      }
      case 'unlock':
        await repos.servers.mutate(server.project, server.id, (cur) => ({
          ...cur.rec,
          locked: false,
          locked_reason: null,
          updated_at: nowIso(ctx),
        }));
        return reply.code(202).send();
      case 'os-getConsoleOutput': {
        const lines = [
          `[    0.000000] Linux version 6.5.0 (embedded cloud) #1 SMP`,
          `cloud-init[842]: Cloud-init v. 23.1 running 'init' at ${s.created_at}.`,
          `cloud-init[842]: ci-info: ${s.hostname} is up`,
          s.status === 'ACTIVE' ? `${s.hostname} login:` : `${s.hostname}: instance is ${s.status}`,
        ];
        const length = Number(
          (body['os-getConsoleOutput'] as { length?: number | string } | null)?.length ?? -1,
        );
        return { output: (length > 0 ? lines.slice(-length) : lines).join('\n') + '\n' };
      }
      case 'addSecurityGroup':
      case 'removeSecurityGroup': {
        const name = String((body[action] as { name?: string } | null)?.name ?? '');
        const groups = await repos.securityGroups.list({ project: server.project });
        const sg = groups.find((g) => g.id === name) ?? groups.find((g) => g.rec.name === name);
        if (!sg) throw new NotFoundError(`Security group ${name} not found.`);
        if (s.ports.length === 0) throw new InputError('No network interfaces attached to the server.');
        const adding = action === 'addSecurityGroup';
        if (!adding && !s.security_groups.includes(sg.rec.name))
          throw new NotFoundError(`Security group ${name} not associated with the instance ${s.id}`);
        for (const ref of s.ports) {
          const port = await repos.ports.find(ref.port_id);
          if (!port) continue;
          const sgs = adding
            ? [...new Set([...port.rec.security_groups, sg.id])]
            : port.rec.security_groups.filter((x) => x !== sg.id);
          await repos.ports.update(port, {
            ...port.rec,
            security_groups: sgs,
            updated_at: nowIso(ctx),
            revision_number: port.rec.revision_number + 1,
          });
        }
        await repos.servers.mutate(server.project, server.id, (cur) => ({
          ...cur.rec,
          security_groups: adding
            ? [...new Set([...cur.rec.security_groups, sg.rec.name])]
            : cur.rec.security_groups.filter((x) => x !== sg.rec.name),
          updated_at: nowIso(ctx),
        }));
        return reply.code(202).send();
      }
      default:
        throw new InputError(`There is no such action: ${action}`);
    }
  });
}
