import { z } from 'zod';
import { ConflictError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type Caller, type ServiceRoutes } from '../core/http.ts';
import { newId, parseCidr4, parseIpv4 } from '../core/ids.ts';
import type { HealthMonitor, Listener, LoadBalancer, Member, Pool } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { narrowing, prefilter, projectFields } from '../network/index.ts';
import { octaviaErrors as E, type LbEngine } from './engine.ts';
import { octaviaList, parseOctaviaBody } from './routes-lb.ts';
import { listenerView, memberView, monitorView, poolView } from './views.ts';

const LISTENER_PROTOCOLS = ['HTTP', 'HTTPS', 'TCP', 'TERMINATED_HTTPS', 'UDP', 'SCTP', 'PROMETHEUS'] as const;
const POOL_PROTOCOLS = ['HTTP', 'HTTPS', 'TCP', 'UDP', 'PROXY', 'PROXYV2', 'SCTP'] as const;
const ALGORITHMS = ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'] as const;
const HM_TYPES = ['HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'] as const;
const port = z.number().int().min(1).max(65535);

const ListenerCreate = z.object({
  loadbalancer_id: z.string(),
  protocol: z.enum(LISTENER_PROTOCOLS),
  protocol_port: port,
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  connection_limit: z.number().int().min(-1).default(-1),
  default_pool_id: z.string().nullable().optional(),
  allowed_cidrs: z.array(z.string()).nullable().optional(),
  timeout_client_data: z.number().int().min(0).default(50000),
  timeout_member_connect: z.number().int().min(0).default(5000),
  timeout_member_data: z.number().int().min(0).default(50000),
  timeout_tcp_inspect: z.number().int().min(0).default(0),
  insert_headers: z.record(z.string(), z.string()).default({}),
  tags: z.array(z.string()).default([]),
});
const ListenerUpdate = ListenerCreate.omit({
  loadbalancer_id: true,
  protocol: true,
  protocol_port: true,
}).partial();

