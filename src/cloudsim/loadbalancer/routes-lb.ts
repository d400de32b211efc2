import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { InputError, NotAllowedError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { asText, bodyOf, callerOf, p, parseBool, q, type Caller, type ServiceRoutes } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import type { LoadBalancer } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { neutronFilter, narrowing, prefilter, projectFields, type NetworkService } from '../network/index.ts';
import { octaviaErrors as E, type LbEngine } from './engine.ts';
import { lbView } from './views.ts';

/** Parse Octavia's `{"<resource>": {...}}` bodies with its (WSME) messages. */
export function parseOctaviaBody<T>(body: unknown, resource: string, schema: z.ZodType<T>): T {
  const inner = body && typeof body === 'object' ? (body as Record<string, unknown>)[resource] : undefined;
  if (!inner || typeof inner !== 'object')
    throw new InputError(
      `Invalid input for field/attribute ${resource}. Value: 'None'. Mandatory field missing.`,
    );
  const res = schema.safeParse(inner);
  if (res.success) return res.data;
  const issue = res.error.issues[0]!;
  const field = issue.path.map(String).join('.') || resource;
  const value = issue.path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k as string] : undefined),
    inner,
  );
  if (value === undefined)
    throw new InputError(
      `Invalid input for field/attribute ${field}. Value: 'None'. Mandatory field missing.`,
    );
  throw new InputError(
    `Invalid input for field/attribute ${field}. Value: '${typeof value === 'string' ? value : JSON.stringify(value)}'. ${issue.message}`,
  );
}

/** Octavia's list answer: filters, `fields`, `limit`/`marker`, `sort`, and `<collection>_links`. */
export function octaviaList(
  req: FastifyRequest,
  collection: string,
  views: Record<string, unknown>[],
): Record<string, unknown> {
  let items = neutronFilter(req, views);
  const sort = q(req, 'sort');
  if (sort) {
    const keys = sort.split(',').map((s) => s.split(':') as [string, string | undefined]);
    items = [...items].sort((a, b) => {
      for (const [k, d] of keys) {
        const x = asText(a[k]);
        const y = asText(b[k]);
        if (x !== y) return (x < y ? -1 : 1) * (d === 'desc' ? -1 : 1);
      }
      return 0;
    });
  }
  if (parseBool(q(req, 'page_reverse')) === true) items = items.reverse();
  const marker = q(req, 'marker');
  if (marker !== undefined) {
    const i = items.findIndex((v) => v.id === marker);
    if (i < 0) throw E.notFound('Marker', marker);
    items = items.slice(i + 1);
  }
  const links: { rel: string; href: string }[] = [];
  const limit = q(req, 'limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 0)
      throw new InputError(`Invalid input for field/attribute limit. Value: '${limit}'.`);
    if (items.length > n && n > 0)
      links.push({
        rel: 'next',
        href: `${req.url.split('?')[0]}?limit=${n}&marker=${String(items[n - 1]!.id)}`,
      });
    items = items.slice(0, n);
  }
  return { [collection]: items.map((v) => projectFields(req, v)), [`${collection}_links`]: links };
}

const LbCreate = z.object({
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  vip_subnet_id: z.string().optional(),
  vip_network_id: z.string().optional(),
  vip_port_id: z.string().optional(),
  vip_address: z.string().optional(),
  vip_qos_policy_id: z.string().optional(),
  provider: z.string().optional(),
  flavor_id: z.string().optional(),
  availability_zone: z.string().optional(),
  project_id: z.string().optional(),
  tenant_id: z.string().optional(),
  tags: z.array(z.string()).default([]),
});

const LbUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  admin_state_up: z.boolean().optional(),
  tags: z.array(z.string()).optional(),
  vip_qos_policy_id: z.string().nullable().optional(),
});

/** Octavia's PolicyForbidden. */
export function forbidden(): NotAllowedError {
  return new NotAllowedError('Policy does not allow this request to be performed.');
}

const PROVIDERS = [
  { name: 'amphora', description: 'The Octavia Amphora driver.' },
  { name: 'octavia', description: 'Deprecated alias of the Octavia Amphora driver.' },
];

