import { createHash } from 'node:crypto';
import { ConflictError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import type { Caller } from '../core/http.ts';
import { newId, newMac } from '../core/ids.ts';
import type {
  FixedIp,
  FloatingIp,
  Network,
  Port,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
} from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { routerOnSubnetKey } from '../core/repos.ts';
import { neutronErrors as E } from './errors.ts';
import { Ipam } from './ipam.ts';

/** Neutron's quota resource names. */
export type NeutronResource =
  'network' | 'subnet' | 'port' | 'router' | 'floatingip' | 'security_group' | 'security_group_rule';

/** Arguments of {@link NetworkService.preparePort}. */
export interface PortRequest {
  /** Namespace the port is stored in. */
  project: string;
  /** `tenant_id` shown ('' for ports owned by no project). */
  tenantId: string;
  network: Row<Network>;
  name?: string;
  description?: string;
  fixedIps?: { subnet_id?: string; ip_address?: string }[];
  securityGroups?: string[];
  deviceId?: string;
  deviceOwner?: string;
  macAddress?: string;
  adminStateUp?: boolean;
  portSecurityEnabled?: boolean;
  allowedAddressPairs?: { ip_address: string; mac_address?: string }[];
  vnicType?: string;
  hostId?: string;
  profile?: Record<string, unknown>;
  tags?: string[];
  dnsName?: string;
  /** Skip the port quota (ports Neutron or Nova create on the user's behalf count too; router ports don't). */
  skipQuota?: boolean;
}

/** A stable UUID derived from text (the default security group of a project). */
export function derivedUuid(text: string): string {
  const h = createHash('sha1').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Neutron's internals, shared by its routes, by Nova (ports of servers) and by Octavia
 * (VIP ports): visibility, look-ups, ports with their addresses, the default security group,
 * quotas, floating-IP reachability.
 */
export class NetworkService {
  readonly ipam: Ipam;

  constructor(private readonly ctx: CloudContext) {
    this.ipam = new Ipam(ctx);
  }

  private get repos() {
    return this.ctx.repos;
  }

  /** Networks a caller may see: own, shared, external; admins see all. */
  canSeeNetwork(caller: Caller, row: Row<Network>): boolean {
    return caller.isAdmin || row.project === caller.project || row.rec.shared || row.rec.external;
  }

  /** Networks a caller may put ports on: own or shared (admins: any). */
  canUseNetwork(caller: Caller, row: Row<Network>): boolean {
    return caller.isAdmin || row.project === caller.project || row.rec.shared;
  }

  ownsOrAdmin(caller: Caller, project: string): boolean {
    return caller.isAdmin || project === caller.project;
  }

  async getNetwork(caller: Caller, id: string): Promise<Row<Network>> {
    const row = await this.repos.networks.find(id);
    if (!row || !this.canSeeNetwork(caller, row)) throw E.networkNotFound(id);
    return row;
  }

  async getSubnet(caller: Caller, id: string): Promise<Row<Subnet>> {
    const row = await this.repos.subnets.find(id);
    if (!row) throw E.subnetNotFound(id);
    if (!this.ownsOrAdmin(caller, row.project)) {
      const net = await this.repos.networks.find(row.rec.network_id);
      if (!net || !this.canSeeNetwork(caller, net)) throw E.subnetNotFound(id);
    }
    return row;
  }

  async getPort(caller: Caller, id: string): Promise<Row<Port>> {
    const row = await this.repos.ports.find(id);
    if (!row || !this.ownsOrAdmin(caller, row.project)) throw E.portNotFound(id);
    return row;
  }

  async getRouter(caller: Caller, id: string): Promise<Row<Router>> {
    const row = await this.repos.routers.find(id);
    if (!row || !this.ownsOrAdmin(caller, row.project)) throw E.routerNotFound(id);
    return row;
  }

  async getSecurityGroup(caller: Caller, id: string): Promise<Row<SecurityGroup>> {
    const row = await this.repos.securityGroups.find(id);
    if (!row || !this.ownsOrAdmin(caller, row.project)) throw E.securityGroupNotFound(id);
    return row;
  }

  async getFloatingIp(caller: Caller, id: string): Promise<Row<FloatingIp>> {
    const row = await this.repos.floatingIps.find(id);
    if (!row || !this.ownsOrAdmin(caller, row.project)) throw E.floatingIpNotFound(id);
    return row;
  }

  /** Subnets of a network, in creation order. */
  async subnetsOf(network: Row<Network>): Promise<Row<Subnet>[]> {
    const out: Row<Subnet>[] = [];
    for (const id of network.rec.subnets) {
      const s = await this.repos.subnets.find(id);
      if (s) out.push(s);
    }
    return out;
  }

  /** Current use of a Neutron quota resource by a project. */
  async usage(project: string, resource: NeutronResource): Promise<number> {
    switch (resource) {
      case 'network':
        return this.repos.networks.count(project);
      case 'subnet':
        return this.repos.subnets.count(project);
      case 'port':
        // counted, not listed, so that a port create stays one indexed read (router gateway ports count too)
        return this.repos.ports.count(project);
      case 'router':
        return this.repos.routers.count(project);
      case 'floatingip':
        return this.repos.floatingIps.count(project);
      case 'security_group':
        return this.repos.securityGroups.count(project);
      case 'security_group_rule':
        return this.repos.securityGroupRules.count(project);
    }
  }

  /** OverQuota (409) when adding `adding` of `resource` would exceed the project's limit. */
  async checkQuota(project: string, resource: NeutronResource, adding = 1): Promise<void> {
    const limit = await this.ctx.quotas.limit(project, 'network', resource);
    if (limit < 0) return;
    if ((await this.usage(project, resource)) + adding > limit) throw E.overQuota([resource]);
  }

  /** The project's `default` security group, created (with Neutron's four default rules) on first use. */
  async ensureDefaultSecurityGroup(project: string): Promise<Row<SecurityGroup>> {
    const id = derivedUuid(`default-security-group:${project}`);
    const existing = await this.repos.securityGroups.get(project, id);
    if (existing) return existing;
    const now = nowIso(this.ctx);
    const sg: SecurityGroup = {
      id,
      tenant_id: project,
      name: 'default',
      description: 'Default security group',
      tags: [],
      stateful: true,
      created_at: now,
      updated_at: now,
      revision_number: 1,
    };
    const rules: SecurityGroupRule[] = (['IPv4', 'IPv6'] as const).flatMap((ethertype) =>
      (['egress', 'ingress'] as const).map((direction) => ({
        id: newId(),
        tenant_id: project,
        security_group_id: id,
        direction,
        ethertype,
        protocol: null,
        port_range_min: null,
        port_range_max: null,
        remote_ip_prefix: null,
        remote_group_id: direction === 'ingress' ? id : null,
        description: '',
        created_at: now,
        updated_at: now,
        revision_number: 0,
      })),
    );
    const ops: WriteOp[] = [
      this.repos.securityGroups.createOp(project, id, sg),
      ...rules.map((r) => this.repos.securityGroupRules.createOp(project, r.id, r)),
    ];
    try {
      await this.ctx.store.commit(ops);
    } catch (err) {
      if (!(err instanceof ConflictError && err.code === 'AlreadyExists')) throw err;
    }
    return (await this.repos.securityGroups.get(project, id))!;
  }

  /** Rules of a security group. */
  async rulesOf(sg: Row<SecurityGroup>): Promise<Row<SecurityGroupRule>[]> {
    return this.repos.securityGroupRules.list({ project: sg.project, labels: { security_group_id: sg.id } });
  }

  /**
   * Build a new port: validates network/subnets/addresses/security groups and returns the record
   * with the writes (port + address allocations) to commit.
   */
  async preparePort(req: PortRequest): Promise<{ rec: Port; ops: WriteOp[] }> {
    const net = req.network;
    const id = newId();
    const subnets = await this.subnetsOf(net);
    let requests: { subnet_id: string; ip_address?: string }[];
    if (req.fixedIps !== undefined) {
      requests = [];
      for (const f of req.fixedIps) {
        if (f.subnet_id !== undefined) {
          const s = subnets.find((x) => x.id === f.subnet_id);
          if (!s)
            throw E.invalidInput(
              `Failed to create port on network ${net.id}, because fixed_ips included invalid subnet ${f.subnet_id}`,
            );
          requests.push({
            subnet_id: s.id,
            ...(f.ip_address !== undefined ? { ip_address: f.ip_address } : {}),
          });
        } else if (f.ip_address !== undefined) {
          const s = subnets.find((x) => this.subnetContains(x, f.ip_address!));
          if (!s) {
            throw new ConflictError(
              `IP address ${f.ip_address} is not a valid IP for the specified network.`,
              { code: 'InvalidIpForNetwork' },
            );
          }
          requests.push({ subnet_id: s.id, ip_address: f.ip_address });
        }
      }
    } else {
      const first = subnets[0];
      requests = first ? [{ subnet_id: first.id }] : [];
    }
    const { fixedIps, ops } = await this.ipam.allocateAll(subnets, requests, id);
    const owner = req.deviceOwner ?? '';
    const portSecurity = req.portSecurityEnabled ?? net.rec.port_security_enabled;
    let sgs: string[] = [];
    if (req.securityGroups !== undefined) {
      if (req.securityGroups.length > 0 && !portSecurity) {
        throw new ConflictError(
          `Port has security group associated. Cannot disable port security or ip address until security group is removed`,
          {
            code: 'PortSecurityAndIPRequiredForSecurityGroups',
          },
        );
      }
      for (const sgId of req.securityGroups) {
        const sg = await this.repos.securityGroups.find(sgId);
        if (!sg || (sg.project !== req.project && req.tenantId !== '')) throw E.securityGroupNotFound(sgId);
      }
      sgs = [...new Set(req.securityGroups)];
    } else if (portSecurity && !owner.startsWith('network:') && req.tenantId !== '') {
      sgs = [(await this.ensureDefaultSecurityGroup(req.project)).id];
    }
    if (!req.skipQuota) await this.checkQuota(req.project, 'port');
    const now = nowIso(this.ctx);
    const rec: Port = {
      id,
      tenant_id: req.tenantId,
      name: req.name ?? '',
      description: req.description ?? '',
      tags: req.tags ?? [],
      created_at: now,
      updated_at: now,
      revision_number: 1,
      network_id: net.id,
      mac_address: req.macAddress ?? newMac(),
      fixed_ips: fixedIps,
      device_id: req.deviceId ?? '',
      device_owner: owner,
      security_groups: sgs,
      admin_state_up: req.adminStateUp ?? true,
      port_security_enabled: portSecurity,
      allowed_address_pairs: (req.allowedAddressPairs ?? []).map((a) => ({
        ip_address: a.ip_address,
        mac_address: a.mac_address ?? '',
      })),
      binding_host_id: req.hostId ?? '',
      binding_vnic_type: req.vnicType ?? 'normal',
      binding_profile: req.profile ?? {},
      status: owner.startsWith('network:router') ? 'ACTIVE' : 'DOWN',
      dns_name: req.dnsName ?? '',
    };
    for (const pair of rec.allowed_address_pairs)
      if (pair.mac_address === '') pair.mac_address = rec.mac_address;
    ops.unshift(this.repos.ports.createOp(req.project, id, rec));
    return { rec, ops };
  }

  /** True when `ip` lies in the subnet's CIDR. */
  subnetContains(subnet: Row<Subnet>, ip: string): boolean {
    const [net, bits] = subnet.rec.cidr.split('/');
    const toN = (s: string) => s.split('.').reduce((n, o) => n * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(bits));
    const n = toN(ip);
    return n >= toN(net!) && n < toN(net!) + size;
  }

  /** Create a port (with retries when a concurrent allocation took the same address). */
  async createPort(req: PortRequest): Promise<Row<Port>> {
    for (let attempt = 0; ; attempt++) {
      const { rec, ops } = await this.preparePort(req);
      try {
        await this.ctx.store.commit(ops);
        return (await this.repos.ports.get(req.project, rec.id))!;
      } catch (err) {
        if (
          !(err instanceof ConflictError && err.code === 'AlreadyExists') ||
          attempt >= 10 ||
          req.fixedIps?.some((f) => f.ip_address)
        )
          throw err;
      }
    }
  }

  /** Writes that delete a port: its address allocations, the port, and floating IPs become unassociated. */
  async deletePortOps(port: Row<Port>): Promise<WriteOp[]> {
    const ops = await this.ipam.releaseOps(port.id, port.rec.fixed_ips);
    const now = nowIso(this.ctx);
    for (const fip of await this.floatingIpsOfPort(port.id)) {
      ops.push(
        this.repos.floatingIps.updateOp(
          fip,
          {
            ...fip.rec,
            port_id: null,
            fixed_ip_address: null,
            router_id: null,
            status: 'DOWN',
            updated_at: now,
            revision_number: fip.rec.revision_number + 1,
          },
          { port_id: '' },
        ),
      );
    }
    ops.push(this.repos.ports.deleteOp(port));
    return ops;
  }

  async deletePort(port: Row<Port>): Promise<void> {
    await this.ctx.store.commit(await this.deletePortOps(port));
  }

  /** Floating IPs associated with a port. */
  async floatingIpsOfPort(portId: string): Promise<Row<FloatingIp>[]> {
    return this.repos.floatingIps.list({ labels: { port_id: portId } });
  }

  /** Ports on a network (every project). */
  async portsOnNetwork(networkId: string): Promise<Row<Port>[]> {
    return this.repos.ports.list({ labels: { network_id: networkId } });
  }

  /** Ports bound to a device (server, router, load balancer). */
  async portsOfDevice(project: string | undefined, deviceId: string): Promise<Row<Port>[]> {
    return this.repos.ports.list({
      ...(project !== undefined ? { project } : {}),
      labels: { device_id: deviceId },
    });
  }

  /** Set a port's binding state (Nova binds ports as a server becomes active). */
  async updatePort(port: Row<Port>, patch: Partial<Port>): Promise<Row<Port>> {
    const rec: Port = {
      ...port.rec,
      ...patch,
      updated_at: nowIso(this.ctx),
      revision_number: port.rec.revision_number + 1,
    };
    return this.repos.ports.update(port, rec);
  }

  /** Routers with an interface on a subnet. */
  async routersOnSubnet(subnetId: string): Promise<Row<Router>[]> {
    return (await this.repos.routers.list({ labels: { [routerOnSubnetKey(subnetId)]: 'true' } })).filter(
      (r) => r.rec.interfaces.some((i) => i.subnet_id === subnetId),
    );
  }

  /**
   * Neutron's floating-IP routing rule: a router must connect the port's subnet to the floating
   * IP's external network; the one whose interface is the subnet's gateway wins.
   */
  async routerForFloatingIp(port: Row<Port>, fixed: FixedIp, externalNetworkId: string): Promise<string> {
    const subnet = await this.repos.subnets.find(fixed.subnet_id);
    const candidates = (await this.routersOnSubnet(fixed.subnet_id)).filter(
      (r) => r.rec.external_gateway_info?.network_id === externalNetworkId,
    );
    let first: string | undefined;
    for (const r of candidates) {
      for (const itf of r.rec.interfaces.filter((i) => i.subnet_id === fixed.subnet_id)) {
        const p = await this.repos.ports.find(itf.port_id);
        const ip = p?.rec.fixed_ips.find((f) => f.subnet_id === fixed.subnet_id)?.ip_address;
        if (ip !== undefined && ip === subnet?.rec.gateway_ip) return r.id;
      }
      first ??= r.id;
    }
    if (first) return first;
    throw E.externalNotReachable(externalNetworkId, fixed.subnet_id, port.id);
  }
}
