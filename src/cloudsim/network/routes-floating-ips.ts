import { z } from 'zod';
import { ConflictError, InputError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type Caller, type ServiceRoutes } from '../core/http.ts';
import { newId } from '../core/ids.ts';
import type { FloatingIp } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { parseNeutronBody, CreateTags } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import { narrowing, neutronList, prefilter, projectFields } from './listing.ts';
import { targetProject } from './routes-networks.ts';
import type { NetworkService } from './service.ts';
import { floatingIpView } from './views.ts';

const FipCreate = z.object({
  floating_network_id: z.string(),
  floating_ip_address: z.string().optional(),
  subnet_id: z.string().optional(),
  port_id: z.string().nullable().optional(),
  fixed_ip_address: z.string().nullable().optional(),
  description: z.string().max(255).default(''),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const FipUpdate = z.object({
  port_id: z.string().nullable().optional(),
  fixed_ip_address: z.string().nullable().optional(),
  description: z.string().max(255).optional(),
});

/** The association part of a floating IP: port, fixed IP, router. */
type Assoc = Pick<FloatingIp, 'port_id' | 'fixed_ip_address' | 'router_id'>;

export function registerFloatingIpRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  const repos = ctx.repos;

  async function portDetails(fip: Row<FloatingIp>) {
    if (!fip.rec.port_id) return null;
    const port = await repos.ports.find(fip.rec.port_id);
    if (!port) return null;
    const x = port.rec;
    return {
      name: x.name,
      network_id: x.network_id,
      mac_address: x.mac_address,
      admin_state_up: x.admin_state_up,
      status: x.status,
      device_id: x.device_id,
      device_owner: x.device_owner,
    };
  }

  /** Neutron's checks before associating (`_check_and_get_fip_assoc`). */
  async function association(
    caller: Caller,
    fipId: string,
    address: string,
    networkId: string,
    project: string,
    portId: string,
    fixedIp: string | null | undefined,
  ): Promise<Assoc> {
    const port = await repos.ports.find(portId);
    if (!port || (!caller.isAdmin && port.rec.tenant_id !== project)) throw E.portNotFound(portId);
    const v4 = port.rec.fixed_ips.filter((f) => !f.ip_address.includes(':'));
    let fixed;
    if (fixedIp) {
      fixed = v4.find((f) => f.ip_address === fixedIp);
      if (!fixed) throw E.badRequest('floatingip', `Port ${portId} does not have fixed ip ${fixedIp}`);
    } else {
      if (v4.length === 0)
        throw E.badRequest('floatingip', `Port ${portId} does not have any fixed IPv4 address`);
      if (v4.length > 1) {
        throw E.badRequest(
          'floatingip',
          `Port ${portId} has multiple fixed IPv4 addresses.  Must provide a specific IPv4 address when assigning a floating IP`,
        );
      }
      fixed = v4[0]!;
    }
    const existing = (await svc.floatingIpsOfPort(portId)).find(
      (f) =>
        f.id !== fipId &&
        f.rec.fixed_ip_address === fixed.ip_address &&
        f.rec.floating_network_id === networkId,
    );
    if (existing) throw E.fipPortAlreadyAssociated(address, fipId, portId, fixed.ip_address, networkId);
    const routerId = await svc.routerForFloatingIp(port, fixed, networkId);
    return { port_id: portId, fixed_ip_address: fixed.ip_address, router_id: routerId };
  }

  r.get('/v2.0/floatingips', 'floatingips.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['description']);
    const rows = caller.isAdmin
      ? await repos.floatingIps.list({ labels })
      : await repos.floatingIps.list({ project: caller.project, labels });
    const views = [];
    for (const f of prefilter(req, rows, ['description', 'port_id', 'floating_ip_address']))
      views.push(floatingIpView(f, await portDetails(f)));
    return neutronList(req, 'floatingips', views);
  });

  r.get('/v2.0/floatingips/:id', 'floatingips.show', async (req) => {
    const caller = callerOf(req);
    const fip = await svc.getFloatingIp(caller, p(req, 'id'));
    return { floatingip: projectFields(req, floatingIpView(fip, await portDetails(fip))) };
  });

  r.post('/v2.0/floatingips', 'floatingips.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'floatingip', FipCreate);
    const project = targetProject(caller, b);
    const net = await repos.networks.find(b.floating_network_id);
    if (!net || !svc.canSeeNetwork(caller, net)) throw E.networkNotFound(b.floating_network_id);
    if (!net.rec.external)
      throw E.badRequest('floatingip', `Network ${net.id} is not a valid external network`);
    if (b.floating_ip_address !== undefined && !caller.isAdmin) {
      throw E.notAuthorized(
        '(rule:create_floatingip and rule:create_floatingip:floating_ip_address) is disallowed by policy',
      );
    }
    await svc.checkQuota(project, 'floatingip');
    let subnets = await svc.subnetsOf(net);
    if (b.subnet_id) {
      subnets = subnets.filter((s) => s.id === b.subnet_id);
      if (subnets.length === 0)
        throw E.badRequest('floatingip', `Subnet ${b.subnet_id} is not on network ${net.id}`);
    }
    if (b.floating_ip_address) subnets = subnets.filter((s) => svc.subnetContains(s, b.floating_ip_address!));
    const id = newId();
    for (let attempt = 0; ; attempt++) {
      let alloc: Awaited<ReturnType<typeof svc.ipam.allocate>> | undefined;
      let subnetId = '';
      for (const s of subnets) {
        try {
          alloc = await svc.ipam.allocate(s, id, b.floating_ip_address);
          subnetId = s.id;
          break;
        } catch (err) {
          if (b.floating_ip_address !== undefined) throw err;
          if (!(err instanceof ConflictError && err.code === 'IpAddressGenerationFailure')) throw err;
        }
      }
      if (!alloc) {
        throw new InputError(`Unable to find any IP address on external network ${net.id}.`, {
          code: 'ExternalIpAddressExhausted',
        });
      }
      let assoc: Assoc = { port_id: null, fixed_ip_address: null, router_id: null };
      if (b.port_id)
        assoc = await association(caller, id, alloc.ip, net.id, project, b.port_id, b.fixed_ip_address);
      const now = nowIso(ctx);
      const rec: FloatingIp = {
        id,
        tenant_id: project,
        name: '',
        description: b.description,
        tags: b.tags ?? [],
        created_at: now,
        updated_at: now,
        revision_number: 0,
        floating_network_id: net.id,
        floating_ip_address: alloc.ip,
        floating_subnet_id: subnetId,
        ...assoc,
        status: assoc.port_id ? 'ACTIVE' : 'DOWN',
      };
      try {
        await ctx.store.commit([repos.floatingIps.createOp(project, id, rec), alloc.op]);
        break;
      } catch (err) {
        if (
          !(err instanceof ConflictError && err.code === 'AlreadyExists') ||
          attempt > 10 ||
          b.floating_ip_address
        )
          throw err;
      }
    }
    const row = (await repos.floatingIps.get(project, id))!;
    void reply.code(201);
    return { floatingip: floatingIpView(row, await portDetails(row)) };
  });

  r.put('/v2.0/floatingips/:id', 'floatingips.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'floatingip', FipUpdate);
    const fip = await svc.getFloatingIp(caller, p(req, 'id'));
    let assoc: Assoc | undefined;
    if (b.port_id === null) assoc = { port_id: null, fixed_ip_address: null, router_id: null };
    else if (b.port_id !== undefined) {
      assoc = await association(
        caller,
        fip.id,
        fip.rec.floating_ip_address,
        fip.rec.floating_network_id,
        fip.project,
        b.port_id,
        b.fixed_ip_address,
      );
    }
    const row = await repos.floatingIps.mutate(fip.project, fip.id, (cur) => {
      const rec: FloatingIp = {
        ...cur.rec,
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      };
      if (b.description !== undefined) rec.description = b.description;
      if (assoc) Object.assign(rec, assoc, { status: assoc.port_id ? 'ACTIVE' : 'DOWN' });
      return rec;
    });
    return { floatingip: floatingIpView(row, await portDetails(row)) };
  });

  r.delete('/v2.0/floatingips/:id', 'floatingips.delete', async (req, reply) => {
    const caller = callerOf(req);
    const fip = await svc.getFloatingIp(caller, p(req, 'id'));
    const subnet = await repos.subnets.find(fip.rec.floating_subnet_id);
    const ops = [repos.floatingIps.deleteOp(fip)];
    if (subnet) {
      const alloc = await repos.ipAllocations.get(
        subnet.project,
        `${subnet.id}_${fip.rec.floating_ip_address}`,
      );
      if (alloc) ops.push(repos.ipAllocations.deleteOp(alloc));
    }
    await ctx.store.commit(ops);
    return reply.code(204).send();
  });
}