export function registerLbRoutes(
  r: ServiceRoutes,
  ctx: CloudContext,
  engine: LbEngine,
  net: NetworkService,
): void {
  const repos = ctx.repos;

  async function view(lb: Row<LoadBalancer>) {
    const t = await engine.tree(lb);
    return lbView(
      lb,
      t.listeners.map((x) => x.id),
      t.pools.map((x) => x.id),
    );
  }

  const project = (
    caller: Caller,
    b: { project_id?: string | undefined; tenant_id?: string | undefined },
  ) => {
    const wanted = b.project_id ?? b.tenant_id;
    if (wanted && wanted !== caller.project && !caller.isAdmin) throw forbidden();
    return wanted ?? caller.project;
  };

  r.get('/lbaas/loadbalancers', 'loadbalancers.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['name']);
    let rows = caller.isAdmin
      ? await repos.loadBalancers.list({ labels })
      : await repos.loadBalancers.list({ project: caller.project, labels });
    // names do not change as load balancers settle; each view reads the load balancer's tree
    rows = await ctx.transitions.settleAll(
      repos.loadBalancers,
      prefilter(req, rows, ['name', 'description']),
    );
    const views = [];
    for (const lb of rows) views.push(await view(lb));
    return octaviaList(req, 'loadbalancers', views);
  });

  r.get('/lbaas/loadbalancers/:id', 'loadbalancers.show', async (req) => {
    const lb = await engine.getLb(callerOf(req), p(req, 'id'));
    return { loadbalancer: projectFields(req, await view(lb)) };
  });

  r.post('/lbaas/loadbalancers', 'loadbalancers.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'loadbalancer', LbCreate);
    const pid = project(caller, b);
    if (!b.vip_subnet_id && !b.vip_network_id && !b.vip_port_id) {
      throw E.validation('VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.');
    }
    if (b.provider && !PROVIDERS.some((x) => x.name === b.provider)) {
      throw new InputError(`Provider '${b.provider}' is not enabled.`, { code: 'ProviderNotEnabled' });
    }
    if (b.availability_zone) throw E.validation(`Availability zone ${b.availability_zone} not found.`);
    await engine.checkQuota(pid, 'load_balancer', 'Load Balancer', () => repos.loadBalancers.count(pid));
    let subnetId = b.vip_subnet_id;
    let network;
    if (subnetId) {
      const subnet = await repos.subnets.find(subnetId);
      if (!subnet) throw E.subresource('Subnet', subnetId);
      network = await repos.networks.find(subnet.rec.network_id);
    } else if (b.vip_network_id) {
      network = await repos.networks.find(b.vip_network_id);
      if (!network) throw E.subresource('Network', b.vip_network_id);
      subnetId = network.rec.subnets[0];
      if (!subnetId) throw E.validation(`Supplied network does not contain a subnet.`);
    }
    const id = newId();
    const ops = [];
    let vipPort;
    if (b.vip_port_id) {
      const port = await repos.ports.find(b.vip_port_id);
      if (!port) throw E.subresource('Port', b.vip_port_id);
      vipPort = port.rec;
      subnetId = port.rec.fixed_ips[0]?.subnet_id;
      network = await repos.networks.find(port.rec.network_id);
      const rec = { ...port.rec, device_owner: 'Octavia', device_id: `lb-${id}`, updated_at: nowIso(ctx) };
      ops.push(repos.ports.updateOp(port, rec));
    } else {
      if (!network || !net.canSeeNetwork(caller, network))
        throw E.subresource('Network', b.vip_network_id ?? '');
      const prepared = await net
        .preparePort({
          project: pid,
          tenantId: pid,
          network,
          name: `octavia-lb-${id}`,
          deviceId: `lb-${id}`,
          deviceOwner: 'Octavia',
          securityGroups: [],
          fixedIps: [{ subnet_id: subnetId!, ...(b.vip_address ? { ip_address: b.vip_address } : {}) }],
          skipQuota: true,
        })
        .catch((err: unknown) => {
          throw E.validation(`Unable to allocate VIP port: ${(err as Error).message}`);
        });
      vipPort = prepared.rec;
      ops.push(...prepared.ops);
    }
    const injected = ctx.faults.takeErrorState('load-balancer.loadbalancers.create');
    const now = nowIso(ctx);
    const rec: LoadBalancer = {
      id,
      name: b.name,
      description: b.description,
      admin_state_up: b.admin_state_up,
      tags: b.tags,
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      created_at: now,
      updated_at: null,
      vip_address: vipPort.fixed_ips[0]?.ip_address ?? '',
      vip_port_id: vipPort.id,
      vip_subnet_id: subnetId ?? '',
      vip_network_id: network?.id ?? vipPort.network_id,
      provider: b.provider ?? 'amphora',
      flavor_id: b.flavor_id ?? null,
      availability_zone: null,
      transition: {
        action: 'create',
        at: ctx.clock.now() + ctx.latencyMs,
        ...(injected !== undefined ? { detail: injected } : {}),
      },
    };
    await ctx.store.commit([repos.loadBalancers.createOp(pid, id, rec), ...ops]);
    ctx.transitions.schedule('LoadBalancer', pid, id, rec.transition!.at);
    void reply.code(201);
    return { loadbalancer: await view((await repos.loadBalancers.get(pid, id))!) };
  });

  r.put('/lbaas/loadbalancers/:id', 'loadbalancers.update', async (req) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'loadbalancer', LbUpdate);
    const lb = await engine.getLb(caller, p(req, 'id'));
    if (lb.rec.provisioning_status !== 'ACTIVE' && lb.rec.provisioning_status !== 'ERROR')
      throw E.pendingState(lb.rec.provisioning_status, lb.id);
    const { op, at } = engine.lockOp(lb);
    const locked = (op as { object: { spec: LoadBalancer } }).object.spec;
    if (b.name !== undefined) locked.name = b.name;
    if (b.description !== undefined) locked.description = b.description;
    if (b.admin_state_up !== undefined) locked.admin_state_up = b.admin_state_up;
    if (b.tags !== undefined) locked.tags = b.tags;
    await engine.commitLocked(lb, [op], at);
    return { loadbalancer: await view((await repos.loadBalancers.get(lb.project, lb.id))!) };
  });

  r.delete('/lbaas/loadbalancers/:id', 'loadbalancers.delete', async (req, reply) => {
    const caller = callerOf(req);
    const lb = await engine.getLb(caller, p(req, 'id'));
    const cascade = parseBool(q(req, 'cascade')) === true;
    const tree = await engine.tree(lb);
    if ((tree.listeners.length > 0 || tree.pools.length > 0) && !cascade)
      throw E.validation(`Cannot delete Load Balancer ${lb.id} - it has children`);
    if (lb.rec.provisioning_status !== 'ACTIVE' && lb.rec.provisioning_status !== 'ERROR')
      throw E.pendingState(lb.rec.provisioning_status, lb.id);
    const { op, at } = engine.lockOp(lb, 'PENDING_DELETE', 'delete');
    await engine.commitLocked(lb, [op], at);
    return reply.code(204).send();
  });

  r.get('/lbaas/loadbalancers/:id/status', 'loadbalancers.status', async (req) => {
    const lb = await engine.getLb(callerOf(req), p(req, 'id'));
    const t = await engine.tree(lb);
    const st = (
      row: Row<{ id: string; name: string; provisioning_status: string; operating_status: string }>,
    ) => ({
      id: row.id,
      name: row.rec.name,
      provisioning_status: row.rec.provisioning_status,
      operating_status: row.rec.operating_status,
    });
    const poolStatus = (pool: (typeof t.pools)[number]) => {
      const hm = t.monitors.find((m) => m.rec.pool_id === pool.id);
      return {
        ...st(pool),
        members: t.members
          .filter((m) => m.rec.pool_id === pool.id)
          .map((m) => ({ ...st(m), address: m.rec.address, protocol_port: m.rec.protocol_port })),
        ...(hm ? { health_monitor: { ...st(hm), type: hm.rec.type } } : {}),
      };
    };
    return {
      statuses: {
        loadbalancer: {
          ...st(lb),
          listeners: t.listeners.map((l) => ({
            ...st(l),
            pools: t.pools
              .filter((pl) => pl.rec.listener_id === l.id || l.rec.default_pool_id === pl.id)
              .map(poolStatus),
          })),
        },
      },
    };
  });

  r.get('/lbaas/loadbalancers/:id/stats', 'loadbalancers.stats', async (req) => {
    await engine.getLb(callerOf(req), p(req, 'id'));
    return {
      stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 },
    };
  });

  r.get('/lbaas/providers', 'providers.list', async () => ({ providers: PROVIDERS }));
  r.get('/lbaas/flavors', 'flavors.list', async () => ({ flavors: [], flavors_links: [] }));
  r.get('/lbaas/availabilityzones', 'availability_zones.list', async () => ({
    availability_zones: [],
    availability_zones_links: [],
  }));

  // --- quotas ---
  const quotaView = (limits: Record<string, number>) => ({
    load_balancer: limits.load_balancer,
    listener: limits.listener,
    pool: limits.pool,
    member: limits.member,
    health_monitor: limits.health_monitor,
    l7policy: limits.l7policy,
    l7rule: limits.l7rule,
  });
  r.get('/lbaas/quotas', 'quotas.list', async (req) => {
    const caller = callerOf(req);
    const projects = caller.isAdmin
      ? await ctx.quotas.projectsWithOverrides('loadbalancer')
      : [caller.project];
    const quotas = [];
    for (const pid of projects)
      quotas.push({ ...quotaView(await ctx.quotas.limits(pid, 'loadbalancer')), project_id: pid });
    return { quotas, quotas_links: [] };
  });
  r.get('/lbaas/quotas/:project', 'quotas.show', async (req) => {
    const caller = callerOf(req);
    if (!caller.isAdmin && p(req, 'project') !== caller.project) throw forbidden();
    return { quota: quotaView(await ctx.quotas.limits(p(req, 'project'), 'loadbalancer')) };
  });
  r.get('/lbaas/quotas/:project/default', 'quotas.defaults', async () => ({
    quota: quotaView(ctx.quotas.defaultsOf('loadbalancer')),
  }));
  r.put('/lbaas/quotas/:project', 'quotas.update', async (req, reply) => {
    const caller = callerOf(req);
    if (!caller.isAdmin) throw forbidden();
    const b = parseOctaviaBody(
      bodyOf(req),
      'quota',
      z.record(z.string(), z.number().int().min(-1).nullable()),
    );
    const values = Object.fromEntries(Object.entries(b).filter((e): e is [string, number] => e[1] !== null));
    void reply.code(202);
    return { quota: quotaView(await ctx.quotas.set(p(req, 'project'), 'loadbalancer', values)) };
  });
  r.delete('/lbaas/quotas/:project', 'quotas.delete', async (req, reply) => {
    const caller = callerOf(req);
    if (!caller.isAdmin) throw forbidden();
    await ctx.quotas.reset(p(req, 'project'), 'loadbalancer');
    return reply.code(204).send();
  });
}
