import { z } from 'zod';
import { InputError } from '../../domain/index.ts';
import type {
  AppCredInput,
  AuthRequest,
  DomainRef,
  ProjectInput,
  ProjectRef,
  ScopeRequest,
  UserInput,
  UserRef,
} from '../../identity/index.ts';

/** Request bodies of the identity API, checked with zod and turned into identity inputs. */

/** Parse with a Keystone-style 400 naming the field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null)
    throw new InputError('The request body is empty; a JSON body is required.', { code: 'EmptyBody' });
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.map(String).join('/') || '(body)';
  throw new InputError(`Invalid input for field '${field}': ${issue.message}.`, { code: 'Invalid' });
}

const id = z.string().min(1).max(255);
const name = z.string().min(1).max(255);

const DomainRefWire = z.object({ id: id.optional(), name: name.optional() });
const UserRefWire = z.object({ id: id.optional(), name: name.optional(), domain: DomainRefWire.optional() });
const ProjectRefWire = z.object({
  id: id.optional(),
  name: name.optional(),
  domain: DomainRefWire.optional(),
});

function domainRef(w: z.infer<typeof DomainRefWire> | undefined, field: string): DomainRef {
  if (w?.id) return { id: w.id };
  if (w?.name) return { name: w.name };
  throw new InputError(`Invalid input for field '${field}': a domain id or name is required.`, {
    code: 'Invalid',
  });
}

function userRef(w: z.infer<typeof UserRefWire>, field: string): UserRef {
  if (w.id) return { id: w.id };
  if (w.name) return { name: w.name, domain: domainRef(w.domain, `${field}/domain`) };
  throw new InputError(
    `Invalid input for field '${field}': a user id, or a name and a domain, is required.`,
    { code: 'Invalid' },
  );
}

function projectRef(w: z.infer<typeof ProjectRefWire>, field: string): ProjectRef {
  if (w.id) return { id: w.id };
  if (w.name) return { name: w.name, domain: domainRef(w.domain, `${field}/domain`) };
  throw new InputError(
    `Invalid input for field '${field}': a project id, or a name and a domain, is required.`,
    { code: 'Invalid' },
  );
}

const AuthBody = z.object({
  auth: z.object({
    identity: z.object({
      methods: z.array(z.string()).min(1),
      password: z.object({ user: UserRefWire.extend({ password: z.string().max(4096) }) }).optional(),
      token: z.object({ id: z.string().min(1) }).optional(),
      application_credential: z
        .object({
          id: id.optional(),
          name: name.optional(),
          secret: z.string().min(1).max(4096),
          user: UserRefWire.optional(),
        })
        .optional(),
    }),
    scope: z
      .union([
        z.literal('unscoped'),
        z.object({
          project: ProjectRefWire.optional(),
          domain: DomainRefWire.optional(),
          system: z.object({ all: z.boolean() }).optional(),
          'OS-TRUST:trust': z.unknown().optional(),
        }),
      ])
      .optional(),
  }),
});

const SUPPORTED_METHODS = ['password', 'token', 'application_credential'];

/** `POST /v3/auth/tokens` body → {@link AuthRequest}. */
export function parseAuthRequest(body: unknown): AuthRequest {
  const { auth } = parseBody(AuthBody, body);
  const methods = auth.identity.methods;
  const unsupported = methods.filter((m) => !SUPPORTED_METHODS.includes(m));
  if (unsupported.length > 0 || methods.length !== 1) {
    throw new InputError(
      `Invalid input for field 'auth/identity/methods': exactly one of ${SUPPORTED_METHODS.join(', ')} is supported (got ${methods.join(', ')}).`,
      { code: 'Invalid' },
    );
  }
  const method = methods[0]!;
  const missing = () =>
    new InputError(`Invalid input for field 'auth/identity/${method}': it is required by the method.`, {
      code: 'Invalid',
    });
  let identity: AuthRequest['identity'];
  switch (method) {
    case 'password': {
      const p = auth.identity.password;
      if (!p) throw missing();
      identity = {
        method: 'password',
        user: userRef(p.user, 'auth/identity/password/user'),
        password: p.user.password,
      };
      break;
    }
    case 'token': {
      const t = auth.identity.token;
      if (!t) throw missing();
      identity = { method: 'token', token: t.id };
      break;
    }
    default: {
      const a = auth.identity.application_credential;
      if (!a) throw missing();
      if (a.id) identity = { method: 'application_credential', id: a.id, secret: a.secret };
      else if (a.name && a.user) {
        identity = {
          method: 'application_credential',
          name: a.name,
          user: userRef(a.user, 'auth/identity/application_credential/user'),
          secret: a.secret,
        };
      } else {
        throw new InputError(
          "Invalid input for field 'auth/identity/application_credential': an id, or a name and a user, is required.",
          { code: 'Invalid' },
        );
      }
    }
  }
  return { identity, scope: parseScope(auth.scope) };
}

