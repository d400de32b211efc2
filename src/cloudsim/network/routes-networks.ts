import { z } from 'zod';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, qAll, type ServiceRoutes } from '../core/http.ts';
import { cidrsOverlap, defaultPools, formatIpv4, newId, parseCidr4, parseIpv4 } from '../core/ids.ts';
import type { Network, Subnet } from '../core/records.ts';
import { parseNeutronBody, CreateTags } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import { allocationsOnSubnet } from './ipam.ts';
import { narrowing, neutronList, prefilter, projectFields } from './listing.ts';
import type { NetworkService } from './service.ts';
import { networkView, subnetView } from './views.ts';

const NetworkCreate = z.object({
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  admin_state_up: z.boolean().default(true),
  shared: z.boolean().default(false),
  'router:external': z.boolean().default(false),
  is_default: z.boolean().default(false),
  mtu: z.number().int().min(68).max(9000).optional(),
  port_security_enabled: z.boolean().default(true),
  availability_zone_hints: z.array(z.string()).default([]),
  'provider:network_type': z.string().optional(),
  'provider:physical_network': z.string().nullable().optional(),
  'provider:segmentation_id': z.number().int().nullable().optional(),
  dns_domain: z.string().default(''),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const NetworkUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  admin_state_up: z.boolean().optional(),
  shared: z.boolean().optional(),
  'router:external': z.boolean().optional(),
  is_default: z.boolean().optional(),
  mtu: z.number().int().min(68).max(9000).optional(),
  port_security_enabled: z.boolean().optional(),
  dns_domain: z.string().optional(),
});

const IpRange = z.object({ start: z.string(), end: z.string() });
const Route = z.object({ destination: z.string(), nexthop: z.string() });

const SubnetCreate = z.object({
  network_id: z.string(),
  cidr: z.string().optional(),
  ip_version: z.union([z.literal(4), z.literal(6), z.literal('4'), z.literal('6')]).default(4),
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  gateway_ip: z.string().nullable().optional(),
  allocation_pools: z.array(IpRange).optional(),
  enable_dhcp: z.boolean().default(true),
  dns_nameservers: z.array(z.string()).default([]),
  host_routes: z.array(Route).default([]),
  service_types: z.array(z.string()).default([]),
  subnetpool_id: z.string().nullable().optional(),
  prefixlen: z.number().int().optional(),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const SubnetUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  gateway_ip: z.string().nullable().optional(),
  allocation_pools: z.array(IpRange).optional(),
  enable_dhcp: z.boolean().optional(),
  dns_nameservers: z.array(z.string()).optional(),
  host_routes: z.array(Route).optional(),
});

/** The project a create acts in: the token's, or (admins only) the one named in the body. */
export function targetProject(
  caller: { project: string; isAdmin: boolean },
  body: { tenant_id?: string | undefined; project_id?: string | undefined },
): string {
  const wanted = body.project_id ?? body.tenant_id;
  if (wanted === undefined || wanted === caller.project) return caller.project;
  if (!caller.isAdmin) throw E.notAuthorized(`(rule:create_network) is disallowed by policy`);
  return wanted;
}

