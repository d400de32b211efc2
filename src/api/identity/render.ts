import {
  keystoneTime,
  type ApplicationCredentialSpec,
  type AssignmentEntry,
  type CatalogService,
  type DomainSpec,
  type LocalIdentity,
  type ProjectSpec,
  type Rec,
  type ResolvedToken,
  type RoleSpec,
  type UserSpec,
} from '../../identity/index.ts';

/**
 * Keystone v3 JSON shapes of identity records. `v3` is the identity base URL for links,
 * e.g. `http://127.0.0.1:9511/identity/v3`.
 */

type Json = Record<string, unknown>;

/** `{"links": {self, previous, next}}` of a collection. */
export function collectionLinks(self: string): Json {
  return { self, previous: null, next: null };
}

export function renderDomain(v3: string, d: Rec<DomainSpec>): Json {
  return {
    id: d.id,
    name: d.spec.name,
    description: d.spec.description,
    enabled: d.spec.enabled,
    tags: [],
    options: {},
    links: { self: `${v3}/domains/${d.id}` },
  };
}

export function renderProject(v3: string, p: Rec<ProjectSpec>): Json {
  return {
    ...p.spec.extra,
    id: p.id,
    name: p.spec.name,
    domain_id: p.spec.domainId,
    description: p.spec.description,
    enabled: p.spec.enabled,
    parent_id: p.spec.domainId,
    is_domain: false,
    tags: p.spec.tags,
    options: {},
    links: { self: `${v3}/projects/${p.id}` },
  };
}

export function renderUser(v3: string, u: Rec<UserSpec>): Json {
  return {
    ...u.spec.extra,
    id: u.id,
    name: u.spec.name,
    domain_id: u.spec.domainId,
    enabled: u.spec.enabled,
    password_expires_at: null,
    options: {},
    ...(u.spec.defaultProjectId ? { default_project_id: u.spec.defaultProjectId } : {}),
    ...(u.spec.email ? { email: u.spec.email } : {}),
    ...(u.spec.description ? { description: u.spec.description } : {}),
    service_account: u.spec.serviceAccount,
    links: { self: `${v3}/users/${u.id}` },
  };
}

export function renderRole(v3: string, r: Rec<RoleSpec>): Json {
  return {
    id: r.id,
    name: r.spec.name,
    domain_id: null,
    description: r.spec.description,
    options: {},
    links: { self: `${v3}/roles/${r.id}` },
  };
}

/** A role as it appears inside an implied-role listing. */
export function renderRoleRef(v3: string, r: Rec<RoleSpec>): Json {
  return { id: r.id, name: r.spec.name, links: { self: `${v3}/roles/${r.id}` } };
}

export function renderAppCred(
  v3: string,
  identity: LocalIdentity,
  c: Rec<ApplicationCredentialSpec>,
  secret?: string,
): Json {
  const roles = c.spec.roleIds.flatMap((id) => {
    const r = identity.directory.findRole(id);
    return r ? [{ id: r.id, name: r.spec.name, domain_id: null }] : [];
  });
  return {
    id: c.id,
    name: c.spec.name,
    description: c.spec.description,
    expires_at: c.spec.expiresAtMs === null ? null : keystoneTime(c.spec.expiresAtMs),
    project_id: c.spec.projectId,
    user_id: c.spec.userId,
    roles,
    unrestricted: c.spec.unrestricted,
    access_rules: [],
    ...(secret !== undefined ? { secret } : {}),
    links: { self: `${v3}/users/${c.spec.userId}/application_credentials/${c.id}` },
  };
}

/** The catalog as tokens carry it. */
export function renderCatalog(services: CatalogService[]): Json[] {
  return services.map((s) => ({
    id: s.id,
    type: s.type,
    name: s.name,
    endpoints: s.endpoints.map((e) => ({
      id: e.id,
      interface: e.interface,
      region: e.region,
      region_id: e.region,
      url: e.url,
    })),
  }));
}

/** The body of `POST`/`GET /v3/auth/tokens`. */
export function renderToken(identity: LocalIdentity, r: ResolvedToken, includeCatalog: boolean): Json {
  const domainRef = (d: Rec<DomainSpec>) => ({ id: d.id, name: d.spec.name });
  const token: Json = {
    methods: r.payload.methods,
    user: {
      id: r.user.id,
      name: r.user.spec.name,
      domain: domainRef(r.userDomain),
      password_expires_at: null,
    },
    audit_ids: r.payload.auditIds,
    expires_at: keystoneTime(r.payload.expiresAtMs),
    issued_at: keystoneTime(r.payload.issuedAtMs),
  };
  const scoped = r.project !== undefined || r.domain !== undefined || r.system;
  if (r.project) {
    token.project = {
      id: r.project.project.id,
      name: r.project.project.spec.name,
      domain: domainRef(r.project.domain),
    };
    token.is_domain = false;
  }
  if (r.domain) token.domain = domainRef(r.domain);
  if (r.system) token.system = { all: true };
  if (scoped) {
    token.roles = r.roles.map((x) => ({ id: x.id, name: x.spec.name }));
    if (includeCatalog) token.catalog = renderCatalog(identity.catalogFor(r));
  }
  if (r.appCred) {
    token.application_credential = {
      id: r.appCred.id,
      name: r.appCred.spec.name,
      restricted: !r.appCred.spec.unrestricted,
    };
  }
  return { token };
}

/** One entry of `GET /v3/role_assignments`. */
export function renderAssignment(
  v3: string,
  identity: LocalIdentity,
  e: AssignmentEntry,
  includeNames: boolean,
): Json {
  const dir = identity.directory;
  const domainName = (id: string) => dir.findDomain(id)?.spec.name ?? id;
  const role: Json = { id: e.roleId };
  const user: Json = { id: e.userId };
  let scope: Json;
  let link: string;
  const rolePart = `users/${e.userId}/roles/${e.roleId}`;
  switch (e.scope.type) {
    case 'project': {
      const p: Json = { id: e.scope.id };
      if (includeNames) {
        const project = dir.findProject(e.scope.id);
        if (project) {
          p.name = project.spec.name;
          p.domain = { id: project.spec.domainId, name: domainName(project.spec.domainId) };
        }
      }
      scope = { project: p };
      link = `${v3}/projects/${e.scope.id}/${rolePart}`;
      break;
    }
    case 'domain':
      scope = {
        domain: includeNames ? { id: e.scope.id, name: domainName(e.scope.id) } : { id: e.scope.id },
      };
      link = `${v3}/domains/${e.scope.id}/${rolePart}`;
      break;
    case 'system':
      scope = { system: { all: true } };
      link = `${v3}/system/${rolePart}`;
      break;
  }
  if (includeNames) {
    const r = dir.findRole(e.roleId);
    if (r) role.name = r.spec.name;
    const u = dir.findUser(e.userId);
    if (u) {
      user.name = u.spec.name;
      user.domain = { id: u.spec.domainId, name: domainName(u.spec.domainId) };
    }
  }
  const out: Json = { role, user, scope, links: { assignment: link } };
  if (e.priorRoleId !== undefined) out.prior_role = { id: e.priorRoleId };
  return out;
}
