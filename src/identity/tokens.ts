import { AuthenticationError, type AuthContext } from '../domain/index.ts';
import { commitAndSync, deleteOp, keystoneTime, newIdentityObject, type IdentityCore } from './core.ts';
import type { ApplicationCredentialSpec, DomainSpec, ProjectSpec, RoleSpec, UserSpec } from './kinds.ts';
import { effectiveRoleIds, expandImplied, rolesOf } from './roles.ts';
import { decodeToken, encodeToken, type TokenPayload } from './token-codec.ts';
import type { Rec } from './view.ts';

/** A valid token with everything Keystone shows about it. */
export interface ResolvedToken {
  token: string;
  payload: TokenPayload;
  user: Rec<UserSpec>;
  userDomain: Rec<DomainSpec>;
  /** Project scope. */
  project?: { project: Rec<ProjectSpec>; domain: Rec<DomainSpec> };
  /** Domain scope. */
  domain?: Rec<DomainSpec>;
  /** System scope. */
  system: boolean;
  /** Effective roles (implied roles expanded); empty when unscoped. */
  roles: Rec<RoleSpec>[];
  appCred?: Rec<ApplicationCredentialSpec>;
}

const NEEDS_AUTH = 'The request you have made requires authentication.';

function deny(reason: string): AuthenticationError {
  return new AuthenticationError(`${NEEDS_AUTH} ${reason}`, { code: 'InvalidToken' });
}

/**
 * Validate a token against the live identity state: signature, expiry, revocation, then the
 * user, scope, roles and application credential as they are now. Never touches the store.
 */
export function resolveToken(core: IdentityCore, token: string): ResolvedToken {
  const view = core.view;
  const p = decodeToken(token, view.keys);
  if (!p) throw deny('The token is malformed or was not issued by this service.');
  const now = core.clock.now();
  if (now >= p.expiresAtMs) throw deny('The token has expired.');
  for (const audit of p.auditIds) if (view.revoked.has(audit)) throw deny('The token has been revoked.');
  const user = view.users.get(p.userId);
  if (!user) throw deny('The user no longer exists.');
  if (!user.spec.enabled) throw deny('The user is disabled.');
  if (user.spec.tokensValidAfterMs !== undefined && p.issuedAtMs < user.spec.tokensValidAfterMs) {
    throw deny('The token was issued before the password changed.');
  }
  const userDomain = view.domains.get(user.spec.domainId);
  if (!userDomain?.spec.enabled) throw deny("The user's domain is disabled or gone.");

  let appCred: Rec<ApplicationCredentialSpec> | undefined;
  if (p.appCredId !== undefined) {
    appCred = view.appCreds.get(p.appCredId);
    if (!appCred || appCred.spec.userId !== user.id)
      throw deny('The application credential no longer exists.');
    if (appCred.spec.expiresAtMs !== null && now >= appCred.spec.expiresAtMs)
      throw deny('The application credential has expired.');
  }

  const resolved: ResolvedToken = {
    token,
    payload: p,
    user,
    userDomain,
    system: false,
    roles: [],
    ...(appCred ? { appCred } : {}),
  };
  const scope = p.scope;
  switch (scope.type) {
    case 'unscoped':
      return resolved;
    case 'project': {
      const project = view.projects.get(scope.id);
      if (!project) throw deny('The project no longer exists.');
      if (!project.spec.enabled) throw deny('The project is disabled.');
      const domain = view.domains.get(project.spec.domainId);
      if (!domain?.spec.enabled) throw deny("The project's domain is disabled or gone.");
      resolved.project = { project, domain };
      break;
    }
    case 'domain': {
      const domain = view.domains.get(scope.id);
      if (!domain?.spec.enabled) throw deny('The domain is disabled or gone.');
      resolved.domain = domain;
      break;
    }
    case 'system':
      resolved.system = true;
      break;
  }
  let ids = effectiveRoleIds(view, user.id, scope);
  if (appCred) {
    const allowed = expandImplied(view, appCred.spec.roleIds);
    ids = new Set([...ids].filter((id) => allowed.has(id)));
  }
  if (ids.size === 0) throw deny('The user has no role on the scope of the token.');
  resolved.roles = rolesOf(view, ids);
  return resolved;
}

/** The {@link AuthContext} the façades see. */
export function authContextOf(r: ResolvedToken): AuthContext {
  const roles = r.roles.map((x) => x.spec.name);
  const ctx: AuthContext = {
    token: r.token,
    userId: r.user.id,
    userName: r.user.spec.name,
    userDomainId: r.user.spec.domainId,
    roles,
    isServiceAccount: r.user.spec.serviceAccount,
    isAdmin: roles.includes('admin'),
    expiresAt: keystoneTime(r.payload.expiresAtMs),
    methods: r.payload.methods,
  };
  if (r.project) {
    ctx.projectId = r.project.project.id;
    ctx.projectName = r.project.project.spec.name;
    ctx.projectDomainId = r.project.project.spec.domainId;
  }
  return ctx;
}

/** Sign a new token and resolve it (which checks the user has roles on the scope). */
export function mintToken(core: IdentityCore, payload: TokenPayload): ResolvedToken {
  const key = core.view.currentKey;
  if (!key) throw new Error('identity: no signing key loaded');
  return resolveToken(core, encodeToken(payload, key));
}

/** Revoke a token (by its audit id) until it would have expired anyway. */
export async function revokeToken(core: IdentityCore, r: ResolvedToken): Promise<void> {
  const auditId = r.payload.auditIds[0];
  if (auditId === undefined || core.view.revoked.has(auditId)) return;
  const revocation = newIdentityObject('TokenRevocation', auditId, {
    auditId,
    expiresAtMs: r.payload.expiresAtMs,
  });
  try {
    await commitAndSync(core, [{ op: 'create', object: revocation }]);
  } catch (err) {
    // Revoked concurrently by someone else: the outcome is the same.
    if (!core.view.revoked.has(auditId)) throw err;
  }
}

/** Remove revocation records of tokens that have expired anyway. */
export async function purgeExpiredRevocations(core: IdentityCore): Promise<number> {
  const now = core.clock.now();
  const ops = [...core.view.revoked.entries()]
    .filter(([, exp]) => exp <= now)
    .slice(0, 500)
    .map(([auditId]) => deleteOp('TokenRevocation', auditId));
  if (ops.length === 0) return 0;
  try {
    await commitAndSync(core, ops);
  } catch (err) {
    core.logger.debug({ err }, 'purging expired token revocations failed; will retry later');
    return 0;
  }
  return ops.length;
}
