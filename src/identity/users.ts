import { AuthenticationError, ConflictError, InputError, type AuthContext } from '../domain/index.ts';
import {
  claimOp,
  commitAndSync,
  deleteOp,
  getStored,
  newIdentityObject,
  releaseOp,
  type IdentityCore,
} from './core.ts';
import { UserSpecSchema, type ProjectSpec, type UserSpec } from './kinds.ts';
import { forbidden, notFound, requireAdmin, requireAdminOrSelf } from './policy.ts';
import { hashSecret, newId, verifySecret } from './secrets.ts';
import type { Rec } from './view.ts';
import type { WriteOp } from '../store/index.ts';

/** Fields of a user create or update; absent means "unchanged" (update) or the default (create). */
export interface UserInput {
  name?: string;
  domainId?: string;
  enabled?: boolean;
  /** null removes the password. */
  password?: string | null;
  /** null clears it. */
  defaultProjectId?: string | null;
  email?: string | null;
  description?: string | null;
  serviceAccount?: boolean;
  /** Keystone extra attributes, merged into the stored ones (null values kept, as Keystone does). */
  extra?: Record<string, unknown>;
}

/** List filters of `GET /v3/users`. */
export interface UserFilter {
  name?: string;
  domainId?: string;
  enabled?: boolean;
}

function duplicate(name: string, domainId: string): ConflictError {
  return new ConflictError(
    `Conflict occurred attempting to store user - Duplicate entry found with name ${name} at domain ID ${domainId}.`,
    {
      code: 'Duplicate',
    },
  );
}

/** Users: Keystone's `/v3/users`. */
export class Users {
  constructor(private readonly core: IdentityCore) {}

  list(caller: AuthContext, filter: UserFilter = {}): Rec<UserSpec>[] {
    requireAdmin(caller, 'identity:list_users');
    return [...this.core.view.users.values()].filter(
      (u) =>
        (filter.name === undefined || u.spec.name === filter.name) &&
        (filter.domainId === undefined || u.spec.domainId === filter.domainId) &&
        (filter.enabled === undefined || u.spec.enabled === filter.enabled),
    );
  }

  get(caller: AuthContext, id: string): Rec<UserSpec> {
    requireAdminOrSelf(caller, id, 'identity:get_user');
    const u = this.core.view.users.get(id);
    if (!u) throw notFound('user', id);
    return u;
  }

  private checkProject(id: string | null | undefined): void {
    if (id && !this.core.view.projects.has(id)) throw notFound('project', id);
  }

  async create(caller: AuthContext, input: UserInput): Promise<Rec<UserSpec>> {
    requireAdmin(caller, 'identity:create_user');
    if (!input.name) throw new InputError("Invalid input for field 'name': a non-empty name is required.");
    const domainId = input.domainId ?? caller.projectDomainId ?? 'default';
    if (!this.core.view.domains.has(domainId)) throw notFound('domain', domainId);
    this.checkProject(input.defaultProjectId);
    if (this.core.view.userByName(domainId, input.name)) throw duplicate(input.name, domainId);
    const id = newId();
    const spec: UserSpec = UserSpecSchema.parse({
      name: input.name,
      domainId,
      enabled: input.enabled ?? true,
      ...(input.password ? { passwordHash: await hashSecret(input.password, this.core.scryptCost) } : {}),
      ...(input.defaultProjectId ? { defaultProjectId: input.defaultProjectId } : {}),
      ...(input.email ? { email: input.email } : {}),
      ...(input.description ? { description: input.description } : {}),
      serviceAccount: input.serviceAccount ?? false,
      extra: input.extra ?? {},
    });
    await commitAndSync(
      this.core,
      [
        claimOp('user', domainId, input.name, id),
        { op: 'create', object: newIdentityObject('User', id, spec) },
      ],
      () => duplicate(input.name!, domainId),
    );
    return { id, spec };
  }

