import { z } from 'zod';
import { NotAllowedError, NotFoundError } from '../../domain/index.ts';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type ServiceRoutes } from '../core/http.ts';
import type { Repo } from '../core/repo.ts';
import { isValidTag } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import type { NetworkService, NeutronResource } from './service.ts';

const EXTENSIONS: [string, string, string][] = [
  ['agent', 'agent', 'The agent management extension.'],
  ['allowed-address-pairs', 'Allowed Address Pairs', 'Provides allowed address pairs'],
  ['availability_zone', 'Availability Zone', 'The availability zone extension.'],
  ['binding', 'Port Binding', 'Expose port bindings of a virtual port to external application'],
  [
    'empty-string-filtering',
    'Empty String Filtering Extension',
    'Allow filtering by attributes with empty string value',
  ],
  ['external-net', 'Neutron external network', 'Adds external network attribute to network resource.'],
  [
    'ext-gw-mode',
    'Neutron L3 Configurable external gateway mode',
    'Extension of the router abstraction for specifying whether SNAT should occur on the external gateway',
  ],
  ['extra_dhcp_opt', 'Neutron Extra DHCP options', 'Extra options configuration for DHCP.'],
  ['extraroute', 'Neutron Extra Route', 'Extra routes configuration for L3 router'],
  ['filter-validation', 'Filter parameters validation', 'Provides validation on filter parameters.'],
  [
    'fip-port-details',
    'Floating IP Port Details Extension',
    'Add port_details attribute to Floating IP resource',
  ],
  [
    'ip-substring-filtering',
    'IP address substring filtering',
    'Provides IP address substring filtering when listing ports',
  ],
  ['net-mtu', 'Network MTU', 'Provides MTU attribute for a network resource.'],
  ['net-mtu-writable', 'Network MTU (writable)', 'Provides a writable MTU attribute for a network resource.'],
  ['network_availability_zone', 'Network Availability Zone', 'Availability zone support for network.'],
  ['pagination', 'Pagination support', 'Extension that indicates that pagination is enabled.'],
  ['port-security', 'Port Security', 'Provides port security'],
  ['project-id', 'project_id field enabled', 'Extension that indicates that project_id field is enabled.'],
  ['provider', 'Provider Network', 'Expose mapping of virtual networks to physical networks'],
  ['quotas', 'Quota management support', 'Expose functions for quotas management per project'],
  [
    'quota_details',
    'Quota details management support',
    'Expose functions for quotas usage statistics per project',
  ],
  [
    'router',
    'Neutron L3 Router',
    'Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway.',
  ],
  ['router_availability_zone', 'Router Availability Zone', 'Availability zone support for router.'],
  ['security-group', 'security-group', 'The security groups extension.'],
  ['sorting', 'Sorting support', 'Extension that indicates that sorting is enabled.'],
  [
    'standard-attr-description',
    'standard-attr-description',
    'Extension to add descriptions to standard attributes',
  ],
  [
    'standard-attr-revisions',
    'Resource revision numbers',
    'This extension will display the revision number of neutron resources.',
  ],
  [
    'standard-attr-tag',
    'Tag support for resources with standard attribute: subnet, trunk, network_segment_range, router, network, policy, subnetpool, port, security_group, floatingip',
    'Enables to set tag on resources with standard attribute.',
  ],
  [
    'standard-attr-timestamp',
    'Resource timestamps',
    'Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.',
  ],
  [
    'stateful-security-group',
    'Stateful security group',
    'Indicates if the security group is stateful or not',
  ],
  ['subnet-service-types', 'Subnet service types', 'Provides ability to set the subnet service_types field'],
  ['tag-creation', 'Tags at creation', 'Tags may be given in the request that creates a resource.'],
];

function extensionView([alias, name, description]: [string, string, string]) {
  return { alias, name, description, updated: '2013-01-01T10:00:00-00:00', links: [] };
}

const QuotaBody = z.object({
  quota: z.record(
    z.string(),
    z.union([
      z.number().int(),
      z
        .string()
        .regex(/^-?\d+$/)
        .transform(Number),
    ]),
  ),
});

