import { z } from 'zod';
import { nowIso, type CloudContext } from '../core/context.ts';
import { bodyOf, callerOf, p, type ServiceRoutes } from '../core/http.ts';
import { newId, parseCidr4 } from '../core/ids.ts';
import type { SecurityGroup, SecurityGroupRule } from '../core/records.ts';
import { parseNeutronBody, parseNeutronBulk, CreateTags } from './body.ts';
import { neutronErrors as E } from './errors.ts';
import { portInGroupKey, securityGroupLabels } from '../core/repos.ts';
import { narrowing, neutronList, projectFields } from './listing.ts';
import { targetProject } from './routes-networks.ts';
import type { NetworkService } from './service.ts';
import { ruleView, securityGroupView } from './views.ts';

const SgCreate = z.object({
  name: z.string().max(255).default(''),
  description: z.string().max(255).default(''),
  stateful: z.boolean().default(true),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
  tags: CreateTags,
});

const SgUpdate = z.object({
  name: z.string().max(255).optional(),
  description: z.string().max(255).optional(),
  stateful: z.boolean().optional(),
});

const portValue = z
  .union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)])
  .nullable()
  .optional();

const RuleCreate = z.object({
  security_group_id: z.string(),
  direction: z.enum(['ingress', 'egress']),
  ethertype: z.enum(['IPv4', 'IPv6']).default('IPv4'),
  protocol: z.union([z.string(), z.number().int()]).nullable().optional(),
  port_range_min: portValue,
  port_range_max: portValue,
  remote_ip_prefix: z.string().nullable().optional(),
  remote_group_id: z.string().nullable().optional(),
  remote_address_group_id: z.string().nullable().optional(),
  description: z.string().max(255).default(''),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
});

const PROTOCOLS: Record<string, number> = {
  tcp: 6,
  udp: 17,
  icmp: 1,
  icmpv6: 58,
  sctp: 132,
  ah: 51,
  esp: 50,
  gre: 47,
  ipv6_icmp: 58,
  vrrp: 112,
};

/** Neutron treats "any address" and no prefix as the same rule. */
function anyPrefix(prefix: string | null): string | null {
  return prefix === '0.0.0.0/0' || prefix === '::/0' ? null : prefix;
}

