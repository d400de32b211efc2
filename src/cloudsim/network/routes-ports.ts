import { z } from 'zod';
import { ConflictError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type ServiceRoutes } from '../core/http.ts';
import type { Port } from '../core/records.ts';
import { parseNeutronBody, CreateTags } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import { neutronList, projectFields } from './listing.ts';
import { targetProject } from './routes-networks.ts';
import type { NetworkService } from './service.ts';
import { portView } from './views.ts';

const FixedIpReq = z.object({ subnet_id: z.string().optional(), ip_address: z.string().optional() });
const Pair = z.object({ ip_address: z.string(), mac_address: z.string().optional() });

const PortCreate = z.object({
  network_id: z.string(),
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  fixed_ips: z.array(FixedIpReq).optional(),
  security_groups: z.array(z.string()).nullable().optional(),
  device_id: z.string().default(''),
  device_owner: z.string().default(''),
  mac_address: z
    .string()
    .regex(/^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$/)
    .optional(),
  admin_state_up: z.boolean().default(true),
  port_security_enabled: z.boolean().optional(),
  allowed_address_pairs: z.array(Pair).default([]),
  'binding:vnic_type': z.string().default('normal'),
  'binding:host_id': z.string().optional(),
  'binding:profile': z.record(z.string(), z.unknown()).optional(),
  dns_name: z.string().default(''),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const PortUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  fixed_ips: z.array(FixedIpReq).optional(),
  security_groups: z.array(z.string()).nullable().optional(),
  device_id: z.string().optional(),
  device_owner: z.string().optional(),
  admin_state_up: z.boolean().optional(),
  port_security_enabled: z.boolean().optional(),
  allowed_address_pairs: z.array(Pair).nullable().optional(),
  'binding:host_id': z.string().optional(),
  'binding:profile': z.record(z.string(), z.unknown()).nullable().optional(),
  'binding:vnic_type': z.string().optional(),
  dns_name: z.string().optional(),
});

