import { NotAllowedError, NotFoundError, type AuthContext } from '../domain/index.ts';

/**
 * Who may do what in the identity API, after Keystone's defaults: `admin` (on any scope)
 * manages everything; everyone reads their own user, projects and application credentials.
 */

/** Forbidden, in Keystone's words, naming the policy rule. */
export function forbidden(rule: string, why?: string): NotAllowedError {
  return new NotAllowedError(
    `You are not authorized to perform the requested action: ${rule}.${why ? ` ${why}` : ''}`,
    {
      code: 'Forbidden',
    },
  );
}

/** Throw 403 unless the caller has the admin role. */
export function requireAdmin(caller: AuthContext, rule: string): void {
  if (!caller.isAdmin) throw forbidden(rule);
}

/** Throw 403 unless the caller is the admin or the user `userId` themself. */
export function requireAdminOrSelf(caller: AuthContext, userId: string, rule: string): void {
  if (!caller.isAdmin && caller.userId !== userId) throw forbidden(rule);
}

/** Keystone's not-found message: `Could not find user: <id>.` */
export function notFound(what: string, id: string): NotFoundError {
  return new NotFoundError(`Could not find ${what}: ${id}.`, { code: 'NotFound' });
}
