import type { FastifyRequest } from 'fastify';
import {
  AuthenticationError,
  NotAllowedError,
  hasRole,
  type AuthContext,
  type Clock,
  type CloudLookup,
  type ClusterPki,
  type IdentityProvider,
  type OperatorPolicy,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import type { Microversion } from './microversion.ts';
import type { MagnumReadModel } from './read-model.ts';
import type { TypedStore } from './typed-store.ts';

/** What the Magnum v1 façade needs from the rest of Magnetar. */
export interface MagnumApiDeps {
  store: ObjectStore;
  identity: IdentityProvider;
  clock: Clock;
  /** The operator policy (see `defaultPolicy`). */
  policy: OperatorPolicy;
  /** Public base URL for `links` and `next`, e.g. `http://127.0.0.1:9511` (no trailing slash). */
  baseUrl: () => string;
  /** OpenStack resource checks (image, flavors, keypair, networks); skipped when absent. */
  cloud?: CloudLookup;
  /** Cluster certificate authorities; `/v1/certificates` answers 503 when absent. */
  pki?: ClusterPki;
}

/** The authenticated caller, as Magnum's policy sees it. */
export interface Caller {
  auth: AuthContext;
  projectId: string;
  userId: string;
  isAdmin: boolean;
  /** member (or admin) in the token's project. */
  isMember: boolean;
  /** reader (or member, or admin) in the token's project. */
  isReader: boolean;
}

/** Everything a route handler works with. */
export interface Env {
  deps: MagnumApiDeps;
  /** `deps.store` with the Magnum kinds' types. */
  store: TypedStore;
  model: MagnumReadModel;
}

/** Per-request state set by the `/v1` hooks. */
export interface RequestState {
  version: Microversion;
  caller?: Caller;
}

const states = new WeakMap<FastifyRequest, RequestState>();

export function setState(req: FastifyRequest, state: RequestState): void {
  states.set(req, state);
}

/** The request's microversion and caller (the hooks guarantee both on authenticated routes). */
export function stateOf(req: FastifyRequest): { version: Microversion; caller: Caller } {
  const s = states.get(req);
  if (!s?.caller) throw new AuthenticationError('The request you have made requires authentication.');
  return { version: s.version, caller: s.caller };
}

/** The microversion of a `/v1` request (1.1 before the hook ran). */
export function versionOf(req: FastifyRequest): Microversion | undefined {
  return states.get(req)?.version;
}

/**
 * Validated tokens, kept for a few seconds as keystonemiddleware's token cache does in front of
 * Magnum (there 300 s by default): a revoked token may be honoured for at most this long.
 */
export class TokenCache {
  private readonly entries = new Map<string, { auth: AuthContext; untilMs: number }>();

  constructor(
    private readonly clock: Clock,
    /** @default 10000 */
    private readonly ttlMs = 10_000,
    /** @default 10000 */
    private readonly maxEntries = 10_000,
  ) {}

  async validate(identity: IdentityProvider, token: string): Promise<AuthContext> {
    const now = this.clock.now();
    const hit = this.entries.get(token);
    if (hit && hit.untilMs > now) return hit.auth;
    const auth = await identity.validate(token);
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const expires = Date.parse(auth.expiresAt);
    this.entries.set(token, {
      auth,
      untilMs: Math.min(now + this.ttlMs, Number.isFinite(expires) ? expires : now),
    });
    return auth;
  }
}

/** Validate the `X-Auth-Token` and build the caller. */
export async function authenticate(
  req: FastifyRequest,
  identity: IdentityProvider,
  cache?: TokenCache,
): Promise<Caller> {
  const header = req.headers['x-auth-token'];
  const token = Array.isArray(header) ? header[0] : header;
  if (!token)
    throw new AuthenticationError('The request you have made requires authentication.', {
      code: 'Unauthorized',
    });
  const auth = cache ? await cache.validate(identity, token) : await identity.validate(token);
  if (!auth.projectId) {
    throw new NotAllowedError(
      'The Container Infrastructure API needs a project-scoped token; authenticate with a project (e.g. OS_PROJECT_NAME).',
      { code: 'ProjectScopeRequired' },
    );
  }
  const isAdmin = auth.isAdmin || hasRole(auth, 'admin');
  const isMember = isAdmin || hasRole(auth, 'member');
  return {
    auth,
    projectId: auth.projectId,
    userId: auth.userId,
    isAdmin,
    isMember,
    isReader: isMember || hasRole(auth, 'reader'),
  };
}

/** The role a Magnum policy rule needs. */
export type RequiredRole = 'reader' | 'member' | 'admin';

/** Magnum's policy refusal (403): "Policy doesn't allow <rule> to be performed." plus what is missing. */
export function denied(rule: string, why: string): NotAllowedError {
  return new NotAllowedError(`Policy doesn't allow ${rule} to be performed: ${why}`, {
    code: 'PolicyNotAuthorized',
  });
}

/** Enforce a role rule ("admin or project reader/member", or "admin"). */
export function requireRole(caller: Caller, role: RequiredRole, rule: string): void {
  switch (role) {
    case 'admin':
      if (!caller.isAdmin) throw denied(rule, 'it needs the admin role.');
      return;
    case 'member':
      if (!caller.isMember) throw denied(rule, `it needs the member role in project ${caller.projectId}.`);
      return;
    case 'reader':
      if (!caller.isReader) throw denied(rule, `it needs the reader role in project ${caller.projectId}.`);
      return;
  }
}