export function registerPortRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  const repos = ctx.repos;

  r.get('/v2.0/ports', 'ports.list', async (req) => {
    const caller = callerOf(req);
    // A single network_id or device_id narrows the read through the store's label index; the
    // query's filters are all applied below as before.
    const query = req.query as Record<string, unknown>;
    const labels: Record<string, string> = {};
    for (const key of ['network_id', 'device_id'] as const)
      if (typeof query[key] === 'string') labels[key] = query[key];
    const rows = caller.isAdmin
      ? await repos.ports.list({ labels })
      : (await repos.ports.list({ project: caller.project, labels })).filter(
          (x) => x.rec.tenant_id === caller.project,
        );
    return neutronList(
      req,
      'ports',
      rows.map((x) => portView(x, caller.isAdmin)),
    );
  });

  r.get('/v2.0/ports/:id', 'ports.show', async (req) => {
    const caller = callerOf(req);
    const port = await svc.getPort(caller, p(req, 'id'));
    if (!caller.isAdmin && port.rec.tenant_id !== caller.project) throw E.portNotFound(port.id);
    return { port: projectFields(req, portView(port, caller.isAdmin)) };
  });

  r.post('/v2.0/ports', 'ports.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'port', PortCreate);
    const project = targetProject(caller, b);
    const net = await svc.getNetwork(caller, b.network_id);
    if (!svc.canUseNetwork(caller, net)) {
      throw E.notAuthorized(`(rule:create_port and rule:create_port:network_owner) is disallowed by policy`);
    }
    if (b['binding:host_id'] !== undefined && !caller.isAdmin)
      throw E.notAuthorized(
        '(rule:create_port and rule:create_port:binding:host_id) is disallowed by policy',
      );
    if (b.mac_address !== undefined) {
      const taken = (await svc.portsOnNetwork(net.id)).some(
        (x) => x.rec.mac_address === b.mac_address!.toLowerCase(),
      );
      if (taken) {
        throw new ConflictError(
          `Unable to complete operation for network ${net.id}. The mac address ${b.mac_address} is in use.`,
          { code: 'MacAddressInUse' },
        );
      }
    }
    const row = await svc.createPort({
      project,
      tenantId: project,
      network: net,
      name: b.name,
      description: b.description,
      ...(b.fixed_ips !== undefined ? { fixedIps: b.fixed_ips } : {}),
      ...(b.security_groups !== undefined ? { securityGroups: b.security_groups ?? [] } : {}),
      deviceId: b.device_id,
      deviceOwner: b.device_owner,
      ...(b.mac_address !== undefined ? { macAddress: b.mac_address.toLowerCase() } : {}),
      adminStateUp: b.admin_state_up,
      ...(b.port_security_enabled !== undefined ? { portSecurityEnabled: b.port_security_enabled } : {}),
      allowedAddressPairs: b.allowed_address_pairs,
      vnicType: b['binding:vnic_type'],
      ...(b['binding:host_id'] !== undefined ? { hostId: b['binding:host_id'] } : {}),
      ...(b['binding:profile'] !== undefined ? { profile: b['binding:profile'] } : {}),
      ...(b.tags !== undefined ? { tags: b.tags } : {}),
      dnsName: b.dns_name,
    });
    void reply.code(201);
    return { port: portView(row, caller.isAdmin) };
  });

  r.put('/v2.0/ports/:id', 'ports.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'port', PortUpdate);
    const port = await svc.getPort(caller, p(req, 'id'));
    if (b['binding:host_id'] !== undefined && !caller.isAdmin)
      throw E.notAuthorized(
        '(rule:update_port and rule:update_port:binding:host_id) is disallowed by policy',
      );
    if (b.security_groups) {
      for (const sgId of b.security_groups) {
        const sg = await repos.securityGroups.find(sgId);
        if (!sg || (sg.project !== port.project && !caller.isAdmin)) throw E.securityGroupNotFound(sgId);
      }
    }
    for (let attempt = 0; ; attempt++) {
      const cur = await svc.getPort(caller, port.id);
      const rec: Port = { ...cur.rec, updated_at: nowIso(ctx), revision_number: cur.rec.revision_number + 1 };
      if (b.name !== undefined) rec.name = b.name;
      if (b.description !== undefined) rec.description = b.description;
      if (b.device_id !== undefined) rec.device_id = b.device_id;
      if (b.device_owner !== undefined) rec.device_owner = b.device_owner;
      if (b.admin_state_up !== undefined) rec.admin_state_up = b.admin_state_up;
      if (b.port_security_enabled !== undefined) rec.port_security_enabled = b.port_security_enabled;
      if (b.security_groups !== undefined) rec.security_groups = [...new Set(b.security_groups ?? [])];
      if (!rec.port_security_enabled && rec.security_groups.length > 0 && b.port_security_enabled === false) {
        throw new ConflictError(
          'Port has security group associated. Cannot disable port security or ip address until security group is removed',
          {
            code: 'PortSecurityPortHasSecurityGroup',
          },
        );
      }
      if (b.allowed_address_pairs !== undefined) {
        rec.allowed_address_pairs = (b.allowed_address_pairs ?? []).map((a) => ({
          ip_address: a.ip_address,
          mac_address: a.mac_address ?? rec.mac_address,
        }));
      }
      if (b['binding:host_id'] !== undefined) rec.binding_host_id = b['binding:host_id'];
      if (b['binding:profile'] !== undefined) rec.binding_profile = b['binding:profile'] ?? {};
      if (b['binding:vnic_type'] !== undefined) rec.binding_vnic_type = b['binding:vnic_type'];
      if (b.dns_name !== undefined) rec.dns_name = b.dns_name;
      const ops = [];
      if (b.fixed_ips !== undefined) {
        const net = (await repos.networks.find(rec.network_id))!;
        const subnets = await svc.subnetsOf(net);
        const keep = rec.fixed_ips.filter((f) =>
          b.fixed_ips!.some(
            (w) =>
              w.ip_address === f.ip_address && (w.subnet_id === undefined || w.subnet_id === f.subnet_id),
          ),
        );
        const wanted = b.fixed_ips.filter((w) => !keep.some((k) => k.ip_address === w.ip_address));
        const release = rec.fixed_ips.filter((f) => !keep.includes(f));
        const requests: { subnet_id: string; ip_address?: string }[] = [];
        for (const w of wanted) {
          const s = w.subnet_id
            ? subnets.find((x) => x.id === w.subnet_id)
            : subnets.find((x) => w.ip_address !== undefined && svc.subnetContains(x, w.ip_address));
          if (!s)
            throw E.invalidInput(
              `Failed to update port ${rec.id}, because fixed_ips included invalid subnet ${w.subnet_id ?? w.ip_address ?? ''}`,
            );
          requests.push({
            subnet_id: s.id,
            ...(w.ip_address !== undefined ? { ip_address: w.ip_address } : {}),
          });
        }
        const alloc = await svc.ipam.allocateAll(subnets, requests, rec.id);
        ops.push(...(await svc.ipam.releaseOps(rec.id, release)), ...alloc.ops);
        rec.fixed_ips = [...keep, ...alloc.fixedIps];
      }
      ops.push(repos.ports.updateOp(cur, rec));
      try {
        await ctx.store.commit(ops);
        break;
      } catch (err) {
        if (!(err instanceof ConflictError && err.code === 'Conflict') || attempt > 10) throw err;
      }
    }
    return { port: portView((await repos.ports.find(port.id))!, caller.isAdmin) };
  });

  r.delete('/v2.0/ports/:id', 'ports.delete', async (req, reply) => {
    const caller = callerOf(req);
    const port = await svc.getPort(caller, p(req, 'id'));
    if (
      port.rec.device_owner === 'network:router_interface' ||
      port.rec.device_owner === 'network:router_gateway'
    ) {
      throw new ConflictError(
        `Port ${port.id} cannot be deleted directly via the port API: has device owner ${port.rec.device_owner}.`,
        {
          code: 'ServicePortInUse',
        },
      );
    }
    await svc.deletePort(port);
    return reply.code(204).send();
  });
}
