import { z } from 'zod';
import {
  AuthenticationError,
  systemClock,
  UnavailableError,
  type AuthContext,
  type Clock,
  type ProjectInfo,
} from '../domain/index.ts';
import type { ServiceRegistration } from './catalog.ts';
import { publishToKeystone, type PublishedService } from './keystone-catalog.ts';
import type { MagnetarIdentity, ServiceToken } from './provider.ts';

/** How Magnetar's service user logs in to the external Keystone. */
export type KeystoneServiceAuth =
  | {
      method: 'password';
      username: string;
      password: string;
      /** @default Default */
      userDomainName?: string;
      projectName: string;
      /** @default Default */
      projectDomainName?: string;
    }
  | { method: 'application_credential'; id: string; secret: string };

/** Options of {@link KeystoneIdentity}. */
export interface KeystoneIdentityOptions {
  /** The external Keystone, e.g. `https://keystone.example:5000` or `…/v3`. */
  keystoneUrl: string;
  /** Credentials of a user allowed to validate tokens and read users and projects (admin or service role). */
  service: KeystoneServiceAuth;
  /** Public base URL of this server. */
  baseUrl: () => string;
  /** @default systemClock */
  clock?: Clock;
  /** How long a validated token is trusted before Keystone is asked again. Revocations take up to this long. @default 30 */
  cacheSeconds?: number;
  /** Most validated tokens kept. @default 10000 */
  cacheSize?: number;
  /** Time limit of one call to Keystone. @default 10000 */
  timeoutMs?: number;
}

const Ref = z.object({ id: z.string(), name: z.string() });
const TokenBody = z.object({
  token: z.object({
    methods: z.array(z.string()).default([]),
    expires_at: z.string(),
    user: Ref.extend({ domain: z.object({ id: z.string() }) }),
    project: Ref.extend({ domain: z.object({ id: z.string() }) }).optional(),
    roles: z.array(z.object({ name: z.string() })).default([]),
  }),
});
const UserBody = z.object({
  user: z.looseObject({ id: z.string(), service_account: z.unknown().optional() }),
});
const ProjectShape = z.object({
  id: z.string(),
  name: z.string(),
  domain_id: z.string(),
  enabled: z.boolean().default(true),
});

/** Attempts of a call Keystone's connection dropped (safe calls only). */
const KEYSTONE_ATTEMPTS = 4;

interface Cached<T> {
  value: T;
  untilMs: number;
}

/**
 * Identity backed by an external Keystone (`identity.mode: keystone`): tokens are validated
 * with `GET /v3/auth/tokens` using Magnetar's service token, and cached briefly. The
 * service-account flag is read from the user's `service_account` attribute. The catalog is
 * the external Keystone's: {@link registerService} records what Magnetar publishes, and
 * {@link publishCatalog} writes it there (idempotent, at start, with admin credentials).
 */
export class KeystoneIdentity implements MagnetarIdentity {
  readonly mode = 'keystone' as const;
  /** Services other modules asked to publish; register them in the external Keystone. */
  readonly registrations: ServiceRegistration[] = [];
  private readonly v3: string;
  private readonly clock: Clock;
  private readonly cacheMs: number;
  private readonly cacheSize: number;
  private readonly timeoutMs: number;
  private readonly tokens = new Map<string, Cached<AuthContext>>();
  private readonly inflight = new Map<string, Promise<AuthContext>>();
  private readonly serviceAccounts = new Map<string, Cached<boolean>>();
  private readonly scopedServiceTokens = new Map<string, Cached<ServiceToken>>();
  private serviceToken: Cached<string> | undefined;
  private homeProjectId: string | undefined;

  constructor(private readonly options: KeystoneIdentityOptions) {
    const url = options.keystoneUrl.replace(/\/+$/, '');
    this.v3 = /\/v3$/.test(url) ? url : `${url}/v3`;
    this.clock = options.clock ?? systemClock;
    this.cacheMs = (options.cacheSeconds ?? 30) * 1000;
    this.cacheSize = options.cacheSize ?? 10_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  get baseUrl(): string {
    return this.options.baseUrl();
  }

  /**
   * The project the service user logs in to (e.g. `service`), where it holds its own roles:
   * admin reads that are not about one tenant project (another user's keypair) are made there.
   */
  async serviceProjectId(): Promise<string | undefined> {
    if (!this.homeProjectId) await this.service();
    return this.homeProjectId;
  }

  registerService(reg: ServiceRegistration): void {
    this.registrations.push(reg);
  }

  /**
   * Publish the recorded registrations of these service types (default: `container-infra`, the
   * Magnum API) in the external Keystone's catalog, idempotently (see {@link publishToKeystone}).
   * The service user needs the admin role in its project to write the catalog.
   */
  async publishCatalog(
    region: string,
    types: readonly string[] = ['container-infra'],
  ): Promise<PublishedService[]> {
    return publishToKeystone(
      (method, path, body, options) => this.asServiceCall(method, path, body, options),
      this.registrations.filter((r) => types.includes(r.type)),
      region,
    );
  }

  async close(): Promise<void> {
    this.tokens.clear();
  }

  /**
   * One call to Keystone. A connection Keystone drops (it closes reused keep-alive connections
   * now and then) is retried when the call is safe to repeat: reads, token requests, and
   * writes the caller marks `idempotent`.
   */
  async request(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown; idempotent?: boolean },
  ): Promise<Response> {
    const method = init.method ?? 'GET';
    const repeatable =
      init.idempotent ??
      (['GET', 'HEAD', 'PUT', 'DELETE'].includes(method) || path.startsWith('/auth/tokens'));
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(`${this.v3}${path}`, {
          method,
          headers: {
            accept: 'application/json',
            ...(init.body ? { 'content-type': 'application/json' } : {}),
            ...init.headers,
          },
          ...(init.body ? { body: JSON.stringify(init.body) } : {}),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        const timedOut = err instanceof Error && err.name === 'TimeoutError';
        if (repeatable && !timedOut && attempt < KEYSTONE_ATTEMPTS) continue;
        throw new UnavailableError(`The identity service at ${this.v3} cannot be reached.`, {
          code: 'KeystoneUnreachable',
          cause: err,
        });
      }
    }
  }

