import { z } from 'zod';
import { ConflictError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type ServiceRoutes } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import type { Router } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { parseNeutronBody, CreateTags } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import { narrowing, neutronList, prefilter, projectFields } from './listing.ts';
import { targetProject } from './routes-networks.ts';
import type { NetworkService } from './service.ts';
import { routerView } from './views.ts';

const GatewayInfo = z.object({
  network_id: z.string(),
  enable_snat: z.boolean().optional(),
  external_fixed_ips: z
    .array(z.object({ subnet_id: z.string().optional(), ip_address: z.string().optional() }))
    .optional(),
});

const RouterCreate = z.object({
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  external_gateway_info: GatewayInfo.nullable().optional(),
  distributed: z.boolean().default(false),
  ha: z.boolean().default(false),
  availability_zone_hints: z.array(z.string()).default([]),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const RouterUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  admin_state_up: z.boolean().optional(),
  external_gateway_info: z
    .union([GatewayInfo, z.object({}).strict()])
    .nullable()
    .optional(),
  routes: z
    .array(z.object({ destination: z.string(), nexthop: z.string() }))
    .nullable()
    .optional(),
});

const InterfaceBody = z.object({ subnet_id: z.string().optional(), port_id: z.string().optional() });

export function registerRouterRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  const repos = ctx.repos;

  /** Writes that give a router a gateway on an external network (a gateway port with an address there). */
  async function gatewayOps(
    router: { id: string; project: string },
    info: z.infer<typeof GatewayInfo>,
    caller: ReturnType<typeof callerOf>,
  ) {
    const net = await repos.networks.find(info.network_id);
    if (!net || !svc.canSeeNetwork(caller, net)) throw E.networkNotFound(info.network_id);
    if (!net.rec.external) throw E.badRequest('router', `Network ${net.id} is not a valid external network`);
    if (info.external_fixed_ips?.length && !caller.isAdmin) {
      throw E.notAuthorized(
        '(rule:create_router and rule:create_router:external_gateway_info:external_fixed_ips) is disallowed by policy',
      );
    }
    const { rec: port, ops } = await svc.preparePort({
      project: router.project,
      tenantId: '',
      network: net,
      deviceId: router.id,
      deviceOwner: 'network:router_gateway',
      ...(info.external_fixed_ips?.length ? { fixedIps: info.external_fixed_ips } : {}),
      skipQuota: true,
    });
    port.status = 'ACTIVE';
    const gateway: NonNullable<Router['external_gateway_info']> = {
      network_id: net.id,
      enable_snat: info.enable_snat ?? true,
      external_fixed_ips: port.fixed_ips,
    };
    return { gateway, portId: port.id, ops };
  }

  async function clearGatewayOps(router: Row<Router>): Promise<WriteOp[]> {
    const gwNet = router.rec.external_gateway_info?.network_id;
    if (!gwNet) return [];
    const users = await repos.floatingIps.list({ labels: { router_id: router.id } });
    if (users.length > 0) throw E.gatewayInUseByFip(router.id, gwNet);
    const port = router.rec.gw_port_id ? await repos.ports.find(router.rec.gw_port_id) : undefined;
    return port ? svc.deletePortOps(port) : [];
  }

  async function commitRetrying(build: () => Promise<WriteOp[]>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await ctx.store.commit(await build());
        return;
      } catch (err) {
        if (
          !(err instanceof ConflictError) ||
          (err.code !== 'Conflict' && err.code !== 'AlreadyExists') ||
          attempt > 10
        )
          throw err;
      }
    }
  }

  r.get('/v2.0/routers', 'routers.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['name']);
    const rows = caller.isAdmin
      ? await repos.routers.list({ labels })
      : await repos.routers.list({ project: caller.project, labels });
    return neutronList(req, 'routers', prefilter(req, rows, ['name']).map(routerView));
  });

  r.get('/v2.0/routers/:id', 'routers.show', async (req) => {
    const caller = callerOf(req);
    return { router: projectFields(req, routerView(await svc.getRouter(caller, p(req, 'id')))) };
  });

  r.post('/v2.0/routers', 'routers.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'router', RouterCreate);
    const project = targetProject(caller, b);
    await svc.checkQuota(project, 'router');
    const id = newId();
    const now = nowIso(ctx);
    await commitRetrying(async () => {
      const rec: Router = {
        id,
        tenant_id: project,
        name: b.name,
        description: b.description,
        tags: b.tags ?? [],
        created_at: now,
        updated_at: now,
        revision_number: 1,
        admin_state_up: b.admin_state_up,
        external_gateway_info: null,
        gw_port_id: null,
        routes: [],
        interfaces: [],
        status: 'ACTIVE',
        distributed: b.distributed,
        ha: b.ha,
        availability_zone_hints: b.availability_zone_hints,
      };
      const ops: WriteOp[] = [];
      if (b.external_gateway_info) {
        const gw = await gatewayOps({ id, project }, b.external_gateway_info, caller);
        rec.external_gateway_info = gw.gateway;
        rec.gw_port_id = gw.portId;
        ops.push(...gw.ops);
      }
      return [repos.routers.createOp(project, id, rec), ...ops];
    });
    void reply.code(201);
    return { router: routerView((await repos.routers.get(project, id))!) };
  });

  r.put('/v2.0/routers/:id', 'routers.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'router', RouterUpdate);
    const router = await svc.getRouter(caller, p(req, 'id'));
    await commitRetrying(async () => {
      const cur = await svc.getRouter(caller, router.id);
      const rec: Router = {
        ...cur.rec,
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      };
      const ops: WriteOp[] = [];
      if (b.name !== undefined) rec.name = b.name;
      if (b.description !== undefined) rec.description = b.description;
      if (b.admin_state_up !== undefined) rec.admin_state_up = b.admin_state_up;
      if (b.routes !== undefined) rec.routes = b.routes ?? [];
      if (b.external_gateway_info !== undefined) {
        const info =
          b.external_gateway_info && 'network_id' in b.external_gateway_info
            ? (b.external_gateway_info as z.infer<typeof GatewayInfo>)
            : null;
        const same =
          info &&
          cur.rec.external_gateway_info?.network_id === info.network_id &&
          !info.external_fixed_ips?.length;
        if (same) {
          rec.external_gateway_info = {
            ...cur.rec.external_gateway_info!,
            enable_snat: info.enable_snat ?? cur.rec.external_gateway_info!.enable_snat,
          };
        } else {
          ops.push(...(await clearGatewayOps(cur)));
          rec.external_gateway_info = null;
          rec.gw_port_id = null;
          if (info) {
            const gw = await gatewayOps(cur, info, caller);
            rec.external_gateway_info = gw.gateway;
            rec.gw_port_id = gw.portId;
            ops.push(...gw.ops);
          }
        }
      }
      return [...ops, repos.routers.updateOp(cur, rec)];
    });
    return { router: routerView((await repos.routers.find(router.id))!) };
  });

  r.delete('/v2.0/routers/:id', 'routers.delete', async (req, reply) => {
    const caller = callerOf(req);
    const router = await svc.getRouter(caller, p(req, 'id'));
    if (router.rec.interfaces.length > 0) throw E.routerInUse(router.id);
    await commitRetrying(async () => {
      const cur = await svc.getRouter(caller, router.id);
      if (cur.rec.interfaces.length > 0) throw E.routerInUse(router.id);
      return [...(await clearGatewayOps(cur)), repos.routers.deleteOp(cur)];
    });
    return reply.code(204).send();
  });

  r.put('/v2.0/routers/:id/add_router_interface', 'routers.add_interface', async (req) => {
    const caller = callerOf(req);
    const b = InterfaceBody.safeParse(bodyOf(req));
    if (!b.success || (!b.data.subnet_id && !b.data.port_id))
      throw E.badRequest('router', 'Either subnet_id or port_id must be specified');
    if (b.data.subnet_id && b.data.port_id)
      throw E.badRequest('router', 'Cannot specify both subnet-id and port-id');
    const router = await svc.getRouter(caller, p(req, 'id'));
    let portId = '';
    let subnetId = '';
    let networkId = '';
    await commitRetrying(async () => {
      const cur = await svc.getRouter(caller, router.id);
      const ops: WriteOp[] = [];
      if (b.data.subnet_id) {
        const subnet = await svc.getSubnet(caller, b.data.subnet_id);
        if (cur.rec.interfaces.some((i) => i.subnet_id === subnet.id)) {
          throw E.badRequest('router', `Router already has a port on subnet ${subnet.id}`);
        }
        if (!subnet.rec.gateway_ip)
          throw E.badRequest('router', `Subnet for router interface must have a gateway IP`);
        const net = (await repos.networks.find(subnet.rec.network_id))!;
        if (net.rec.external) throw E.badRequest('router', `Router port must have at least one fixed IP`);
        if (await svc.ipam.isAllocated(subnet, subnet.rec.gateway_ip)) {
          throw new ConflictError(
            `Unable to complete operation for network ${net.id}. The IP address ${subnet.rec.gateway_ip} is in use.`,
            {
              code: 'IpAddressInUse',
            },
          );
        }
        const prepared = await svc.preparePort({
          project: cur.project,
          tenantId: cur.project,
          network: net,
          fixedIps: [{ subnet_id: subnet.id, ip_address: subnet.rec.gateway_ip }],
          deviceId: cur.id,
          deviceOwner: 'network:router_interface',
          skipQuota: true,
        });
        ops.push(...prepared.ops);
        portId = prepared.rec.id;
        subnetId = subnet.id;
        networkId = net.id;
      } else {
        const port = await svc.getPort(caller, b.data.port_id!);
        if (port.rec.device_id !== '' || port.rec.device_owner !== '')
          throw E.portInUse(port.id, port.rec.network_id, port.rec.device_id);
        const fixed = port.rec.fixed_ips[0];
        if (!fixed) throw E.badRequest('router', `Router port must have at least one fixed IP`);
        if (cur.rec.interfaces.some((i) => i.subnet_id === fixed.subnet_id)) {
          throw E.badRequest('router', `Router already has a port on subnet ${fixed.subnet_id}`);
        }
        const rec = {
          ...port.rec,
          device_id: cur.id,
          device_owner: 'network:router_interface',
          status: 'ACTIVE',
          security_groups: [],
          updated_at: nowIso(ctx),
        };
        ops.push(repos.ports.updateOp(port, rec));
        portId = port.id;
        subnetId = fixed.subnet_id;
        networkId = port.rec.network_id;
      }
      const rec: Router = {
        ...cur.rec,
        interfaces: [...cur.rec.interfaces, { port_id: portId, subnet_id: subnetId }],
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      };
      ops.push(repos.routers.updateOp(cur, rec));
      return ops;
    });
    return {
      id: router.id,
      tenant_id: router.project,
      project_id: router.project,
      port_id: portId,
      network_id: networkId,
      subnet_id: subnetId,
      subnet_ids: [subnetId],
    };
  });

  r.put('/v2.0/routers/:id/remove_router_interface', 'routers.remove_interface', async (req) => {
    const caller = callerOf(req);
    const b = InterfaceBody.safeParse(bodyOf(req));
    if (!b.success || (!b.data.subnet_id && !b.data.port_id))
      throw E.badRequest('router', 'Either subnet_id or port_id must be specified');
    const router = await svc.getRouter(caller, p(req, 'id'));
    let removed = { port_id: '', subnet_id: '' };
    let networkId = '';
    await commitRetrying(async () => {
      const cur = await svc.getRouter(caller, router.id);
      const itf = b.data.port_id
        ? cur.rec.interfaces.find((i) => i.port_id === b.data.port_id)
        : cur.rec.interfaces.find((i) => i.subnet_id === b.data.subnet_id);
      if (!itf) {
        throw b.data.port_id
          ? E.routerInterfaceNotFound(cur.id, b.data.port_id)
          : E.routerInterfaceNotFoundForSubnet(cur.id, b.data.subnet_id!);
      }
      if (b.data.subnet_id && b.data.port_id && itf.subnet_id !== b.data.subnet_id) {
        throw E.badRequest('router', `Subnet ${b.data.subnet_id} is not on port ${b.data.port_id}`);
      }
      const fipUsers = await repos.floatingIps.list({ labels: { router_id: cur.id } });
      for (const f of fipUsers) {
        const port = f.rec.port_id ? await repos.ports.find(f.rec.port_id) : undefined;
        if (port?.rec.fixed_ips.some((x) => x.subnet_id === itf.subnet_id))
          throw E.routerInterfaceInUseByFip(cur.id, itf.subnet_id);
      }
      const port = await repos.ports.find(itf.port_id);
      networkId = port?.rec.network_id ?? '';
      removed = itf;
      const rec: Router = {
        ...cur.rec,
        interfaces: cur.rec.interfaces.filter((i) => i !== itf),
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      };
      return [...(port ? await svc.deletePortOps(port) : []), repos.routers.updateOp(cur, rec)];
    });
    return {
      id: router.id,
      tenant_id: router.project,
      project_id: router.project,
      port_id: removed.port_id,
      network_id: networkId,
      subnet_id: removed.subnet_id,
      subnet_ids: [removed.subnet_id],
    };
  });
}