  async update(caller: AuthContext, id: string, input: UserInput): Promise<Rec<UserSpec>> {
    requireAdmin(caller, 'identity:update_user');
    const stored = await getStored(this.core, 'User', id);
    if (!stored) throw notFound('user', id);
    const prev = UserSpecSchema.parse(stored.spec);
    if (input.domainId !== undefined && input.domainId !== prev.domainId) {
      throw new InputError('Cannot change the domain of a user.', { code: 'DomainChange' });
    }
    if (
      prev.name === this.core.serviceUserName &&
      prev.domainId === 'default' &&
      (input.enabled === false || input.name !== undefined)
    ) {
      throw forbidden(
        'identity:update_user',
        `${prev.name} is Magnetar's internal service user; it cannot be renamed or disabled.`,
      );
    }
    this.checkProject(input.defaultProjectId);
    const next: UserSpec = { ...prev, extra: { ...prev.extra, ...(input.extra ?? {}) } };
    if (input.name !== undefined) {
      if (!input.name) throw new InputError("Invalid input for field 'name': a non-empty name is required.");
      next.name = input.name;
    }
    if (input.enabled !== undefined) next.enabled = input.enabled;
    if (input.serviceAccount !== undefined) next.serviceAccount = input.serviceAccount;
    setOptional(next, 'defaultProjectId', input.defaultProjectId);
    setOptional(next, 'email', input.email);
    setOptional(next, 'description', input.description);
    if (input.password !== undefined) {
      if (input.password === null) delete next.passwordHash;
      else next.passwordHash = await hashSecret(input.password, this.core.scryptCost);
      next.tokensValidAfterMs = this.core.clock.now();
    }
    const ops: WriteOp[] = [];
    if (next.name !== prev.name) {
      if (this.core.view.userByName(prev.domainId, next.name)) throw duplicate(next.name, prev.domainId);
      ops.push(releaseOp('user', prev.domainId, prev.name), claimOp('user', prev.domainId, next.name, id));
    }
    ops.push({ op: 'update', object: { ...stored, spec: next } });
    await commitAndSync(this.core, ops, () => duplicate(next.name, prev.domainId));
    return { id, spec: next };
  }

  async remove(caller: AuthContext, id: string): Promise<void> {
    requireAdmin(caller, 'identity:delete_user');
    const user = this.core.view.users.get(id);
    if (!user) throw notFound('user', id);
    if (user.spec.name === this.core.serviceUserName && user.spec.domainId === 'default') {
      throw forbidden(
        'identity:delete_user',
        `${user.spec.name} is Magnetar's internal service user; it cannot be deleted.`,
      );
    }
    if (caller.userId === id) throw forbidden('identity:delete_user', 'You cannot delete your own user.');
    const ops: WriteOp[] = [deleteOp('User', id), releaseOp('user', user.spec.domainId, user.spec.name)];
    for (const a of this.core.view.assignmentsOf(id)) ops.push(deleteOp('RoleAssignment', a.id));
    for (const c of this.core.view.appCreds.values()) {
      if (c.spec.userId === id)
        ops.push(
          deleteOp('ApplicationCredential', c.id),
          releaseOp('application-credential', id, c.spec.name),
        );
    }
    await commitAndSync(this.core, ops);
  }

  /** A user changes their own password (`POST /v3/users/{id}/password`); their older tokens stop working. */
  async changePassword(caller: AuthContext, id: string, original: string, password: string): Promise<void> {
    if (caller.userId !== id)
      throw forbidden('identity:change_password', 'Only the user can change their own password.');
    const user = this.core.view.users.get(id);
    if (!user) throw notFound('user', id);
    if (!(await verifySecret(original, user.spec.passwordHash, this.core.scryptCost))) {
      throw new AuthenticationError(
        'The request you have made requires authentication. The original password is incorrect.',
        {
          code: 'BadCredentials',
        },
      );
    }
    if (!password)
      throw new InputError("Invalid input for field 'password': a non-empty password is required.");
    const stored = await getStored(this.core, 'User', id);
    if (!stored) throw notFound('user', id);
    const next: UserSpec = {
      ...UserSpecSchema.parse(stored.spec),
      passwordHash: await hashSecret(password, this.core.scryptCost),
      tokensValidAfterMs: this.core.clock.now(),
    };
    await commitAndSync(this.core, [{ op: 'update', object: { ...stored, spec: next } }]);
  }

  /** Projects where the user has a role (`GET /v3/users/{id}/projects`). */
  projectsOf(caller: AuthContext, id: string): Rec<ProjectSpec>[] {
    requireAdminOrSelf(caller, id, 'identity:list_user_projects');
    if (!this.core.view.users.has(id)) throw notFound('user', id);
    return projectsWithRoles(this.core, id);
  }
}

/** Projects where a user has at least one role. */
export function projectsWithRoles(core: IdentityCore, userId: string): Rec<ProjectSpec>[] {
  const ids = new Set<string>();
  for (const a of core.view.assignmentsOf(userId))
    if (a.spec.scope.type === 'project') ids.add(a.spec.scope.id);
  return [...ids].flatMap((id) => {
    const p = core.view.projects.get(id);
    return p ? [p] : [];
  });
}

function setOptional<K extends 'defaultProjectId' | 'email' | 'description'>(
  spec: UserSpec,
  key: K,
  value: string | null | undefined,
): void {
  if (value === undefined) return;
  if (value === null || value === '') delete spec[key];
  else spec[key] = value;
}