export function registerSecurityGroupRoutes(r: ServiceRoutes, ctx: CloudContext, svc: NetworkService): void {
  const repos = ctx.repos;

  r.get('/v2.0/security-groups', 'security_groups.list', async (req) => {
    const caller = callerOf(req);
    await svc.ensureDefaultSecurityGroup(caller.project);
    // One name (how clients look a group up) reads through the name label's index, and then
    // only those groups' rules; otherwise every group and rule the caller sees.
    const name = (req.query as Record<string, unknown>).name;
    const labels = typeof name === 'string' ? securityGroupLabels({ name }) : undefined;
    const groups = caller.isAdmin
      ? await repos.securityGroups.list({ labels })
      : await repos.securityGroups.list({ project: caller.project, labels });
    const rules = labels
      ? (await Promise.all(groups.map((g) => svc.rulesOf(g)))).flat()
      : caller.isAdmin
        ? await repos.securityGroupRules.list()
        : await repos.securityGroupRules.list({ project: caller.project });
    const bySg = new Map<string, typeof rules>();
    for (const x of rules) {
      const list = bySg.get(x.rec.security_group_id);
      if (list) list.push(x);
      else bySg.set(x.rec.security_group_id, [x]);
    }
    const views = groups.map((g) => securityGroupView(g, bySg.get(g.id) ?? []));
    return neutronList(req, 'security_groups', views);
  });

  r.get('/v2.0/security-groups/:id', 'security_groups.show', async (req) => {
    const caller = callerOf(req);
    const sg = await svc.getSecurityGroup(caller, p(req, 'id'));
    return { security_group: projectFields(req, securityGroupView(sg, await svc.rulesOf(sg))) };
  });

  r.post('/v2.0/security-groups', 'security_groups.create', async (req, reply) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'security_group', SgCreate);
    const project = targetProject(caller, b);
    if (b.name === 'default') {
      const existing = await svc.ensureDefaultSecurityGroup(project);
      throw E.badRequest(
        'security_group',
        `Default security group already exists (${existing.id}); 'default' is reserved`,
      );
    }
    await svc.ensureDefaultSecurityGroup(project);
    await svc.checkQuota(project, 'security_group');
    const now = nowIso(ctx);
    const id = newId();
    const sg: SecurityGroup = {
      id,
      tenant_id: project,
      name: b.name,
      description: b.description,
      tags: b.tags ?? [],
      stateful: b.stateful,
      created_at: now,
      updated_at: now,
      revision_number: 1,
    };
    const rules: SecurityGroupRule[] = (['IPv4', 'IPv6'] as const).map((ethertype) => ({
      id: newId(),
      tenant_id: project,
      security_group_id: id,
      direction: 'egress',
      ethertype,
      protocol: null,
      port_range_min: null,
      port_range_max: null,
      remote_ip_prefix: null,
      remote_group_id: null,
      description: '',
      created_at: now,
      updated_at: now,
      revision_number: 0,
    }));
    await ctx.store.commit([
      repos.securityGroups.createOp(project, id, sg),
      ...rules.map((x) => repos.securityGroupRules.createOp(project, x.id, x)),
    ]);
    const row = (await repos.securityGroups.get(project, id))!;
    void reply.code(201);
    return { security_group: securityGroupView(row, await svc.rulesOf(row)) };
  });

  r.put('/v2.0/security-groups/:id', 'security_groups.update', async (req) => {
    const caller = callerOf(req);
    const b = parseNeutronBody(bodyOf(req), 'security_group', SgUpdate);
    const sg = await svc.getSecurityGroup(caller, p(req, 'id'));
    if (sg.rec.name === 'default' && b.name !== undefined && b.name !== 'default') {
      throw E.badRequest('security_group', 'Updating default security group not allowed');
    }
    const row = await repos.securityGroups.mutate(sg.project, sg.id, (cur) => ({
      ...cur.rec,
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.description !== undefined ? { description: b.description } : {}),
      ...(b.stateful !== undefined ? { stateful: b.stateful } : {}),
      updated_at: nowIso(ctx),
      revision_number: cur.rec.revision_number + 1,
    }));
    return { security_group: securityGroupView(row, await svc.rulesOf(row)) };
  });

  r.delete('/v2.0/security-groups/:id', 'security_groups.delete', async (req, reply) => {
    const caller = callerOf(req);
    const sg = await svc.getSecurityGroup(caller, p(req, 'id'));
    if (sg.rec.name === 'default' && !caller.isAdmin) throw E.cannotRemoveDefault();
    const members = await repos.ports.list({ labels: { [portInGroupKey(sg.id)]: 'true' }, limit: 1 });
    if (members.length > 0) throw E.securityGroupInUse(sg.id);
    const own = await svc.rulesOf(sg);
    const referencing = (await repos.securityGroupRules.list({ labels: { remote_group_id: sg.id } })).filter(
      (x) => x.rec.security_group_id !== sg.id,
    );
    await ctx.store.commit([
      ...[...own, ...referencing].map((x) => repos.securityGroupRules.deleteOp(x)),
      repos.securityGroups.deleteOp(sg),
    ]);
    return reply.code(204).send();
  });

  // --- rules ---

  r.get('/v2.0/security-group-rules', 'security_group_rules.list', async (req) => {
    const caller = callerOf(req);
    const labels = narrowing(req, ['security_group_id']);
    const rows = caller.isAdmin
      ? await repos.securityGroupRules.list({ labels })
      : await repos.securityGroupRules.list({ project: caller.project, labels });
    return neutronList(req, 'security_group_rules', rows.map(ruleView));
  });

  r.get('/v2.0/security-group-rules/:id', 'security_group_rules.show', async (req) => {
    const caller = callerOf(req);
    const row = await repos.securityGroupRules.find(p(req, 'id'));
    if (!row || !svc.ownsOrAdmin(caller, row.project)) throw E.securityGroupRuleNotFound(p(req, 'id'));
    return { security_group_rule: projectFields(req, ruleView(row)) };
  });

  r.post('/v2.0/security-group-rules', 'security_group_rules.create', async (req, reply) => {
    const caller = callerOf(req);
    // One rule, or several in one request (Neutron's bulk create: all of one security group,
    // created together or not at all).
    const body = bodyOf(req);
    const bulk = typeof body === 'object' && body !== null && 'security_group_rules' in body;
    const inputs = bulk
      ? parseNeutronBulk(body, 'security_group_rules', RuleCreate)
      : [parseNeutronBody(body, 'security_group_rule', RuleCreate)];
    if (new Set(inputs.map((b) => b.security_group_id)).size > 1)
      throw E.badRequest(
        'security_group_rule',
        'Only allowed to update rules for one security profile at a time',
      );
    for (const b of inputs) targetProject(caller, b);
    const sg = await svc.getSecurityGroup(caller, inputs[0]!.security_group_id);
    const drafts: RuleDraft[] = [];
    for (const b of inputs) {
      const draft = ruleDraft(b);
      if (draft.remote_group_id) await svc.getSecurityGroup(caller, draft.remote_group_id);
      drafts.push(draft);
    }
    const existing = await svc.rulesOf(sg);
    for (const [i, draft] of drafts.entries()) {
      const dup = existing.find((x) => sameRule(x.rec, draft));
      if (dup) throw E.ruleExists(dup.id);
      if (drafts.slice(0, i).some((other) => sameRule(other, draft))) throw E.duplicateRuleInPost();
    }
    await svc.checkQuota(sg.project, 'security_group_rule', drafts.length);
    const now = nowIso(ctx);
    const rules: SecurityGroupRule[] = drafts.map((draft) => ({
      id: newId(),
      tenant_id: sg.project,
      security_group_id: sg.id,
      ...draft,
      created_at: now,
      updated_at: now,
      revision_number: 0,
    }));
    const rows = await ctx.store.commit(
      rules.map((rule) => repos.securityGroupRules.createOp(sg.project, rule.id, rule)),
    );
    await repos.securityGroups.mutate(sg.project, sg.id, (cur) => ({
      ...cur.rec,
      updated_at: now,
      revision_number: cur.rec.revision_number + 1,
    }));
    void reply.code(201);
    const views = rows.map((o) => ruleView(repos.securityGroupRules.row(o!)));
    return bulk ? { security_group_rules: views } : { security_group_rule: views[0] };
  });

  r.delete('/v2.0/security-group-rules/:id', 'security_group_rules.delete', async (req, reply) => {
    const caller = callerOf(req);
    const row = await repos.securityGroupRules.find(p(req, 'id'));
    if (!row || !svc.ownsOrAdmin(caller, row.project)) throw E.securityGroupRuleNotFound(p(req, 'id'));
    await repos.securityGroupRules.remove(row);
    return reply.code(204).send();
  });
}

