import type { FastifyRequest } from 'fastify';
import {
  AuthenticationError,
  hasRole,
  NotAllowedError,
  type AuthContext,
  type IdentityProvider,
} from '../../domain/index.ts';

/**
 * Who may do what through the kube façade. kubectl sends the identity token as
 * `Authorization: Bearer <token>` (from the kubeconfig's exec plugin or a static token);
 * OpenStack clients send `X-Auth-Token`. Namespaces are project ids: a caller sees the
 * project its token is scoped to; admins see every project. Reading needs any role in the
 * project; writing needs `member` (or `admin`).
 */

/** The token of a request, or undefined. */
export function tokenOf(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const x = req.headers['x-auth-token'];
  return typeof x === 'string' && x.trim() !== '' ? x.trim() : undefined;
}

/** Validate the caller's token; 401 when missing or invalid. */
export async function authenticate(identity: IdentityProvider, req: FastifyRequest): Promise<AuthContext> {
  const token = tokenOf(req);
  if (!token) throw new AuthenticationError('Unauthorized', { code: 'Unauthorized' });
  try {
    return await identity.validate(token);
  } catch (err) {
    throw new AuthenticationError('Unauthorized', { code: 'Unauthorized', cause: err });
  }
}

/** A read or a write. */
export type Access = 'read' | 'write';

/** True when the caller may act in `namespace` (project id). */
export function canAccess(ctx: AuthContext, namespace: string, access: Access): boolean {
  if (ctx.isAdmin) return true;
  if (ctx.projectId !== namespace) return false;
  return access === 'read' || hasRole(ctx, 'member');
}

/** Throw a Kubernetes-worded 403 unless the caller may `verb` `resource` in `namespace`. */
export function checkAccess(
  ctx: AuthContext,
  what: { verb: string; resource: string; group: string; namespace: string },
  access: Access,
): void {
  if (canAccess(ctx, what.namespace, access)) return;
  throw new NotAllowedError(
    `${what.resource}${what.group ? `.${what.group}` : ''} is forbidden: User "${ctx.userName}" cannot ${what.verb} resource "${what.resource}" in API group "${what.group}" in the namespace "${what.namespace}"`,
    { code: 'Forbidden', details: { kind: what.resource, group: what.group } },
  );
}

/** Namespaces the caller may list in when no namespace is given: undefined = all (admins). */
export function visibleNamespaces(ctx: AuthContext): string[] | undefined {
  if (ctx.isAdmin) return undefined;
  return ctx.projectId ? [ctx.projectId] : [];
}