  /** A call with the service token (renewed once on 401), for catalog registration. */
  async asServiceCall(
    method: string,
    path: string,
    body?: unknown,
    options: { idempotent?: boolean } = {},
  ): Promise<Response> {
    const send = async (token: string) =>
      this.request(path, {
        method,
        headers: { 'x-auth-token': token },
        ...(body === undefined ? {} : { body }),
        ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
      });
    let res = await send(await this.service());
    if (res.status === 401) {
      await res.body?.cancel();
      res = await send(await this.service(true));
    }
    return res;
  }

  private authBody(projectId?: string): unknown {
    const s = this.options.service;
    if (s.method === 'application_credential') {
      return {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: s.id, secret: s.secret },
          },
        },
      };
    }
    const scope = projectId
      ? { project: { id: projectId } }
      : { project: { name: s.projectName, domain: { name: s.projectDomainName ?? 'Default' } } };
    return {
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: { name: s.username, password: s.password, domain: { name: s.userDomainName ?? 'Default' } },
          },
        },
        scope,
      },
    };
  }

  private async login(projectId?: string): Promise<{ token: string; expiresAtMs: number; untilMs: number }> {
    const res = await this.request('/auth/tokens?nocatalog', {
      method: 'POST',
      body: this.authBody(projectId),
    });
    const token = res.headers.get('x-subject-token');
    if (res.status !== 201 || !token) {
      await res.body?.cancel();
      throw new UnavailableError(
        `Magnetar's service user cannot log in to ${this.v3} (HTTP ${res.status}); check its credentials.`,
        {
          code: 'ServiceLoginFailed',
        },
      );
    }
    const body = TokenBody.safeParse(await res.json());
    const now = this.clock.now();
    const expiresAtMs = body.success ? Date.parse(body.data.token.expires_at) : now + 60_000;
    // Renew well before expiry so a token is never used in its last minutes.
    if (!projectId && body.success && body.data.token.project)
      this.homeProjectId = body.data.token.project.id;
    return { token, expiresAtMs, untilMs: Math.max(now, Math.min(expiresAtMs - 120_000, now + 3_600_000)) };
  }

  private async service(force = false): Promise<string> {
    if (force || !this.serviceToken || this.clock.now() >= this.serviceToken.untilMs) {
      const t = await this.login();
      this.serviceToken = { value: t.token, untilMs: t.untilMs };
    }
    return this.serviceToken.value;
  }

  /** A call with the service token, logging in again once if Keystone says it expired. */
  private async asService(path: string, headers: Record<string, string> = {}): Promise<Response> {
    let res = await this.request(path, { headers: { 'x-auth-token': await this.service(), ...headers } });
    if (res.status === 401 && !headers['x-subject-token']) {
      await res.body?.cancel();
      res = await this.request(path, { headers: { 'x-auth-token': await this.service(true), ...headers } });
    }
    return res;
  }

  private remember<T>(map: Map<string, Cached<T>>, key: string, value: T, untilMs: number): void {
    if (map.size >= this.cacheSize) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
    map.set(key, { value, untilMs });
  }

  async validate(token: string): Promise<AuthContext> {
    if (!token)
      throw new AuthenticationError('The request you have made requires authentication.', {
        code: 'NoToken',
      });
    const now = this.clock.now();
    const hit = this.tokens.get(token);
    if (hit && now < hit.untilMs) return hit.value;
    const pending = this.inflight.get(token);
    if (pending) return pending;
    const p = this.fetchContext(token).finally(() => this.inflight.delete(token));
    this.inflight.set(token, p);
    return p;
  }

  private async fetchContext(token: string): Promise<AuthContext> {
    let res = await this.request('/auth/tokens?nocatalog', {
      headers: { 'x-auth-token': await this.service(), 'x-subject-token': token },
    });
    if (res.status === 401) {
      // Ours may have expired: log in again and ask once more.
      await res.body?.cancel();
      res = await this.request('/auth/tokens?nocatalog', {
        headers: { 'x-auth-token': await this.service(true), 'x-subject-token': token },
      });
    }
    if (res.status === 404 || res.status === 401) {
      await res.body?.cancel();
      throw new AuthenticationError(
        'The request you have made requires authentication. The token is invalid, expired or revoked.',
        {
          code: 'InvalidToken',
        },
      );
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new UnavailableError(
        `The identity service answered HTTP ${res.status} while validating a token.`,
        { code: 'KeystoneError' },
      );
    }
    const parsed = TokenBody.safeParse(await res.json());
    if (!parsed.success)
      throw new UnavailableError('The identity service answered an unexpected token body.', {
        code: 'KeystoneBadBody',
      });
    const t = parsed.data.token;
    const roles = t.roles.map((r) => r.name);
    const ctx: AuthContext = {
      token,
      userId: t.user.id,
      userName: t.user.name,
      userDomainId: t.user.domain.id,
      roles,
      isServiceAccount: await this.isServiceAccount(t.user.id),
      isAdmin: roles.includes('admin'),
      expiresAt: t.expires_at,
      methods: t.methods,
      ...(t.project
        ? { projectId: t.project.id, projectName: t.project.name, projectDomainId: t.project.domain.id }
        : {}),
    };
    const expires = Date.parse(t.expires_at);
    const now = this.clock.now();
    if (now >= expires)
      throw new AuthenticationError(
        'The request you have made requires authentication. The token has expired.',
      );
    this.remember(this.tokens, token, ctx, Math.min(now + this.cacheMs, expires));
    return ctx;
  }

  private async isServiceAccount(userId: string): Promise<boolean> {
    const now = this.clock.now();
    const hit = this.serviceAccounts.get(userId);
    if (hit && now < hit.untilMs) return hit.value;
    const res = await this.asService(`/users/${encodeURIComponent(userId)}`);
    let flag = false;
    if (res.status === 200) {
      const body = UserBody.safeParse(await res.json());
      flag =
        body.success &&
        (body.data.user.service_account === true || body.data.user.service_account === 'true');
    } else await res.body?.cancel();
    this.remember(this.serviceAccounts, userId, flag, now + this.cacheMs);
    return flag;
  }

  async getProject(id: string): Promise<ProjectInfo | undefined> {
    const res = await this.asService(`/projects/${encodeURIComponent(id)}`);
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new UnavailableError(`The identity service answered HTTP ${res.status} for project ${id}.`, {
        code: 'KeystoneError',
      });
    }
    const p = z.object({ project: ProjectShape }).parse(await res.json()).project;
    return { id: p.id, name: p.name, domainId: p.domain_id, enabled: p.enabled };
  }

  async listProjects(): Promise<ProjectInfo[]> {
    const res = await this.asService('/projects');
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new UnavailableError(`The identity service answered HTTP ${res.status} listing projects.`, {
        code: 'KeystoneError',
      });
    }
    return z
      .object({ projects: z.array(ProjectShape) })
      .parse(await res.json())
      .projects.map((p) => ({ id: p.id, name: p.name, domainId: p.domain_id, enabled: p.enabled }));
  }

  /**
   * A token of the service user scoped to `projectId`. The external Keystone must already
   * grant the service user a role there (Magnetar does not manage an external Keystone's roles).
   */
  async issueServiceToken(projectId: string): Promise<ServiceToken> {
    const hit = this.scopedServiceTokens.get(projectId);
    if (hit && this.clock.now() < hit.untilMs) return hit.value;
    if (this.options.service.method === 'application_credential') {
      throw new AuthenticationError(
        'An application credential is bound to one project; use a password service user for other projects.',
        {
          code: 'ServiceScope',
        },
      );
    }
    const t = await this.login(projectId);
    const value: ServiceToken = {
      token: t.token,
      expiresAt: new Date(t.expiresAtMs).toISOString(),
      projectId,
    };
    this.remember(this.scopedServiceTokens, projectId, value, t.untilMs);
    return value;
  }
}

/**
 * The service credentials of a clouds.yaml `auth:` section (password or application
 * credential). Throws naming the missing key.
 */
export function keystoneServiceAuth(
  authType: string,
  auth: Record<string, string | undefined>,
): KeystoneServiceAuth {
  const need = (key: string): string => {
    const v = auth[key];
    if (!v)
      throw new Error(
        `identity.mode keystone: the cloud's auth section needs ${key} (auth type ${authType})`,
      );
    return v;
  };
  if (/application_?credential/.test(authType)) {
    return {
      method: 'application_credential',
      id: need('application_credential_id'),
      secret: need('application_credential_secret'),
    };
  }
  return {
    method: 'password',
    username: need('username'),
    password: need('password'),
    projectName: need('project_name'),
    userDomainName: auth.user_domain_name ?? 'Default',
    projectDomainName: auth.project_domain_name ?? 'Default',
  };
}
