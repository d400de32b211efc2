import type { AssignmentScope, RoleSpec } from './kinds.ts';
import type { TokenScope } from './token-codec.ts';
import type { IdentityView, Rec } from './view.ts';

/** The roles Magnetar ships, strongest first: each implies the next. */
export const BUILTIN_ROLES = ['admin', 'member', 'reader'] as const;

/** Role ids plus every role they imply, transitively. */
export function expandImplied(view: IdentityView, roleIds: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const stack = [...roleIds];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (out.has(id)) continue;
    const role = view.roles.get(id);
    if (!role) continue;
    out.add(id);
    stack.push(...role.spec.implies);
  }
  return out;
}

function scopeMatches(a: AssignmentScope, s: TokenScope): boolean {
  switch (s.type) {
    case 'unscoped':
      return false;
    case 'system':
      return a.type === 'system';
    case 'project':
    case 'domain':
      return a.type === s.type && a.id === s.id;
  }
}

/** Role ids granted directly to a user on a scope (no implication). */
export function directRoleIds(view: IdentityView, userId: string, scope: TokenScope): Set<string> {
  const out = new Set<string>();
  for (const a of view.assignmentsOf(userId)) if (scopeMatches(a.spec.scope, scope)) out.add(a.spec.roleId);
  return out;
}

/** Effective role ids of a user on a scope: direct assignments with implied roles expanded. */
export function effectiveRoleIds(view: IdentityView, userId: string, scope: TokenScope): Set<string> {
  return expandImplied(view, directRoleIds(view, userId, scope));
}

/** Role records for ids, in a stable order (built-in roles first, strongest first). */
export function rolesOf(view: IdentityView, ids: Iterable<string>): Rec<RoleSpec>[] {
  const rank = (name: string) => {
    const i = (BUILTIN_ROLES as readonly string[]).indexOf(name);
    return i < 0 ? BUILTIN_ROLES.length : i;
  };
  const out: Rec<RoleSpec>[] = [];
  for (const id of ids) {
    const r = view.roles.get(id);
    if (r) out.push(r);
  }
  return out.sort((a, b) => rank(a.spec.name) - rank(b.spec.name) || a.spec.name.localeCompare(b.spec.name));
}
