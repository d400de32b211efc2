import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { isoMicros, isoSeconds, type CloudContext } from '../core/context.ts';
import type { Caller } from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import type { Server } from '../core/records.ts';
import type { Row } from '../core/repo.ts';
import { novaBookmark, novaLinks } from './links.ts';

const PROGRESS_STATUSES = new Set(['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING']);

/** Nova's `hostId`: a per-project hash of the host, so tenants can tell co-location without learning host names. */
export function hostId(project: string, host: string): string {
  return host
    ? createHash('sha224')
        .update(project + host)
        .digest('hex')
    : '';
}

/** `addresses` of a server: its ports' fixed IPs per network name, plus their floating IPs. */
export async function serverAddresses(ctx: CloudContext, s: Server): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const ref of s.ports) {
    const port = await ctx.repos.ports.find(ref.port_id);
    if (!port) continue;
    const net = await ctx.repos.networks.find(port.rec.network_id);
    const name = net?.rec.name ?? port.rec.network_id;
    const list = (out[name] ??= []);
    for (const f of port.rec.fixed_ips) {
      list.push({
        version: 4,
        addr: f.ip_address,
        'OS-EXT-IPS:type': 'fixed',
        'OS-EXT-IPS-MAC:mac_addr': port.rec.mac_address,
      });
    }
    if (ctx.repos.floatingIps) {
      for (const fip of await ctx.repos.floatingIps.list({ labels: { port_id: port.id } })) {
        list.push({
          version: 4,
          addr: fip.rec.floating_ip_address,
          'OS-EXT-IPS:type': 'floating',
          'OS-EXT-IPS-MAC:mac_addr': port.rec.mac_address,
        });
      }
    }
  }
  return out;
}

/** The reduced entry of `GET /servers`. */
export function serverBrief(req: FastifyRequest, row: Row<Server>): Record<string, unknown> {
  return { id: row.id, name: row.rec.name, links: novaLinks(req, 'servers', row.id) };
}

/** Nova's full server view at the request's microversion. */
export async function serverView(
  ctx: CloudContext,
  req: FastifyRequest,
  caller: Caller,
  row: Row<Server>,
): Promise<Record<string, unknown>> {
  const s = row.rec;
  const minor = minorOf(req);
  const admin = caller.isAdmin;
  const v: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status: s.status,
    tenant_id: row.project,
    user_id: s.user_id,
    metadata: s.metadata,
    hostId: hostId(row.project, s.status === 'BUILD' && !s.launched_at ? '' : s.host),
    image: s.image_id ? { id: s.image_id, links: novaBookmark(req, 'images', s.image_id) } : '',
    flavor:
      minor >= 47
        ? {
            vcpus: s.flavor.vcpus,
            ram: s.flavor.ram,
            disk: s.flavor.disk,
            ephemeral: s.flavor.ephemeral,
            swap: s.flavor.swap,
            original_name: s.flavor.original_name,
            extra_specs: s.flavor.extra_specs,
          }
        : { id: s.flavor.id, links: novaBookmark(req, 'flavors', s.flavor.id) },
    created: isoSeconds(s.created_at),
    updated: isoSeconds(s.updated_at),
    addresses: await serverAddresses(ctx, s),
    accessIPv4: s.access_ipv4,
    accessIPv6: s.access_ipv6,
    links: novaLinks(req, 'servers', s.id),
    'OS-DCF:diskConfig': 'MANUAL',
  };
  if ((s.status === 'ERROR' || s.status === 'DELETED') && s.fault) {
    v.fault = {
      code: s.fault.code,
      created: isoSeconds(s.fault.created),
      message: s.fault.message,
      ...(admin || s.fault.code !== 500 ? { details: s.fault.details } : {}),
    };
  }
  if (PROGRESS_STATUSES.has(s.status)) v.progress = s.progress;
  v['OS-EXT-AZ:availability_zone'] = s.status === 'BUILD' && !s.launched_at ? '' : s.availability_zone;
  v.config_drive = s.config_drive;
  v.key_name = s.key_name;
  v['OS-SRV-USG:launched_at'] = s.launched_at ? isoMicros(s.launched_at) : null;
  v['OS-SRV-USG:terminated_at'] = null;
  if (s.security_groups.length > 0) v.security_groups = s.security_groups.map((name) => ({ name }));
  if (admin) {
    v['OS-EXT-SRV-ATTR:host'] = s.launched_at ? s.host : null;
    v['OS-EXT-SRV-ATTR:instance_name'] = s.instance_name;
    v['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.launched_at ? `${s.host}.cloud.local` : null;
    if (minor >= 3) {
      v['OS-EXT-SRV-ATTR:reservation_id'] = `r-${s.id.slice(0, 8)}`;
      v['OS-EXT-SRV-ATTR:launch_index'] = 0;
      v['OS-EXT-SRV-ATTR:hostname'] = s.hostname;
      v['OS-EXT-SRV-ATTR:kernel_id'] = '';
      v['OS-EXT-SRV-ATTR:ramdisk_id'] = '';
      v['OS-EXT-SRV-ATTR:root_device_name'] = '/dev/vda';
      v['OS-EXT-SRV-ATTR:user_data'] = s.user_data;
    }
  }
  v['OS-EXT-STS:task_state'] = s.task_state;
  v['OS-EXT-STS:vm_state'] = s.vm_state;
  v['OS-EXT-STS:power_state'] = s.power_state;
  v['os-extended-volumes:volumes_attached'] = s.volumes.map((x) => ({
    id: x.volume_id,
    ...(minor >= 3 ? { delete_on_termination: x.delete_on_termination } : {}),
  }));
  if (minor >= 9) v.locked = s.locked;
  if (minor >= 16) v.host_status = s.launched_at ? 'UP' : '';
  if (minor >= 19) v.description = s.description;
  if (minor >= 26) v.tags = s.tags;
  if (minor >= 63) v.trusted_image_certificates = null;
  if (minor >= 71) v.server_groups = [];
  if (minor >= 73) v.locked_reason = s.locked_reason;
  return v;
}