export function registerNetworkRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  const repos = ctx.repos;

  const bump = <T extends { updated_at: string; revision_number: number }>(rec: T): T => ({
    ...rec,
    updated_at: nowIso(ctx),
    revision_number: rec.revision_number + 1,
  });

  // --- networks ---

  r.get('/v2.0/networks', 'networks.list', async (req) => {
    const caller = callerOf(req);
    const rows = prefilter(req, await repos.networks.list({ labels: narrowing(req, ['name']) }), [
      'name',
    ]).filter((n) => svc.canSeeNetwork(caller, n));
    return neutronList(
      req,
      'networks',
      rows.map((n) => networkView(n, caller.isAdmin)),
    );
  });

  r.get('/v2.0/networks/:id', 'networks.show', async (req) => {
    const caller = callerOf(req);
    return {
      network: projectFields(req, networkView(await svc.getNetwork(caller, p(req, 'id')), caller.isAdmin)),
    };
  });

  r.post('/v2.0/networks', 'networks.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'network', NetworkCreate);
    if ((b['router:external'] || b.shared || b['provider:network_type'] !== undefined) && !caller.isAdmin) {
      throw E.notAuthorized(
        `(rule:create_network and rule:create_network:${b['router:external'] ? 'router:external' : b.shared ? 'shared' : 'provider:network_type'}) is disallowed by policy`,
      );
    }
    const project = targetProject(caller, b);
    await svc.checkQuota(project, 'network');
    const now = nowIso(ctx);
    const id = newId();
    const rec: Network = {
      id,
      tenant_id: project,
      name: b.name,
      description: b.description,
      tags: b.tags ?? [],
      created_at: now,
      updated_at: now,
      revision_number: 1,
      admin_state_up: b.admin_state_up,
      shared: b.shared,
      external: b['router:external'],
      is_default: b.is_default,
      mtu: b.mtu ?? 1442,
      port_security_enabled: b.port_security_enabled,
      subnets: [],
      status: 'ACTIVE',
      availability_zone_hints: b.availability_zone_hints,
      network_type: b['provider:network_type'] ?? (b['router:external'] ? 'flat' : 'geneve'),
      physical_network: b['provider:physical_network'] ?? (b['router:external'] ? 'public' : null),
      segmentation_id:
        b['provider:segmentation_id'] ??
        (b['router:external'] ? null : 1000 + Math.floor(Math.random() * 60000)),
      dns_domain: b.dns_domain,
    };
    const row = await repos.networks.create(project, id, rec);
    void reply.code(201);
    return { network: networkView(row, caller.isAdmin) };
  });

  r.put('/v2.0/networks/:id', 'networks.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'network', NetworkUpdate);
    const net = await svc.getNetwork(caller, p(req, 'id'));
    if (!svc.ownsOrAdmin(caller, net.project)) throw E.networkNotFound(net.id);
    if ((b['router:external'] !== undefined || b.shared !== undefined) && !caller.isAdmin) {
      throw E.notAuthorized(
        `(rule:update_network and rule:update_network:${b.shared !== undefined ? 'shared' : 'router:external'}) is disallowed by policy`,
      );
    }
    const row = await repos.networks.mutate(net.project, net.id, (cur) => {
      const rec = bump({ ...cur.rec });
      if (b.name !== undefined) rec.name = b.name;
      if (b.description !== undefined) rec.description = b.description;
      if (b.admin_state_up !== undefined) rec.admin_state_up = b.admin_state_up;
      if (b.shared !== undefined) rec.shared = b.shared;
      if (b['router:external'] !== undefined) rec.external = b['router:external'];
      if (b.is_default !== undefined) rec.is_default = b.is_default;
      if (b.mtu !== undefined) rec.mtu = b.mtu;
      if (b.port_security_enabled !== undefined) rec.port_security_enabled = b.port_security_enabled;
      if (b.dns_domain !== undefined) rec.dns_domain = b.dns_domain;
      return rec;
    });
    return { network: networkView(row, caller.isAdmin) };
  });

  r.delete('/v2.0/networks/:id', 'networks.delete', async (req, reply) => {
    const caller = callerOf(req);
    const net = await svc.getNetwork(caller, p(req, 'id'));
    if (!svc.ownsOrAdmin(caller, net.project)) throw E.networkNotFound(net.id);
    if ((await svc.portsOnNetwork(net.id)).length > 0) throw E.networkInUse(net.id);
    const subnets = await svc.subnetsOf(net);
    for (const s of subnets) if ((await allocationsOnSubnet(ctx, s)).length > 0) throw E.networkInUse(net.id);
    await ctx.store.commit([...subnets.map((s) => repos.subnets.deleteOp(s)), repos.networks.deleteOp(net)]);
    return reply.code(204).send();
  });

  // --- subnets ---

  r.get('/v2.0/subnets', 'subnets.list', async (req) => {
    const caller = callerOf(req);
    // One network's subnets (how clients look them up) are read through the network_id label.
    const wantedNets = qAll(req, 'network_id');
    const one = wantedNets.length === 1 ? wantedNets[0]! : undefined;
    const found = one !== undefined ? await repos.networks.find(one) : undefined;
    const nets = one !== undefined ? (found ? [found] : []) : await repos.networks.list();
    const visibleNets = new Set(nets.filter((n) => svc.canSeeNetwork(caller, n)).map((n) => n.id));
    const subnets = await repos.subnets.list(one !== undefined ? { labels: { network_id: one } } : {});
    const rows = prefilter(req, subnets, ['name']).filter(
      (s) => svc.ownsOrAdmin(caller, s.project) || visibleNets.has(s.rec.network_id),
    );
    return neutronList(req, 'subnets', rows.map(subnetView));
  });

  r.get('/v2.0/subnets/:id', 'subnets.show', async (req) => {
    const caller = callerOf(req);
    return { subnet: projectFields(req, subnetView(await svc.getSubnet(caller, p(req, 'id')))) };
  });

  r.post('/v2.0/subnets', 'subnets.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'subnet', SubnetCreate);
    const project = targetProject(caller, b);
    const net = await svc.getNetwork(caller, b.network_id);
    if (!svc.ownsOrAdmin(caller, net.project)) {
      throw E.notAuthorized(
        `(rule:create_subnet and rule:create_subnet:network_owner) is disallowed by policy`,
      );
    }
    if (Number(b.ip_version) !== 4)
      throw E.invalidInput('the embedded cloud supports IPv4 subnets only (ip_version 4)');
    if (b.cidr === undefined)
      throw E.badRequest('subnet', 'a cidr must be specified in the absence of a subnet pool');
    const cidr = parseCidrOrThrow(b.cidr);
    if (cidr.prefix > 30) throw E.invalidInput(`Invalid CIDR ${cidr.text} for IPv4 subnet`);
    for (const other of await svc.subnetsOf(net)) {
      const o = parseCidr4(other.rec.cidr)!;
      if (cidrsOverlap(o, cidr)) {
        throw E.invalidInput(
          `Requested subnet with cidr: ${cidr.text} for network: ${net.id} overlaps with another subnet`,
        );
      }
    }
    let gateway: string | null;
    if (b.gateway_ip === null) gateway = null;
    else if (b.gateway_ip === undefined) gateway = formatIpv4(cidr.network + 1);
    else {
      const g = parseIpv4(b.gateway_ip);
      if (g === undefined)
        throw E.invalidInputFor('gateway_ip', `'${b.gateway_ip}' is not a valid IP address`);
      gateway = formatIpv4(g);
    }
    const gw = gateway === null ? undefined : parseIpv4(gateway);
    let pools = b.allocation_pools;
    if (pools !== undefined) checkPools(pools, cidr, gw);
    else pools = defaultPools(cidr, gw);
    await svc.checkQuota(project, 'subnet');
    const now = nowIso(ctx);
    const id = newId();
    const rec: Subnet = {
      id,
      tenant_id: project,
      name: b.name,
      description: b.description,
      tags: b.tags ?? [],
      created_at: now,
      updated_at: now,
      revision_number: 0,
      network_id: net.id,
      ip_version: 4,
      cidr: cidr.text,
      gateway_ip: gateway,
      allocation_pools: pools,
      enable_dhcp: b.enable_dhcp,
      dns_nameservers: b.dns_nameservers,
      host_routes: b.host_routes,
      service_types: b.service_types,
    };
    const row = await repos.subnets.create(project, id, rec, { labels: { network_id: net.id } });
    try {
      await repos.networks.mutate(net.project, net.id, (cur) =>
        bump({ ...cur.rec, subnets: [...cur.rec.subnets, id] }),
      );
    } catch (err) {
      await repos.subnets.remove(row);
      throw err;
    }
    void reply.code(201);
    return { subnet: subnetView(row) };
  });

  r.put('/v2.0/subnets/:id', 'subnets.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'subnet', SubnetUpdate);
    const sub = await svc.getSubnet(caller, p(req, 'id'));
    if (!svc.ownsOrAdmin(caller, sub.project)) throw E.subnetNotFound(sub.id);
    const row = await repos.subnets.mutate(sub.project, sub.id, (cur) => {
      const rec = bump({ ...cur.rec });
      const cidr = parseCidr4(rec.cidr)!;
      if (b.name !== undefined) rec.name = b.name;
      if (b.description !== undefined) rec.description = b.description;
      if (b.enable_dhcp !== undefined) rec.enable_dhcp = b.enable_dhcp;
      if (b.dns_nameservers !== undefined) rec.dns_nameservers = b.dns_nameservers;
      if (b.host_routes !== undefined) rec.host_routes = b.host_routes;
      if (b.gateway_ip !== undefined) {
        if (b.gateway_ip === null) rec.gateway_ip = null;
        else {
          const g = parseIpv4(b.gateway_ip);
          if (g === undefined)
            throw E.invalidInputFor('gateway_ip', `'${b.gateway_ip}' is not a valid IP address`);
          rec.gateway_ip = formatIpv4(g);
        }
      }
      if (b.allocation_pools !== undefined) {
        checkPools(b.allocation_pools, cidr, rec.gateway_ip ? parseIpv4(rec.gateway_ip) : undefined);
        rec.allocation_pools = b.allocation_pools;
      }
      return rec;
    });
    return { subnet: subnetView(row) };
  });

  r.delete('/v2.0/subnets/:id', 'subnets.delete', async (req, reply) => {
    const caller = callerOf(req);
    const sub = await svc.getSubnet(caller, p(req, 'id'));
    if (!svc.ownsOrAdmin(caller, sub.project)) throw E.subnetNotFound(sub.id);
    if ((await allocationsOnSubnet(ctx, sub)).length > 0) throw E.subnetInUse(sub.id);
    await repos.subnets.remove(sub);
    const net = await repos.networks.find(sub.rec.network_id);
    if (net)
      await repos.networks.mutate(net.project, net.id, (cur) =>
        bump({ ...cur.rec, subnets: cur.rec.subnets.filter((s) => s !== sub.id) }),
      );
    return reply.code(204).send();
  });
}