/** A rule's fields as Neutron stores them, from a create request (checked as Neutron checks them). */
type RuleDraft = Pick<
  SecurityGroupRule,
  | 'direction'
  | 'ethertype'
  | 'protocol'
  | 'port_range_min'
  | 'port_range_max'
  | 'remote_ip_prefix'
  | 'remote_group_id'
  | 'description'
>;

function ruleDraft(b: z.infer<typeof RuleCreate>): RuleDraft {
  let protocol: string | null =
    b.protocol === undefined || b.protocol === null || b.protocol === 'any'
      ? null
      : String(b.protocol).toLowerCase();
  if (protocol !== null && !(protocol in PROTOCOLS) && !/^\d+$/.test(protocol)) {
    throw E.badRequest(
      'security_group_rule',
      `Security group rule protocol ${protocol} not supported. Only protocol values [None, ${Object.keys(PROTOCOLS).join(', ')}] and integer representations [0 to 255] are supported`,
    );
  }
  if (protocol !== null && /^\d+$/.test(protocol) && Number(protocol) > 255) {
    throw E.badRequest('security_group_rule', `Security group rule protocol ${protocol} not supported`);
  }
  if (protocol === 'ipv6_icmp') protocol = 'ipv6-icmp';
  const min = b.port_range_min ?? null;
  const max = b.port_range_max ?? null;
  if ((min !== null || max !== null) && protocol === null) {
    throw E.invalidInput('Must also specify protocol if port range is given');
  }
  const isPortProto =
    protocol !== null && ['tcp', 'udp', 'sctp', '6', '17', '132', 'dccp', 'udplite'].includes(protocol);
  if (isPortProto) {
    for (const v of [min, max])
      if (v !== null && (v < 1 || v > 65535)) throw E.invalidInput(`Invalid value for port ${v}`);
    if (min !== null && max !== null && min > max)
      throw E.invalidInput('For TCP/UDP protocols, port_range_min must be <= port_range_max');
  } else if (protocol === 'icmp' || protocol === '1' || protocol === 'icmpv6' || protocol === 'ipv6-icmp') {
    for (const [field, v] of [
      ['port_range_min', min],
      ['port_range_max', max],
    ] as const) {
      if (v !== null && (v < 0 || v > 255))
        throw E.invalidInput(
          `Invalid value for ICMP ${field} (${field === 'port_range_min' ? 'type' : 'code'}) ${v}. It must be 0 to 255.`,
        );
    }
    if (min === null && max !== null)
      throw E.invalidInput(
        `ICMP code (port-range-max) ${max} is provided but ICMP type (port-range-min) is missing`,
      );
  }
  let prefix: string | null = null;
  if (b.remote_ip_prefix) {
    if (b.ethertype === 'IPv6') {
      if (!b.remote_ip_prefix.includes(':'))
        throw E.invalidInput(`Conflicting value ethertype IPv6 for CIDR ${b.remote_ip_prefix}`);
      prefix = b.remote_ip_prefix;
    } else {
      if (b.remote_ip_prefix.includes(':'))
        throw E.invalidInput(`Conflicting value ethertype IPv4 for CIDR ${b.remote_ip_prefix}`);
      const c = parseCidr4(
        b.remote_ip_prefix.includes('/') ? b.remote_ip_prefix : `${b.remote_ip_prefix}/32`,
        true,
      );
      if (!c) throw E.invalidInputFor('remote_ip_prefix', `'${b.remote_ip_prefix}' is not a valid IP subnet`);
      prefix = c.text;
    }
  }
  if (b.remote_group_id && prefix) {
    throw E.badRequest('security_group_rule', 'Only remote_ip_prefix or remote_group_id may be provided');
  }
  return {
    direction: b.direction,
    ethertype: b.ethertype,
    protocol,
    port_range_min: min,
    port_range_max: max ?? (isPortProto ? min : null),
    remote_ip_prefix: prefix,
    remote_group_id: b.remote_group_id ?? null,
    description: b.description,
  };
}

/** Two rules Neutron counts as the same (a description does not make a rule different). */
function sameRule(a: RuleDraft, b: RuleDraft): boolean {
  return (
    a.direction === b.direction &&
    a.ethertype === b.ethertype &&
    a.protocol === b.protocol &&
    a.port_range_min === b.port_range_min &&
    a.port_range_max === b.port_range_max &&
    anyPrefix(a.remote_ip_prefix) === anyPrefix(b.remote_ip_prefix) &&
    a.remote_group_id === b.remote_group_id
  );
}