function parseScope(s: z.infer<typeof AuthBody>['auth']['scope']): ScopeRequest {
  if (s === undefined) return { type: 'default' };
  if (s === 'unscoped') return { type: 'unscoped' };
  const given = [s.project, s.domain, s.system, s['OS-TRUST:trust']].filter((x) => x !== undefined).length;
  if (given > 1)
    throw new InputError(
      "Invalid input for field 'auth/scope': only one of project, domain and system may be given.",
    );
  if (s['OS-TRUST:trust'] !== undefined)
    throw new InputError('Trusts are not supported by this identity service.', { code: 'Unsupported' });
  if (s.project) return { type: 'project', project: projectRef(s.project, 'auth/scope/project') };
  if (s.domain) return { type: 'domain', domain: domainRef(s.domain, 'auth/scope/domain') };
  if (s.system) return s.system.all ? { type: 'system' } : { type: 'unscoped' };
  return { type: 'default' };
}

const extraValue = z.unknown();

/** Known user fields; everything else is a Keystone extra attribute. */
const UserFields = z.object({
  name: name.optional(),
  domain_id: id.optional(),
  enabled: z.boolean().optional(),
  password: z.string().max(4096).nullable().optional(),
  default_project_id: id.nullable().optional(),
  email: z.string().max(255).nullable().optional(),
  description: z.string().max(4096).nullable().optional(),
  service_account: z.boolean().nullable().optional(),
  options: z.record(z.string(), extraValue).optional(),
});
const USER_KEYS = new Set([
  ...Object.keys(UserFields.shape),
  'id',
  'links',
  'password_expires_at',
  'federated',
]);

const UserBody = z.object({ user: z.record(z.string(), extraValue) });

/** `POST /v3/users` and `PATCH /v3/users/{id}` bodies. */
export function parseUserInput(body: unknown, creating: boolean): UserInput {
  const raw = parseBody(UserBody, body).user;
  const f = parseBody(UserFields, raw);
  if (creating && !f.name)
    throw new InputError("Invalid input for field 'user/name': 'name' is a required property.", {
      code: 'Invalid',
    });
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!USER_KEYS.has(k)) extra[k] = v;
  const input: UserInput = {};
  if (f.name !== undefined) input.name = f.name;
  if (f.domain_id !== undefined) input.domainId = f.domain_id;
  if (f.enabled !== undefined) input.enabled = f.enabled;
  if (f.password !== undefined) input.password = f.password;
  if (f.default_project_id !== undefined) input.defaultProjectId = f.default_project_id;
  if (f.email !== undefined) input.email = f.email;
  if (f.description !== undefined) input.description = f.description;
  if (f.service_account !== undefined) input.serviceAccount = f.service_account === true;
  if (Object.keys(extra).length > 0) input.extra = extra;
  return input;
}

const ProjectFields = z.object({
  name: name.optional(),
  domain_id: id.nullable().optional(),
  description: z.string().max(4096).nullable().optional(),
  enabled: z.boolean().optional(),
  tags: z.array(z.string().min(1).max(255)).max(80).optional(),
  parent_id: id.nullable().optional(),
  is_domain: z.boolean().optional(),
  options: z.record(z.string(), extraValue).optional(),
});
const PROJECT_KEYS = new Set([...Object.keys(ProjectFields.shape), 'id', 'links']);
const ProjectBody = z.object({ project: z.record(z.string(), extraValue) });