const PoolCreate = z.object({
  loadbalancer_id: z.string().optional(),
  listener_id: z.string().optional(),
  protocol: z.enum(POOL_PROTOCOLS),
  lb_algorithm: z.enum(ALGORITHMS),
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  session_persistence: z
    .object({
      type: z.enum(['SOURCE_IP', 'HTTP_COOKIE', 'APP_COOKIE']),
      cookie_name: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
  tls_enabled: z.boolean().optional(),
  tags: z.array(z.string()).default([]),
});
const PoolUpdate = PoolCreate.omit({ loadbalancer_id: true, listener_id: true, protocol: true }).partial();

const MemberCreate = z.object({
  address: z.string(),
  protocol_port: port,
  name: z.string().max(255).default(''),
  weight: z.number().int().min(0).max(256).default(1),
  admin_state_up: z.boolean().default(true),
  subnet_id: z.string().nullable().optional(),
  monitor_address: z.string().nullable().optional(),
  monitor_port: port.nullable().optional(),
  backup: z.boolean().default(false),
  tags: z.array(z.string()).default([]),
});
const MemberUpdate = MemberCreate.omit({ address: true, protocol_port: true, subnet_id: true }).partial();

const MonitorCreate = z.object({
  pool_id: z.string(),
  type: z.enum(HM_TYPES),
  delay: z.number().int().min(0),
  timeout: z.number().int().min(0),
  max_retries: z.number().int().min(1).max(10),
  max_retries_down: z.number().int().min(1).max(10).default(3),
  http_method: z
    .enum(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])
    .optional(),
  url_path: z.string().startsWith('/').optional(),
  expected_codes: z
    .string()
    .regex(/^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$/)
    .optional(),
  http_version: z.number().optional(),
  domain_name: z.string().optional(),
  name: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  tags: z.array(z.string()).default([]),
});
const MonitorUpdate = MonitorCreate.omit({ pool_id: true, type: true }).partial();

const base = (
  now: string,
  b: { name: string; description?: string; admin_state_up: boolean; tags: string[] },
) => ({
  id: newId(),
  name: b.name,
  description: b.description ?? '',
  admin_state_up: b.admin_state_up,
  tags: b.tags,
  provisioning_status: 'PENDING_CREATE',
  operating_status: 'OFFLINE',
  created_at: now,
  updated_at: null,
});

const l4 = (protocol: string) => (protocol === 'UDP' ? 'UDP' : protocol === 'SCTP' ? 'SCTP' : 'TCP');

/** Listeners, pools, members and health monitors of Octavia. */
export function registerChildRoutes(r: ServiceRoutes, ctx: CloudContext, engine: LbEngine): void {
  const repos = ctx.repos;
  const now = () => nowIso(ctx);

  async function lbOf(caller: Caller, id: string): Promise<Row<LoadBalancer>> {
    try {
      return await engine.getLb(caller, id);
    } catch {
      throw E.subresource('Load Balancer', id);
    }
  }

  async function child<R>(
    caller: Caller,
    repo: { find(id: string): Promise<Row<R> | undefined> },
    resource: string,
    id: string,
  ): Promise<Row<R>> {
    const row = await repo.find(id);
    if (!row || (!caller.isAdmin && row.project !== caller.project)) throw E.notFound(resource, id);
    return row;
  }

  /** Lock the load balancer and write the child changes in one commit. */
  async function change(lb: Row<LoadBalancer>, ops: WriteOp[]): Promise<void> {
    const lock = engine.lockOp(lb);
    await engine.commitLocked(lb, [lock.op, ...ops], lock.at);
  }

  const labels = (lbId: string, extra: Record<string, string> = {}) => ({ loadbalancer_id: lbId, ...extra });

  async function poolListeners(pool: Row<Pool>): Promise<string[]> {
    const ls = await repos.listeners.list({
      project: pool.project,
      labels: { loadbalancer_id: pool.rec.loadbalancer_id },
    });
    return ls
      .filter((l) => l.rec.default_pool_id === pool.id || pool.rec.listener_id === l.id)
      .map((l) => l.id);
  }
  async function poolMembers(pool: Row<Pool>): Promise<string[]> {
    return (await repos.members.list({ project: pool.project, labels: { pool_id: pool.id } })).map(
      (m) => m.id,
    );
  }
  const fullPoolView = async (pool: Row<Pool>) =>
    poolView(pool, await poolListeners(pool), await poolMembers(pool));

  // --- listeners ---
  r.get('/lbaas/listeners', 'listeners.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['loadbalancer_id']);
    const rows = caller.isAdmin
      ? await repos.listeners.list({ labels })
      : await repos.listeners.list({ project: caller.project, labels });
    return octaviaList(req, 'listeners', rows.map(listenerView));
  });
  r.get('/lbaas/listeners/:id', 'listeners.show', async (req) => ({
    listener: projectFields(
      req,
      listenerView(await child(callerOf(req), repos.listeners, 'Listener', p(req, 'id'))),
    ),
  }));
  r.post('/lbaas/listeners', 'listeners.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'listener', ListenerCreate);
    const lb = await lbOf(caller, b.loadbalancer_id);
    engine.requireMutable(lb);
    const tree = await engine.tree(lb);
    const dup = tree.listeners.find(
      (l) => l.rec.protocol_port === b.protocol_port && l4(l.rec.protocol) === l4(b.protocol),
    );
    if (dup)
      throw new ConflictError(
        `Another Listener on this Load Balancer is already using protocol ${b.protocol} and protocol_port ${b.protocol_port}`,
      );
    for (const c of b.allowed_cidrs ?? [])
      if (!parseCidr4(c, true)) throw E.validation(`${c} is not a valid CIDR`);
    if (b.default_pool_id && !tree.pools.some((pl) => pl.id === b.default_pool_id))
      throw E.subresource('Pool', b.default_pool_id);
    await engine.checkQuota(lb.project, 'listener', 'Listener', () => repos.listeners.count(lb.project));
    const rec: Listener = {
      ...base(now(), b),
      loadbalancer_id: lb.id,
      protocol: b.protocol,
      protocol_port: b.protocol_port,
      default_pool_id: b.default_pool_id ?? null,
      connection_limit: b.connection_limit,
      allowed_cidrs: b.allowed_cidrs ?? null,
      timeout_client_data: b.timeout_client_data,
      timeout_member_connect: b.timeout_member_connect,
      timeout_member_data: b.timeout_member_data,
      timeout_tcp_inspect: b.timeout_tcp_inspect,
      insert_headers: b.insert_headers,
    };
    await change(lb, [repos.listeners.createOp(lb.project, rec.id, rec, { labels: labels(lb.id) })]);
    void reply.code(201);
    return { listener: listenerView((await repos.listeners.get(lb.project, rec.id))!) };
  });
  r.put('/lbaas/listeners/:id', 'listeners.update', async (req) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'listener', ListenerUpdate);
    const l = await child(caller, repos.listeners, 'Listener', p(req, 'id'));
    const lb = await lbOf(caller, l.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Listener', id: l.id, status: l.rec.provisioning_status });
    const rec: Listener = { ...l.rec, provisioning_status: 'PENDING_UPDATE' };
    for (const [k, v] of Object.entries(b)) if (v !== undefined) (rec as Record<string, unknown>)[k] = v;
    await change(lb, [repos.listeners.updateOp(l, rec)]);
    return { listener: listenerView((await repos.listeners.get(l.project, l.id))!) };
  });
  r.delete('/lbaas/listeners/:id', 'listeners.delete', async (req, reply) => {
    const caller = callerOf(req);
    const l = await child(caller, repos.listeners, 'Listener', p(req, 'id'));
    const lb = await lbOf(caller, l.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Listener', id: l.id, status: l.rec.provisioning_status });
    const ops: WriteOp[] = [repos.listeners.updateOp(l, { ...l.rec, provisioning_status: 'PENDING_DELETE' })];
    for (const pool of await repos.pools.list({ project: l.project, labels: labels(lb.id) })) {
      if (pool.rec.listener_id === l.id)
        ops.push(repos.pools.updateOp(pool, { ...pool.rec, listener_id: null }));
    }
    await change(lb, ops);
    return reply.code(204).send();
  });

  // --- pools ---
  r.get('/lbaas/pools', 'pools.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['loadbalancer_id']);
    const rows = caller.isAdmin
      ? await repos.pools.list({ labels })
      : await repos.pools.list({ project: caller.project, labels });
    // each view reads the pool's listeners and members: build only those the filter can keep
    const views = [];
    for (const pool of prefilter(req, rows, ['name', 'loadbalancer_id']))
      views.push(await fullPoolView(pool));
    return octaviaList(req, 'pools', views);
  });
  r.get('/lbaas/pools/:id', 'pools.show', async (req) => ({
    pool: projectFields(
      req,
      await fullPoolView(await child(callerOf(req), repos.pools, 'Pool', p(req, 'id'))),
    ),
  }));
  r.post('/lbaas/pools', 'pools.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'pool', PoolCreate);
    if (!b.loadbalancer_id && !b.listener_id)
      throw E.validation('loadbalancer_id or listener_id must be specified.');
    let listener: Row<Listener> | undefined;
    if (b.listener_id) {
      listener = await repos.listeners.find(b.listener_id);
      if (!listener || (!caller.isAdmin && listener.project !== caller.project))
        throw E.subresource('Listener', b.listener_id);
      if (listener.rec.default_pool_id) throw new ConflictError('This listener already has a default pool');
    }
    const lb = await lbOf(caller, b.loadbalancer_id ?? listener!.rec.loadbalancer_id);
    if (listener && listener.rec.loadbalancer_id !== lb.id)
      throw E.validation('Listener and pool load balancers do not match.');
    engine.requireMutable(
      lb,
      listener
        ? { resource: 'Listener', id: listener.id, status: listener.rec.provisioning_status }
        : undefined,
    );
    if (listener) {
      const compatible =
        l4(listener.rec.protocol) === l4(b.protocol) ||
        (['HTTP', 'TERMINATED_HTTPS'].includes(listener.rec.protocol) &&
          ['HTTP', 'PROXY', 'PROXYV2'].includes(b.protocol));
      if (!compatible)
        throw E.validation(
          `The pool protocol '${b.protocol}' is invalid while the listener protocol is '${listener.rec.protocol}'.`,
        );
    }
    await engine.checkQuota(lb.project, 'pool', 'Pool', () => repos.pools.count(lb.project));
    const rec: Pool = {
      ...base(now(), b),
      loadbalancer_id: lb.id,
      listener_id: listener?.id ?? null,
      protocol: b.protocol,
      lb_algorithm: b.lb_algorithm,
      session_persistence: b.session_persistence
        ? { type: b.session_persistence.type, cookie_name: b.session_persistence.cookie_name ?? null }
        : null,
      healthmonitor_id: null,
    };
    const ops: WriteOp[] = [repos.pools.createOp(lb.project, rec.id, rec, { labels: labels(lb.id) })];
    if (listener)
      ops.push(
        repos.listeners.updateOp(listener, {
          ...listener.rec,
          default_pool_id: rec.id,
          provisioning_status: 'PENDING_UPDATE',
        }),
      );
    await change(lb, ops);
    void reply.code(201);
    return { pool: await fullPoolView((await repos.pools.get(lb.project, rec.id))!) };
  });
  r.put('/lbaas/pools/:id', 'pools.update', async (req) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'pool', PoolUpdate);
    const pool = await child(caller, repos.pools, 'Pool', p(req, 'id'));
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Pool', id: pool.id, status: pool.rec.provisioning_status });
    const rec: Pool = { ...pool.rec, provisioning_status: 'PENDING_UPDATE' };
    if (b.name !== undefined) rec.name = b.name;
    if (b.description !== undefined) rec.description = b.description;
    if (b.admin_state_up !== undefined) rec.admin_state_up = b.admin_state_up;
    if (b.lb_algorithm !== undefined) rec.lb_algorithm = b.lb_algorithm;
    if (b.tags !== undefined) rec.tags = b.tags;
    if (b.session_persistence !== undefined)
      rec.session_persistence = b.session_persistence
        ? { type: b.session_persistence.type, cookie_name: b.session_persistence.cookie_name ?? null }
        : null;
    await change(lb, [repos.pools.updateOp(pool, rec)]);
    return { pool: await fullPoolView((await repos.pools.get(pool.project, pool.id))!) };
  });
  r.delete('/lbaas/pools/:id', 'pools.delete', async (req, reply) => {
    const caller = callerOf(req);
    const pool = await child(caller, repos.pools, 'Pool', p(req, 'id'));
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Pool', id: pool.id, status: pool.rec.provisioning_status });
    const ops: WriteOp[] = [
      repos.pools.updateOp(pool, { ...pool.rec, provisioning_status: 'PENDING_DELETE' }),
    ];
    for (const m of await repos.members.list({ project: pool.project, labels: { pool_id: pool.id } }))
      ops.push(repos.members.updateOp(m, { ...m.rec, provisioning_status: 'PENDING_DELETE' }));
    for (const hm of await repos.healthMonitors.list({ project: pool.project, labels: { pool_id: pool.id } }))
      ops.push(repos.healthMonitors.updateOp(hm, { ...hm.rec, provisioning_status: 'PENDING_DELETE' }));
    for (const l of await repos.listeners.list({ project: pool.project, labels: labels(lb.id) })) {
      if (l.rec.default_pool_id === pool.id)
        ops.push(repos.listeners.updateOp(l, { ...l.rec, default_pool_id: null }));
    }
    await change(lb, ops);
    return reply.code(204).send();
  });

  // --- members ---
  async function poolFor(caller: Caller, id: string) {
    return child(caller, repos.pools, 'Pool', id);
  }
  r.get('/lbaas/pools/:pool/members', 'members.list', async (req) => {
    const pool = await poolFor(callerOf(req), p(req, 'pool'));
    const rows = await repos.members.list({ project: pool.project, labels: { pool_id: pool.id } });
    return octaviaList(req, 'members', rows.map(memberView));
  });
  r.get('/lbaas/pools/:pool/members/:id', 'members.show', async (req) => {
    const caller = callerOf(req);
    const pool = await poolFor(caller, p(req, 'pool'));
    const m = await child(caller, repos.members, 'Member', p(req, 'id'));
    if (m.rec.pool_id !== pool.id) throw E.notFound('Member', m.id);
    return { member: projectFields(req, memberView(m)) };
  });
  r.post('/lbaas/pools/:pool/members', 'members.create', async (req, reply) => {
    const caller = callerOf(req);
    const pool = await poolFor(caller, p(req, 'pool'));
    const b = parseOctaviaBody(bodyOf(req), 'member', MemberCreate);
    if (parseIpv4(b.address) === undefined && !b.address.includes(':'))
      throw E.validation(`${b.address} is not a valid IP address`);
    if (b.subnet_id && !(await repos.subnets.find(b.subnet_id))) throw E.subresource('Subnet', b.subnet_id);
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Pool', id: pool.id, status: pool.rec.provisioning_status });
    const members = await repos.members.list({ project: pool.project, labels: { pool_id: pool.id } });
    if (
      members.some(
        (m) =>
          m.rec.address === b.address &&
          m.rec.protocol_port === b.protocol_port &&
          m.rec.provisioning_status !== 'PENDING_DELETE',
      )
    ) {
      throw new ConflictError(
        `Another member on this pool is already using ip ${b.address} on protocol_port ${b.protocol_port}`,
      );
    }
    await engine.checkQuota(lb.project, 'member', 'Member', () => repos.members.count(lb.project));
    const rec: Member = {
      ...base(now(), { ...b, description: '' }),
      pool_id: pool.id,
      loadbalancer_id: lb.id,
      address: b.address,
      protocol_port: b.protocol_port,
      subnet_id: b.subnet_id ?? null,
      weight: b.weight,
      backup: b.backup,
      monitor_address: b.monitor_address ?? null,
      monitor_port: b.monitor_port ?? null,
    };
    await change(lb, [
      repos.members.createOp(lb.project, rec.id, rec, { labels: labels(lb.id, { pool_id: pool.id }) }),
      repos.pools.updateOp(pool, { ...pool.rec, provisioning_status: 'PENDING_UPDATE' }),
    ]);
    void reply.code(201);
    return { member: memberView((await repos.members.get(lb.project, rec.id))!) };
  });
  r.put('/lbaas/pools/:pool/members/:id', 'members.update', async (req) => {
    const caller = callerOf(req);
    const pool = await poolFor(caller, p(req, 'pool'));
    const m = await child(caller, repos.members, 'Member', p(req, 'id'));
    if (m.rec.pool_id !== pool.id) throw E.notFound('Member', m.id);
    const b = parseOctaviaBody(bodyOf(req), 'member', MemberUpdate);
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Member', id: m.id, status: m.rec.provisioning_status });
    const rec: Member = { ...m.rec, provisioning_status: 'PENDING_UPDATE' };
    for (const [k, v] of Object.entries(b)) if (v !== undefined) (rec as Record<string, unknown>)[k] = v;
    await change(lb, [repos.members.updateOp(m, rec)]);
    return { member: memberView((await repos.members.get(m.project, m.id))!) };
  });
  r.delete('/lbaas/pools/:pool/members/:id', 'members.delete', async (req, reply) => {
    const caller = callerOf(req);
    const pool = await poolFor(caller, p(req, 'pool'));
    const m = await child(caller, repos.members, 'Member', p(req, 'id'));
    if (m.rec.pool_id !== pool.id) throw E.notFound('Member', m.id);
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Member', id: m.id, status: m.rec.provisioning_status });
    await change(lb, [repos.members.updateOp(m, { ...m.rec, provisioning_status: 'PENDING_DELETE' })]);
    return reply.code(204).send();
  });

  // --- health monitors ---
  r.get('/lbaas/healthmonitors', 'healthmonitors.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['pool_id']);
    const rows = caller.isAdmin
      ? await repos.healthMonitors.list({ labels })
      : await repos.healthMonitors.list({ project: caller.project, labels });
    return octaviaList(req, 'healthmonitors', rows.map(monitorView));
  });
  r.get('/lbaas/healthmonitors/:id', 'healthmonitors.show', async (req) => ({
    healthmonitor: projectFields(
      req,
      monitorView(await child(callerOf(req), repos.healthMonitors, 'Health Monitor', p(req, 'id'))),
    ),
  }));
  r.post('/lbaas/healthmonitors', 'healthmonitors.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseOctaviaBody(bodyOf(req), 'healthmonitor', MonitorCreate);
    const pool = await repos.pools.find(b.pool_id);
    if (!pool || (!caller.isAdmin && pool.project !== caller.project)) throw E.subresource('Pool', b.pool_id);
    if (pool.rec.healthmonitor_id) throw new ConflictError('This pool already has a health monitor');
    if (b.timeout > b.delay)
      throw E.validation('The timeout value must be less than or equal to the delay value.');
    const lb = await lbOf(caller, pool.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Pool', id: pool.id, status: pool.rec.provisioning_status });
    await engine.checkQuota(lb.project, 'health_monitor', 'Health Monitor', () =>
      repos.healthMonitors.count(lb.project),
    );
    const http = b.type === 'HTTP' || b.type === 'HTTPS';
    const rec: HealthMonitor = {
      ...base(now(), b),
      pool_id: pool.id,
      loadbalancer_id: lb.id,
      type: b.type,
      delay: b.delay,
      timeout: b.timeout,
      max_retries: b.max_retries,
      max_retries_down: b.max_retries_down,
      http_method: http ? (b.http_method ?? 'GET') : null,
      url_path: http ? (b.url_path ?? '/') : null,
      expected_codes: http ? (b.expected_codes ?? '200') : null,
      http_version: http ? (b.http_version ?? null) : null,
      domain_name: http ? (b.domain_name ?? null) : null,
    };
    await change(lb, [
      repos.healthMonitors.createOp(lb.project, rec.id, rec, { labels: labels(lb.id, { pool_id: pool.id }) }),
      repos.pools.updateOp(pool, {
        ...pool.rec,
        healthmonitor_id: rec.id,
        provisioning_status: 'PENDING_UPDATE',
      }),
    ]);
    void reply.code(201);
    return { healthmonitor: monitorView((await repos.healthMonitors.get(lb.project, rec.id))!) };
  });
  r.put('/lbaas/healthmonitors/:id', 'healthmonitors.update', async (req) => {
    const caller = callerOf(req);
    const hm = await child(caller, repos.healthMonitors, 'Health Monitor', p(req, 'id'));
    const b = parseOctaviaBody(bodyOf(req), 'healthmonitor', MonitorUpdate);
    const lb = await lbOf(caller, hm.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Health Monitor', id: hm.id, status: hm.rec.provisioning_status });
    const rec: HealthMonitor = { ...hm.rec, provisioning_status: 'PENDING_UPDATE' };
    for (const [k, v] of Object.entries(b)) if (v !== undefined) (rec as Record<string, unknown>)[k] = v;
    await change(lb, [repos.healthMonitors.updateOp(hm, rec)]);
    return { healthmonitor: monitorView((await repos.healthMonitors.get(hm.project, hm.id))!) };
  });
  r.delete('/lbaas/healthmonitors/:id', 'healthmonitors.delete', async (req, reply) => {
    const caller = callerOf(req);
    const hm = await child(caller, repos.healthMonitors, 'Health Monitor', p(req, 'id'));
    const lb = await lbOf(caller, hm.rec.loadbalancer_id);
    engine.requireMutable(lb, { resource: 'Health Monitor', id: hm.id, status: hm.rec.provisioning_status });
    const ops: WriteOp[] = [
      repos.healthMonitors.updateOp(hm, { ...hm.rec, provisioning_status: 'PENDING_DELETE' }),
    ];
    const pool = await repos.pools.find(hm.rec.pool_id);
    if (pool) ops.push(repos.pools.updateOp(pool, { ...pool.rec, healthmonitor_id: null }));
    await change(lb, ops);
    return reply.code(204).send();
  });
}
