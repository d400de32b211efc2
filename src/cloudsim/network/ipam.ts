import { ConflictError, InputError } from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import type { CloudContext } from '../core/context.ts';
import { cidrContains, formatIpv4, parseCidr4, parseIpv4 } from '../core/ids.ts';
import type { FixedIp, Subnet } from '../core/records.ts';
import type { Row } from '../core/repo.ts';

/**
 * IP address management. Each allocated address is one `IpAllocation` row named
 * `<subnet id>_<address>` in the subnet's project, so the store's uniqueness makes a double
 * allocation impossible even across processes: the allocation rows are written in the same
 * commit as the port that holds them, and a lost race surfaces as AlreadyExists (retried).
 */
export class Ipam {
  /** Where to start looking next on each subnet (a hint; the store is the truth). */
  private readonly hints = new Map<string, number>();

  constructor(private readonly ctx: CloudContext) {}

  private allocName(subnetId: string, ip: string): string {
    return `${subnetId}_${ip}`;
  }

  /** True when the address is taken on the subnet. */
  async isAllocated(subnet: Row<Subnet>, ip: string): Promise<boolean> {
    return (
      (await this.ctx.repos.ipAllocations.get(subnet.project, this.allocName(subnet.id, ip))) !== undefined
    );
  }

  /**
   * Choose an address on `subnet` (the requested one, or the next free one in the allocation
   * pools) and return it with the write that records the allocation.
   */
  async allocate(
    subnet: Row<Subnet>,
    portId: string,
    requested?: string,
    exclude: ReadonlySet<string> = new Set(),
  ): Promise<{ ip: string; op: WriteOp }> {
    const s = subnet.rec;
    const cidr = parseCidr4(s.cidr)!;
    const mk = (ip: string) => ({
      ip,
      op: this.ctx.repos.ipAllocations.createOp(
        subnet.project,
        this.allocName(subnet.id, ip),
        { subnet_id: subnet.id, network_id: s.network_id, ip_address: ip, port_id: portId },
        { uid: null, labels: { port_id: portId, subnet_id: subnet.id, network_id: s.network_id } },
      ),
    });
    if (requested !== undefined) {
      const n = parseIpv4(requested);
      if (n === undefined || !cidrContains(cidr, n)) {
        throw new InputError(`IP address ${requested} is not a valid IP for the specified subnet.`, {
          code: 'InvalidIpForSubnet',
        });
      }
      const ip = formatIpv4(n);
      if (exclude.has(ip) || (await this.isAllocated(subnet, ip))) {
        throw new ConflictError(`IP address ${ip} already allocated in subnet ${subnet.id}`, {
          code: 'IpAddressAlreadyAllocated',
        });
      }
      return mk(ip);
    }
    const ranges = s.allocation_pools
      .map((p) => ({ start: parseIpv4(p.start)!, end: parseIpv4(p.end)! }))
      .sort((a, b) => a.start - b.start);
    const gateway = s.gateway_ip ? parseIpv4(s.gateway_ip) : undefined;
    const total = ranges.reduce((n, r) => n + (r.end - r.start + 1), 0);
    for (let i = 0; i < total; i++) {
      // Claim the candidate before awaiting, so concurrent allocations in this process try
      // different addresses (the store still arbitrates between processes).
      const k = (this.hints.get(subnet.id) ?? 0) % total;
      this.hints.set(subnet.id, (k + 1) % total);
      let rest = k;
      let candidate = -1;
      for (const r of ranges) {
        const size = r.end - r.start + 1;
        if (rest < size) {
          candidate = r.start + rest;
          break;
        }
        rest -= size;
      }
      if (candidate < 0 || candidate === gateway) continue;
      const ip = formatIpv4(candidate);
      if (exclude.has(ip) || (await this.isAllocated(subnet, ip))) continue;
      return mk(ip);
    }
    throw new ConflictError(`No more IP addresses available on network ${s.network_id}.`, {
      code: 'IpAddressGenerationFailure',
    });
  }

  /** Allocate every requested fixed IP of a new port (one per entry; an entry without address gets the next free one). */
  async allocateAll(
    subnets: Row<Subnet>[],
    requests: { subnet_id: string; ip_address?: string }[],
    portId: string,
  ): Promise<{ fixedIps: FixedIp[]; ops: WriteOp[] }> {
    const fixedIps: FixedIp[] = [];
    const ops: WriteOp[] = [];
    const taken = new Map<string, Set<string>>();
    for (const r of requests) {
      const subnet = subnets.find((s) => s.id === r.subnet_id)!;
      const ex = taken.get(subnet.id) ?? new Set<string>();
      const { ip, op } = await this.allocate(subnet, portId, r.ip_address, ex);
      ex.add(ip);
      taken.set(subnet.id, ex);
      fixedIps.push({ subnet_id: subnet.id, ip_address: ip });
      ops.push(op);
    }
    return { fixedIps, ops };
  }

  /** The writes that release a port's addresses. */
  async releaseOps(portId: string, fixedIps: FixedIp[]): Promise<WriteOp[]> {
    const ops: WriteOp[] = [];
    for (const f of fixedIps) {
      const subnet = await this.ctx.repos.subnets.find(f.subnet_id);
      if (!subnet) continue;
      const row = await this.ctx.repos.ipAllocations.get(
        subnet.project,
        this.allocName(f.subnet_id, f.ip_address),
      );
      if (row && row.rec.port_id === portId) ops.push(this.ctx.repos.ipAllocations.deleteOp(row));
    }
    return ops;
  }
}

/** Address allocations on a subnet (any holder). */
export async function allocationsOnSubnet(ctx: CloudContext, subnet: Row<Subnet>) {
  return ctx.repos.ipAllocations.list({ project: subnet.project, labels: { subnet_id: subnet.id } });
}
