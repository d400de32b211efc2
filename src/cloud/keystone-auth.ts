import { z } from 'zod';
import { CatalogSchema, type Catalog, trimSlash } from './catalog.ts';
import { authKindOf, CloudConfigError, type CloudConfig } from './clouds-config.ts';

/** Keystone v3 token requests built from a cloud configuration, and the answer parsed. */

/** `POST /v3/auth/tokens` URL for an `auth_url`, versioned or not. */
export function tokensUrl(authUrl: string): string {
  return `${identityBase(authUrl)}/auth/tokens`;
}

/** The `/v3` base of Keystone for an `auth_url` (`…/v2.0` and unversioned URLs become `…/v3`). */
export function identityBase(authUrl: string): string {
  const url = trimSlash(authUrl);
  if (/\/v3(\.\d+)?$/.test(url)) return url.replace(/\/v3\.\d+$/, '/v3');
  if (/\/v2\.0$/.test(url)) return `${url.slice(0, -'/v2.0'.length)}/v3`;
  return `${url}/v3`;
}

type DomainRef = { id: string } | { name: string };

function domainRef(a: Record<string, string>, prefix: 'user' | 'project'): DomainRef {
  const id = a[`${prefix}_domain_id`];
  const name = a[`${prefix}_domain_name`];
  if (id) return { id };
  if (name) return { name };
  // openstack client behaviour: the general domain, then the default domain, stands in.
  if (a.domain_id) return { id: a.domain_id };
  if (a.domain_name) return { name: a.domain_name };
  if (a.default_domain_name) return { name: a.default_domain_name };
  return { id: a.default_domain_id ?? 'default' };
}

function scopeOf(a: Record<string, string>): Record<string, unknown> | undefined {
  if (a.project_id) return { project: { id: a.project_id } };
  if (a.project_name) return { project: { name: a.project_name, domain: domainRef(a, 'project') } };
  if (a.system_scope) return { system: { all: true } };
  if (a.domain_id) return { domain: { id: a.domain_id } };
  if (a.domain_name) return { domain: { name: a.domain_name } };
  return undefined;
}

/** Body of `POST /v3/auth/tokens` for a configuration using Keystone. */
export function tokenRequestBody(config: CloudConfig): Record<string, unknown> {
  const a = config.auth;
  const kind = authKindOf(config.authType);
  switch (kind) {
    case 'password': {
      const user = a.user_id
        ? { id: a.user_id, password: a.password }
        : { name: a.username, domain: domainRef(a, 'user'), password: a.password };
      const scope = scopeOf(a);
      return {
        auth: { identity: { methods: ['password'], password: { user } }, ...(scope ? { scope } : {}) },
      };
    }
    case 'application-credential': {
      // An application credential carries its own project: Keystone refuses a scope here.
      const credential = a.application_credential_id
        ? { id: a.application_credential_id, secret: a.application_credential_secret }
        : {
            name: a.application_credential_name,
            secret: a.application_credential_secret,
            user: a.user_id ? { id: a.user_id } : { name: a.username, domain: domainRef(a, 'user') },
          };
      return {
        auth: { identity: { methods: ['application_credential'], application_credential: credential } },
      };
    }
    case 'token': {
      const scope = scopeOf(a);
      return {
        auth: { identity: { methods: ['token'], token: { id: a.token } }, ...(scope ? { scope } : {}) },
      };
    }
    case 'admin-token':
    case 'none':
      throw new CloudConfigError(`auth_type ${config.authType} does not talk to Keystone`);
  }
}

const TokenBodySchema = z.object({
  token: z.looseObject({
    expires_at: z.string(),
    issued_at: z.string().optional(),
    methods: z.array(z.string()).optional(),
    user: z.looseObject({ id: z.string(), name: z.string().optional() }).optional(),
    project: z.looseObject({ id: z.string(), name: z.string().optional() }).optional(),
    catalog: CatalogSchema.optional(),
  }),
});

/** What a session keeps from a token answer. */
export interface IssuedToken {
  token: string;
  /** Local clock time (ms) after which the token is no longer valid. */
  expiresAt: number;
  /** Local clock time (ms) the token was received. */
  obtainedAt: number;
  catalog: Catalog | undefined;
  projectId: string | undefined;
  userId: string | undefined;
}

/**
 * Parse a token answer. The lifetime is taken from `expires_at - issued_at` and counted on
 * the local clock, so a skewed server clock does not make a fresh token look stale.
 */
export function parseTokenAnswer(
  subjectToken: string | undefined,
  body: unknown,
  now: number,
): IssuedToken | string {
  if (!subjectToken) return 'the answer has no X-Subject-Token header';
  const parsed = TokenBodySchema.safeParse(body);
  if (!parsed.success)
    return `unexpected token body: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`;
  const t = parsed.data.token;
  const expires = Date.parse(t.expires_at);
  if (Number.isNaN(expires)) return `unreadable expires_at "${t.expires_at}"`;
  const issued = t.issued_at ? Date.parse(t.issued_at) : Number.NaN;
  const lifetime = Number.isNaN(issued) ? expires - now : expires - issued;
  return {
    token: subjectToken,
    expiresAt: now + Math.max(0, lifetime),
    obtainedAt: now,
    catalog: t.catalog,
    projectId: t.project?.id,
    userId: t.user?.id,
  };
}