function parseCidrOrThrow(text: string) {
  const cidr = parseCidr4(text);
  if (cidr) return cidr;
  const loose = parseCidr4(text, true);
  if (loose)
    throw E.invalidInputFor(
      'cidr',
      `'${text}' isn't a recognized IP subnet cidr, '${loose.text}' is recommended`,
    );
  throw E.invalidInputFor('cidr', `'${text}' is not a valid IP subnet`);
}

function checkPools(
  pools: { start: string; end: string }[],
  cidr: NonNullable<ReturnType<typeof parseCidr4>>,
  gateway: number | undefined,
): void {
  for (const pool of pools) {
    const s = parseIpv4(pool.start);
    const e = parseIpv4(pool.end);
    if (s === undefined || e === undefined || s > e)
      throw E.invalidInput(`Invalid allocation pool ${pool.start}-${pool.end}`);
    if (s < cidr.network || e > cidr.last)
      throw E.invalidInput(
        `The allocation pool ${pool.start}-${pool.end} spans beyond the subnet cidr ${cidr.text}`,
      );
    if (gateway !== undefined && gateway >= s && gateway <= e) {
      throw E.invalidInput(
        `Gateway ip ${formatIpv4(gateway)} conflicts with allocation pool ${pool.start}-${pool.end}`,
      );
    }
  }
}
