import { randomBytes, randomUUID } from 'node:crypto';

/** A new resource id (UUID v4, as every OpenStack service uses). */
export function newId(): string {
  return randomUUID();
}

/** A MAC address in OpenStack's default base `fa:16:3e`. */
export function newMac(): string {
  const b = randomBytes(3);
  return `fa:16:3e:${[...b].map((x) => x.toString(16).padStart(2, '0')).join(':')}`;
}

/** A random password such as Nova's `adminPass`. */
export function newPassword(length = 12): string {
  const chars = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(length);
  let s = '';
  for (const b of bytes) s += chars[b % chars.length];
  return s;
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** True when `s` looks like a UUID (with or without dashes). */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

// --- IPv4 ---

/** Parse a dotted IPv4 address; undefined when it is not one. */
export function parseIpv4(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

/** Format a 32-bit number as a dotted IPv4 address. */
export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** A parsed IPv4 network. */
export interface Cidr4 {
  /** First address (network address). */
  network: number;
  prefix: number;
  /** Last address (broadcast). */
  last: number;
  /** Normalised text, e.g. `10.0.0.0/24`. */
  text: string;
}

/**
 * Parse an IPv4 CIDR. Host bits must be zero unless `allowHostBits` (Neutron accepts
 * `10.0.0.1/24` for `remote_ip_prefix` and normalises it).
 */
export function parseCidr4(s: string, allowHostBits = false): Cidr4 | undefined {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(s.trim());
  if (!m) return undefined;
  const addr = parseIpv4(m[1]!);
  const prefix = Number(m[2]);
  if (addr === undefined || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  const network = Math.floor(addr / size) * size;
  if (network !== addr && !allowHostBits) return undefined;
  return { network, prefix, last: network + size - 1, text: `${formatIpv4(network)}/${prefix}` };
}

/** True when `ip` lies in `cidr`. */
export function cidrContains(cidr: Cidr4, ip: number): boolean {
  return ip >= cidr.network && ip <= cidr.last;
}

/** True when two networks share an address. */
export function cidrsOverlap(a: Cidr4, b: Cidr4): boolean {
  return a.network <= b.last && b.network <= a.last;
}

/** An allocation pool as Neutron shows it. */
export interface IpRange {
  start: string;
  end: string;
}

/**
 * Neutron's default allocation pool: every host address except the gateway (and the network
 * and broadcast addresses for prefixes shorter than /31).
 */
export function defaultPools(cidr: Cidr4, gateway: number | undefined): IpRange[] {
  const first = cidr.prefix >= 31 ? cidr.network : cidr.network + 1;
  const last = cidr.prefix >= 31 ? cidr.last : cidr.last - 1;
  if (last < first) return [];
  if (gateway === undefined || gateway < first || gateway > last)
    return [{ start: formatIpv4(first), end: formatIpv4(last) }];
  const pools: IpRange[] = [];
  if (gateway > first) pools.push({ start: formatIpv4(first), end: formatIpv4(gateway - 1) });
  if (gateway < last) pools.push({ start: formatIpv4(gateway + 1), end: formatIpv4(last) });
  return pools;
}