/** `POST /v3/projects` and `PATCH /v3/projects/{id}` bodies. */
export function parseProjectInput(body: unknown, creating: boolean): ProjectInput {
  const raw = parseBody(ProjectBody, body).project;
  const f = parseBody(ProjectFields, raw);
  if (creating && !f.name)
    throw new InputError("Invalid input for field 'project/name': 'name' is a required property.", {
      code: 'Invalid',
    });
  if (f.is_domain === true)
    throw new InputError('Projects acting as domains are not supported.', { code: 'Unsupported' });
  const domainId = f.domain_id ?? undefined;
  if (f.parent_id && f.parent_id !== (domainId ?? f.parent_id)) {
    throw new InputError('Nested projects are not supported: parent_id must be the domain.', {
      code: 'Unsupported',
    });
  }
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!PROJECT_KEYS.has(k)) extra[k] = v;
  const input: ProjectInput = {};
  if (f.name !== undefined) input.name = f.name;
  if (domainId !== undefined) input.domainId = domainId;
  else if (creating && f.parent_id) input.domainId = f.parent_id;
  if (f.description !== undefined) input.description = f.description;
  if (f.enabled !== undefined) input.enabled = f.enabled;
  if (f.tags !== undefined) input.tags = f.tags;
  if (Object.keys(extra).length > 0) input.extra = extra;
  return input;
}

const PasswordBody = z.object({
  user: z.object({ password: z.string().min(1).max(4096), original_password: z.string().max(4096) }),
});

/** `POST /v3/users/{id}/password`. */
export function parsePasswordChange(body: unknown): { password: string; original: string } {
  const { user } = parseBody(PasswordBody, body);
  return { password: user.password, original: user.original_password };
}

const AppCredBody = z.object({
  application_credential: z.object({
    name,
    description: z.string().max(4096).nullable().optional(),
    secret: z.string().max(4096).nullable().optional(),
    expires_at: z.string().nullable().optional(),
    roles: z
      .array(z.object({ id: id.optional(), name: name.optional() }))
      .nullable()
      .optional(),
    unrestricted: z.boolean().nullable().optional(),
    access_rules: z.array(z.unknown()).nullable().optional(),
  }),
});

/** An ISO time; a time without zone is UTC (as Keystone reads it). */
function parseTime(s: string, field: string): number {
  const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`;
  const ms = Date.parse(withZone);
  if (!Number.isFinite(ms))
    throw new InputError(`Invalid input for field '${field}': '${s}' is not an ISO 8601 time.`, {
      code: 'Invalid',
    });
  return ms;
}

/** `POST /v3/users/{id}/application_credentials`. */
export function parseAppCredInput(body: unknown): AppCredInput {
  const { application_credential: a } = parseBody(AppCredBody, body);
  if (a.access_rules && a.access_rules.length > 0) {
    throw new InputError(
      'Access rules are not supported by this identity service; leave access_rules empty.',
      { code: 'Unsupported' },
    );
  }
  const roles = (a.roles ?? []).map((r, i) => {
    if (r.id) return { id: r.id };
    if (r.name) return { name: r.name };
    throw new InputError(
      `Invalid input for field 'application_credential/roles/${i}': a role id or name is required.`,
      { code: 'Invalid' },
    );
  });
  const input: AppCredInput = { name: a.name, roles };
  if (a.description !== undefined) input.description = a.description;
  if (a.secret) input.secret = a.secret;
  if (a.expires_at) input.expiresAtMs = parseTime(a.expires_at, 'application_credential/expires_at');
  if (a.unrestricted !== undefined && a.unrestricted !== null) input.unrestricted = a.unrestricted;
  return input;
}

/** A boolean query parameter as Keystone reads it: present and not false-ish. */
export function queryFlag(v: unknown): boolean {
  if (v === undefined) return false;
  const s = (queryString(v) ?? '').toLowerCase();
  return !['0', 'false', 'f', 'no', 'n', 'off'].includes(s);
}

/** An optional boolean filter (`?enabled=false`). */
export function queryBool(v: unknown): boolean | undefined {
  return v === undefined ? undefined : queryFlag(v);
}

/** A string query parameter (the first when repeated). */
export function queryString(v: unknown): string | undefined {
  if (Array.isArray(v)) return queryString(v[0]);
  return typeof v === 'string' ? v : undefined;
}
