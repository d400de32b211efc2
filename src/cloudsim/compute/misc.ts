import { z } from 'zod';
import { InputError, NotAllowedError } from '../../domain/index.ts';
import { isoMicros, nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, q, type Caller, type ServiceRoutes } from '../core/http.ts';
import { minorOf } from '../core/microversion.ts';
import { parseNovaBody } from './body.ts';
import { computeUsage } from './server-create.ts';

const NOVA_QUOTAS_BEFORE_2_36 = [
  'fixed_ips',
  'floating_ips',
  'security_groups',
  'security_group_rules',
  'networks',
];
const INJECTED = ['injected_files', 'injected_file_content_bytes', 'injected_file_path_bytes'];

/** Availability zones, limits and quota sets of Nova. */
export function registerComputeMiscRoutes(r: ServiceRoutes, ctx: CloudContext): void {
  const hosts = (az: string) => [1, 2, 3].map((n) => `${az.toLowerCase()}-compute-${n}`);

  r.get('/os-availability-zone', 'availability_zones.list', async () => ({
    availabilityZoneInfo: ctx.availabilityZones.map((zoneName) => ({
      zoneName,
      zoneState: { available: true },
      hosts: null,
    })),
  }));

  r.get('/os-availability-zone/detail', 'availability_zones.detail', async (req) => {
    if (!callerOf(req).isAdmin)
      throw new NotAllowedError(
        `Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed.`,
      );
    const updated = isoMicros(nowIso(ctx));
    return {
      availabilityZoneInfo: [
        {
          zoneName: 'internal',
          zoneState: { available: true },
          hosts: {
            controller: {
              'nova-scheduler': { available: true, active: true, updated_at: updated },
              'nova-conductor': { available: true, active: true, updated_at: updated },
            },
          },
        },
        ...ctx.availabilityZones.map((zoneName) => ({
          zoneName,
          zoneState: { available: true },
          hosts: Object.fromEntries(
            hosts(zoneName).map((h) => [
              h,
              { 'nova-compute': { available: true, active: true, updated_at: updated } },
            ]),
          ),
        })),
      ],
    };
  });

  async function usage(project: string) {
    return {
      ...(await computeUsage(ctx, project)),
      key_pairs: 0,
      server_groups: 0,
      server_group_members: 0,
      metadata_items: 0,
      floating_ips: await ctx.repos.floatingIps.count(project),
      security_groups: await ctx.repos.securityGroups.count(project),
    };
  }

  const targetProject = (caller: Caller, project: string | undefined) => {
    const pid = project ?? caller.project;
    if (pid !== caller.project && !caller.isAdmin)
      throw new NotAllowedError(`Policy doesn't allow os_compute_api:os-quota-sets:show to be performed.`);
    return pid;
  };

  r.get('/limits', 'limits.show', async (req) => {
    const caller = callerOf(req);
    const project = targetProject(caller, q(req, 'tenant_id'));
    const l = await ctx.quotas.limits(project, 'compute');
    const nl = await ctx.quotas.limits(project, 'network');
    const u = await usage(project);
    const minor = minorOf(req);
    const absolute: Record<string, number> = {
      maxServerMeta: l.metadata_items ?? 128,
      maxImageMeta: l.metadata_items ?? 128,
      maxTotalKeypairs: l.key_pairs ?? 100,
      maxServerGroups: l.server_groups ?? 10,
      maxServerGroupMembers: l.server_group_members ?? 10,
      maxTotalCores: l.cores ?? -1,
      maxTotalInstances: l.instances ?? -1,
      maxTotalRAMSize: l.ram ?? -1,
      totalCoresUsed: u.cores,
      totalRAMUsed: u.ram,
      totalInstancesUsed: u.instances,
      totalServerGroupsUsed: 0,
    };
    if (minor < 57) {
      absolute.maxPersonality = l.injected_files ?? 5;
      absolute.maxPersonalitySize = l.injected_file_content_bytes ?? 10240;
    }
    if (minor < 36) {
      absolute.maxSecurityGroups = nl.security_group ?? -1;
      absolute.maxSecurityGroupRules = nl.security_group_rule ?? -1;
      absolute.maxTotalFloatingIps = nl.floatingip ?? -1;
      absolute.totalSecurityGroupsUsed = u.security_groups;
      absolute.totalFloatingIpsUsed = u.floating_ips;
    }
    return { limits: { rate: [], absolute } };
  });

  const visibleQuotas = (minor: number, values: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(values)) {
      if (minor >= 57 && INJECTED.includes(k)) continue;
      out[k] = v;
    }
    return out;
  };

  const withNetworkQuotas = async (
    minor: number,
    project: string,
    out: Record<string, unknown>,
    detail: boolean,
  ) => {
    if (minor >= 36) return out;
    const nl = await ctx.quotas.limits(project, 'network');
    const u = await usage(project);
    const add = (k: string, limit: number, used: number) =>
      (out[k] = detail ? { limit, in_use: used, reserved: 0 } : limit);
    add('floating_ips', nl.floatingip ?? -1, u.floating_ips);
    add('security_groups', nl.security_group ?? -1, u.security_groups);
    add('security_group_rules', nl.security_group_rule ?? -1, 0);
    add('fixed_ips', -1, 0);
    add('networks', nl.network ?? -1, 0);
    for (const k of NOVA_QUOTAS_BEFORE_2_36)
      if (!(k in out)) out[k] = detail ? { limit: -1, in_use: 0, reserved: 0 } : -1;
    return out;
  };

  r.get('/os-quota-sets/:project', 'quota_sets.show', async (req) => {
    const caller = callerOf(req);
    const project = targetProject(caller, p(req, 'project'));
    const minor = minorOf(req);
    const quota = visibleQuotas(minor, await ctx.quotas.limits(project, 'compute'));
    return { quota_set: { id: project, ...(await withNetworkQuotas(minor, project, quota, false)) } };
  });

  r.get('/os-quota-sets/:project/detail', 'quota_sets.detail', async (req) => {
    const caller = callerOf(req);
    const project = targetProject(caller, p(req, 'project'));
    const minor = minorOf(req);
    const u = await usage(project);
    u.key_pairs = await ctx.repos.keypairs.count(caller.userId);
    const out: Record<string, unknown> = {};
    for (const [k, limit] of Object.entries(
      visibleQuotas(minor, await ctx.quotas.limits(project, 'compute')),
    )) {
      out[k] = { limit, in_use: (u as Record<string, number>)[k] ?? 0, reserved: 0 };
    }
    return { quota_set: { id: project, ...(await withNetworkQuotas(minor, project, out, true)) } };
  });

  r.get('/os-quota-sets/:project/defaults', 'quota_sets.defaults', async (req) => {
    const minor = minorOf(req);
    const project = p(req, 'project');
    return {
      quota_set: {
        id: project,
        ...(await withNetworkQuotas(
          minor,
          project,
          visibleQuotas(minor, ctx.quotas.defaultsOf('compute')),
          false,
        )),
      },
    };
  });

  r.put('/os-quota-sets/:project', 'quota_sets.update', async (req) => {
    const caller = callerOf(req);
    if (!caller.isAdmin)
      throw new NotAllowedError(`Policy doesn't allow os_compute_api:os-quota-sets:update to be performed.`);
    const b = parseNovaBody(
      bodyOf(req),
      'quota_set',
      z.record(
        z.string(),
        z.union([
          z.number().int(),
          z
            .string()
            .regex(/^-?\d+$/)
            .transform(Number),
          z.boolean(),
        ]),
      ),
    );
    const values: Record<string, number> = {};
    for (const [k, v] of Object.entries(b)) {
      if (k === 'force' || typeof v === 'boolean') continue;
      if (!(k in ctx.quotas.defaultsOf('compute')))
        throw new InputError(
          `Invalid input for field/attribute quota_set. Additional properties are not allowed ('${k}' was unexpected)`,
        );
      if (v < -1)
        throw new InputError(
          `Invalid input for field/attribute ${k}. Value: ${v}. ${v} is less than the minimum of -1`,
        );
      values[k] = v;
    }
    const project = p(req, 'project');
    const quota = visibleQuotas(minorOf(req), await ctx.quotas.set(project, 'compute', values));
    return { quota_set: quota };
  });

  r.delete('/os-quota-sets/:project', 'quota_sets.delete', async (req, reply) => {
    const caller = callerOf(req);
    if (!caller.isAdmin)
      throw new NotAllowedError(`Policy doesn't allow os_compute_api:os-quota-sets:delete to be performed.`);
    await ctx.quotas.reset(p(req, 'project'), 'compute');
    return reply.code(202).send();
  });
}