function tagNotFound(tag: string, res: string, id: string): NotFoundError {
  return new NotFoundError(`Tag ${tag} could not be found for ${res.replace(/s$/, '')} ${id}.`, {
    code: 'TagNotFound',
  });
}

const TAG_RESOURCES = ['networks', 'subnets', 'ports', 'routers', 'security-groups', 'floatingips'] as const;
type TagResource = (typeof TAG_RESOURCES)[number];

export function registerMiscRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  r.get('/v2.0/extensions', 'extensions.list', async () => ({ extensions: EXTENSIONS.map(extensionView) }));
  r.get('/v2.0/extensions/:alias', 'extensions.show', async (req) => {
    const e = EXTENSIONS.find((x) => x[0] === p(req, 'alias'));
    if (!e)
      throw new NotFoundError(`Extension with alias ${p(req, 'alias')} does not exist`, {
        code: 'HTTPNotFound',
      });
    return { extension: extensionView(e) };
  });

  r.get('/v2.0/availability_zones', 'availability_zones.list', async () => ({
    availability_zones: [
      { name: 'nova', resource: 'network', state: 'available' },
      { name: 'nova', resource: 'router', state: 'available' },
    ],
  }));

  // --- quotas ---
  const RESOURCES: NeutronResource[] = [
    'network',
    'subnet',
    'port',
    'router',
    'floatingip',
    'security_group',
    'security_group_rule',
  ];

  function checkAccess(caller: ReturnType<typeof callerOf>, project: string): void {
    if (!caller.isAdmin && project !== caller.project) {
      throw new NotAllowedError('Non-admin is not authorized to access quotas for another project', {
        code: 'HTTPForbidden',
      });
    }
  }

  r.get('/v2.0/quotas', 'quotas.list', async (req) => {
    const caller = callerOf(req);
    const projects = caller.isAdmin ? await ctx.quotas.projectsWithOverrides('network') : [caller.project];
    const out = [];
    for (const project of projects)
      out.push({ ...(await ctx.quotas.limits(project, 'network')), project_id: project, tenant_id: project });
    return { quotas: out };
  });

  r.get('/v2.0/quotas/:project', 'quotas.show', async (req) => {
    const caller = callerOf(req);
    const project = p(req, 'project');
    checkAccess(caller, project);
    return { quota: await ctx.quotas.limits(project, 'network') };
  });

  r.get('/v2.0/quotas/:project/default', 'quotas.defaults', async (req) => {
    const caller = callerOf(req);
    checkAccess(caller, p(req, 'project'));
    return { quota: ctx.quotas.defaultsOf('network') };
  });

  r.get('/v2.0/quotas/:project/details', 'quotas.details', async (req) => {
    const caller = callerOf(req);
    const project = p(req, 'project');
    checkAccess(caller, project);
    const limits = await ctx.quotas.limits(project, 'network');
    const quota: Record<string, { limit: number; used: number; reserved: number }> = {};
    for (const [name, limit] of Object.entries(limits)) {
      const used = (RESOURCES as string[]).includes(name)
        ? await svc.usage(project, name as NeutronResource)
        : 0;
      quota[name] = { limit, used, reserved: 0 };
    }
    return { quota };
  });

  r.put('/v2.0/quotas/:project', 'quotas.update', async (req) => {
    const caller = callerOf(req);
    if (!caller.isAdmin) throw E.notAuthorized('(rule:update_quota) is disallowed by policy');
    const b = QuotaBody.safeParse(bodyOf(req));
    if (!b.success) throw E.invalidInput('quota values must be integers');
    for (const [k, v] of Object.entries(b.data.quota)) {
      if (!(k in ctx.quotas.defaultsOf('network')))
        throw E.badRequest('quota', `Unrecognized attribute(s) '${k}'`);
      if (v < -1) throw E.invalidInputFor(k, `'${v}' is too small - must be at least '-1'`);
    }
    return { quota: await ctx.quotas.set(p(req, 'project'), 'network', b.data.quota) };
  });

  r.delete('/v2.0/quotas/:project', 'quotas.delete', async (req, reply) => {
    const caller = callerOf(req);
    if (!caller.isAdmin) throw E.notAuthorized('(rule:delete_quota) is disallowed by policy');
    await ctx.quotas.reset(p(req, 'project'), 'network');
    return reply.code(204).send();
  });

  // --- tags (standard-attr-tag) ---
  const repoFor = (
    res: TagResource,
  ): Repo<{ tags: string[]; updated_at: string; revision_number: number }> => {
    switch (res) {
      case 'networks':
        return ctx.repos.networks;
      case 'subnets':
        return ctx.repos.subnets;
      case 'ports':
        return ctx.repos.ports;
      case 'routers':
        return ctx.repos.routers;
      case 'security-groups':
        return ctx.repos.securityGroups;
      case 'floatingips':
        return ctx.repos.floatingIps;
    }
  };

  const notFound = (res: TagResource, id: string) => {
    switch (res) {
      case 'networks':
        return E.networkNotFound(id);
      case 'subnets':
        return E.subnetNotFound(id);
      case 'ports':
        return E.portNotFound(id);
      case 'routers':
        return E.routerNotFound(id);
      case 'security-groups':
        return E.securityGroupNotFound(id);
      case 'floatingips':
        return E.floatingIpNotFound(id);
    }
  };

  async function target(req: Parameters<typeof callerOf>[0], res: TagResource) {
    const caller = callerOf(req);
    const repo = repoFor(res);
    const id = p(req, 'id');
    const row = await repo.find(id);
    if (!row || (!caller.isAdmin && row.project !== caller.project)) throw notFound(res, id);
    return { repo, row };
  }

  const validTag = (t: string) => {
    if (!isValidTag(t)) throw E.invalidInputFor('tags', `'${t}' is not a valid tag`);
    return t;
  };

  for (const res of TAG_RESOURCES) {
    const base = `/v2.0/${res}/:id/tags`;
    const op = res.replace('-', '_');
    r.get(base, `${op}.tags.list`, async (req) => {
      const { row } = await target(req, res);
      return { tags: row.rec.tags };
    });
    r.get(`${base}/:tag`, `${op}.tags.check`, async (req, reply) => {
      const { row } = await target(req, res);
      if (!row.rec.tags.includes(p(req, 'tag'))) throw tagNotFound(p(req, 'tag'), res, row.id);
      return reply.code(204).send();
    });
    r.put(base, `${op}.tags.replace`, async (req) => {
      const { repo, row } = await target(req, res);
      const b = z.object({ tags: z.array(z.string()) }).safeParse(bodyOf(req));
      if (!b.success) throw E.invalidInputFor('tags', 'a list of strings is required');
      const tags = [...new Set(b.data.tags.map(validTag))];
      await repo.mutate(row.project, row.id, (cur) => ({
        ...cur.rec,
        tags,
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      }));
      return { tags };
    });
    r.put(`${base}/:tag`, `${op}.tags.add`, async (req, reply) => {
      const { repo, row } = await target(req, res);
      const tag = validTag(p(req, 'tag'));
      await repo.mutate(row.project, row.id, (cur) =>
        cur.rec.tags.includes(tag)
          ? undefined
          : {
              ...cur.rec,
              tags: [...cur.rec.tags, tag],
              updated_at: nowIso(ctx),
              revision_number: cur.rec.revision_number + 1,
            },
      );
      return reply.code(201).send();
    });
    r.delete(base, `${op}.tags.clear`, async (req, reply) => {
      const { repo, row } = await target(req, res);
      await repo.mutate(row.project, row.id, (cur) => ({
        ...cur.rec,
        tags: [],
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      }));
      return reply.code(204).send();
    });
    r.delete(`${base}/:tag`, `${op}.tags.remove`, async (req, reply) => {
      const { repo, row } = await target(req, res);
      const tag = p(req, 'tag');
      if (!row.rec.tags.includes(tag)) throw tagNotFound(tag, res, row.id);
      await repo.mutate(row.project, row.id, (cur) => ({
        ...cur.rec,
        tags: cur.rec.tags.filter((t) => t !== tag),
        updated_at: nowIso(ctx),
        revision_number: cur.rec.revision_number + 1,
      }));
      return reply.code(204).send();
    });
  }
}
