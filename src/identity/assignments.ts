import type { AuthContext } from '../domain/index.ts';
import { commitAndSync, deleteOp, newIdentityObject, type IdentityCore } from './core.ts';
import { assignmentName, type AssignmentScope, type RoleAssignmentSpec, type RoleSpec } from './kinds.ts';
import { forbidden, notFound, requireAdmin, requireAdminOrSelf } from './policy.ts';
import { expandImplied, rolesOf } from './roles.ts';
import type { Rec } from './view.ts';

/** Filters of `GET /v3/role_assignments`. */
export interface AssignmentQuery {
  userId?: string;
  roleId?: string;
  /** Only assignments on this project or domain, or on the system. */
  scope?: AssignmentScope;
  /** Expand implied roles into their own entries. @default false */
  effective?: boolean;
}

/** One entry of a role-assignment listing. */
export interface AssignmentEntry {
  userId: string;
  roleId: string;
  scope: AssignmentScope;
  /** Set for an entry that exists only through implication: the role actually assigned. */
  priorRoleId?: string;
}

function sameScope(a: AssignmentScope, b: AssignmentScope): boolean {
  if (a.type === 'system' || b.type === 'system') return a.type === b.type;
  return a.type === b.type && a.id === b.id;
}

/** Role assignments of users on projects, domains and the system. */
export class Assignments {
  constructor(private readonly core: IdentityCore) {}

  private checkTargets(scope: AssignmentScope, userId: string, roleId: string): void {
    const v = this.core.view;
    if (scope.type === 'project' && !v.projects.has(scope.id)) throw notFound('project', scope.id);
    if (scope.type === 'domain' && !v.domains.has(scope.id)) throw notFound('domain', scope.id);
    if (!v.users.has(userId)) throw notFound('user', userId);
    if (!v.roles.has(roleId)) throw notFound('role', roleId);
  }

  /** Grant a role (idempotent). */
  async grant(caller: AuthContext, scope: AssignmentScope, userId: string, roleId: string): Promise<void> {
    requireAdmin(caller, 'identity:create_grant');
    this.checkTargets(scope, userId, roleId);
    await grantRole(this.core, { scope, userId, roleId });
  }

  async revoke(caller: AuthContext, scope: AssignmentScope, userId: string, roleId: string): Promise<void> {
    requireAdmin(caller, 'identity:revoke_grant');
    this.checkTargets(scope, userId, roleId);
    const name = assignmentName({ scope, userId, roleId });
    if (!this.core.view.assignments.has(name))
      throw notFound('role assignment', `${roleId} for user ${userId}`);
    await commitAndSync(this.core, [deleteOp('RoleAssignment', name)]);
  }

  /** Whether the role is granted directly; 404 when not. */
  check(caller: AuthContext, scope: AssignmentScope, userId: string, roleId: string): void {
    requireAdminOrSelf(caller, userId, 'identity:check_grant');
    this.checkTargets(scope, userId, roleId);
    if (!this.core.view.assignments.has(assignmentName({ scope, userId, roleId }))) {
      throw notFound('role assignment', `${roleId} for user ${userId}`);
    }
  }

  /** Roles granted directly to a user on a scope. */
  rolesOn(caller: AuthContext, scope: AssignmentScope, userId: string): Rec<RoleSpec>[] {
    requireAdminOrSelf(caller, userId, 'identity:list_grants');
    const v = this.core.view;
    if (scope.type === 'project' && !v.projects.has(scope.id)) throw notFound('project', scope.id);
    if (scope.type === 'domain' && !v.domains.has(scope.id)) throw notFound('domain', scope.id);
    if (!v.users.has(userId)) throw notFound('user', userId);
    const ids = v
      .assignmentsOf(userId)
      .filter((a) => sameScope(a.spec.scope, scope))
      .map((a) => a.spec.roleId);
    return rolesOf(v, ids);
  }

  /**
   * `GET /v3/role_assignments`. Admins see everything; others may list their own assignments
   * or those on the project their token is scoped to.
   */
  query(caller: AuthContext, q: AssignmentQuery): AssignmentEntry[] {
    const own = q.userId !== undefined && q.userId === caller.userId;
    const ownProject = q.scope?.type === 'project' && q.scope.id === caller.projectId;
    if (!caller.isAdmin && !own && !ownProject) throw forbidden('identity:list_role_assignments');
    const v = this.core.view;
    const base = q.userId !== undefined ? v.assignmentsOf(q.userId) : [...v.assignments.values()];
    const out: AssignmentEntry[] = [];
    const seen = new Set<string>();
    const add = (e: AssignmentEntry) => {
      const key = assignmentName(e);
      if (seen.has(key)) return;
      seen.add(key);
      out.push(e);
    };
    for (const a of base) {
      if (q.scope && !sameScope(a.spec.scope, q.scope)) continue;
      const spec: RoleAssignmentSpec = a.spec;
      if (q.effective) {
        for (const roleId of expandImplied(v, [spec.roleId])) {
          add({
            userId: spec.userId,
            scope: spec.scope,
            roleId,
            ...(roleId === spec.roleId ? {} : { priorRoleId: spec.roleId }),
          });
        }
      } else add({ userId: spec.userId, scope: spec.scope, roleId: spec.roleId });
    }
    return q.roleId === undefined ? out : out.filter((e) => e.roleId === q.roleId);
  }
}

/** Write a role assignment unless it exists (used by bootstrap and the service-role helper too). */
export async function grantRole(core: IdentityCore, spec: RoleAssignmentSpec): Promise<void> {
  const name = assignmentName(spec);
  if (core.view.assignments.has(name)) return;
  try {
    await commitAndSync(core, [{ op: 'create', object: newIdentityObject('RoleAssignment', name, spec) }]);
  } catch (err) {
    // Granted concurrently: the outcome is what was asked.
    if (!core.view.assignments.has(name)) throw err;
  }
}
