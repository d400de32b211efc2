import { ConflictError, InputError, type AuthContext } from '../domain/index.ts';
import type { WriteOp } from '../store/index.ts';
import {
  claimOp,
  commitAndSync,
  deleteOp,
  getStored,
  newIdentityObject,
  releaseOp,
  type IdentityCore,
} from './core.ts';
import { ProjectSpecSchema, type DomainSpec, type ProjectSpec } from './kinds.ts';
import { forbidden, notFound, requireAdmin } from './policy.ts';
import { directRoleIds } from './roles.ts';
import { newId } from './secrets.ts';
import type { Rec } from './view.ts';

/** Fields of a project create or update. */
export interface ProjectInput {
  name?: string;
  domainId?: string;
  description?: string | null;
  enabled?: boolean;
  tags?: string[];
  extra?: Record<string, unknown>;
}

/** List filters of `GET /v3/projects`. */
export interface ProjectFilter {
  name?: string;
  domainId?: string;
  enabled?: boolean;
}

function duplicate(name: string): ConflictError {
  return new ConflictError(
    `Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain: ${name}.`,
    { code: 'Duplicate' },
  );
}

/** Projects: Keystone's `/v3/projects` (flat: no nesting, no projects acting as domains). */
export class Projects {
  constructor(private readonly core: IdentityCore) {}

  list(caller: AuthContext, filter: ProjectFilter = {}): Rec<ProjectSpec>[] {
    requireAdmin(caller, 'identity:list_projects');
    return [...this.core.view.projects.values()].filter(
      (p) =>
        (filter.name === undefined || p.spec.name === filter.name) &&
        (filter.domainId === undefined || p.spec.domainId === filter.domainId) &&
        (filter.enabled === undefined || p.spec.enabled === filter.enabled),
    );
  }

  get(caller: AuthContext, id: string): Rec<ProjectSpec> {
    const p = this.core.view.projects.get(id);
    const member =
      p !== undefined && directRoleIds(this.core.view, caller.userId, { type: 'project', id }).size > 0;
    // Non-admins learn nothing about projects they are not in, not even whether they exist.
    if (!caller.isAdmin && !member) throw forbidden('identity:get_project');
    if (!p) throw notFound('project', id);
    return p;
  }

  domainOf(p: Rec<ProjectSpec>): Rec<DomainSpec> | undefined {
    return this.core.view.domains.get(p.spec.domainId);
  }

  async create(caller: AuthContext, input: ProjectInput): Promise<Rec<ProjectSpec>> {
    requireAdmin(caller, 'identity:create_project');
    if (!input.name) throw new InputError("Invalid input for field 'name': a non-empty name is required.");
    const domainId = input.domainId ?? caller.projectDomainId ?? 'default';
    if (!this.core.view.domains.has(domainId)) throw notFound('domain', domainId);
    if (this.core.view.projectByName(domainId, input.name)) throw duplicate(input.name);
    const id = newId();
    const spec = ProjectSpecSchema.parse({
      name: input.name,
      domainId,
      description: input.description ?? '',
      enabled: input.enabled ?? true,
      tags: input.tags ?? [],
      extra: input.extra ?? {},
    });
    await commitAndSync(
      this.core,
      [
        claimOp('project', domainId, input.name, id),
        { op: 'create', object: newIdentityObject('Project', id, spec) },
      ],
      () => duplicate(input.name!),
    );
    return { id, spec };
  }

  async update(caller: AuthContext, id: string, input: ProjectInput): Promise<Rec<ProjectSpec>> {
    requireAdmin(caller, 'identity:update_project');
    const stored = await getStored(this.core, 'Project', id);
    if (!stored) throw notFound('project', id);
    const prev = ProjectSpecSchema.parse(stored.spec);
    if (input.domainId !== undefined && input.domainId !== prev.domainId) {
      throw new InputError('Cannot change the domain of a project.', { code: 'DomainChange' });
    }
    const next: ProjectSpec = { ...prev, extra: { ...prev.extra, ...(input.extra ?? {}) } };
    if (input.name !== undefined) {
      if (!input.name) throw new InputError("Invalid input for field 'name': a non-empty name is required.");
      next.name = input.name;
    }
    if (input.description !== undefined) next.description = input.description ?? '';
    if (input.enabled !== undefined) next.enabled = input.enabled;
    if (input.tags !== undefined) next.tags = input.tags;
    const ops: WriteOp[] = [];
    if (next.name !== prev.name) {
      if (this.core.view.projectByName(prev.domainId, next.name)) throw duplicate(next.name);
      ops.push(
        releaseOp('project', prev.domainId, prev.name),
        claimOp('project', prev.domainId, next.name, id),
      );
    }
    ops.push({ op: 'update', object: { ...stored, spec: next } });
    await commitAndSync(this.core, ops, () => duplicate(next.name));
    return { id, spec: next };
  }

  /** Delete a project with its role assignments and application credentials; its tokens stop working. */
  async remove(caller: AuthContext, id: string): Promise<void> {
    requireAdmin(caller, 'identity:delete_project');
    const p = this.core.view.projects.get(id);
    if (!p) throw notFound('project', id);
    const ops: WriteOp[] = [deleteOp('Project', id), releaseOp('project', p.spec.domainId, p.spec.name)];
    for (const a of this.core.view.assignments.values()) {
      if (a.spec.scope.type === 'project' && a.spec.scope.id === id)
        ops.push(deleteOp('RoleAssignment', a.id));
    }
    for (const c of this.core.view.appCreds.values()) {
      if (c.spec.projectId === id)
        ops.push(
          deleteOp('ApplicationCredential', c.id),
          releaseOp('application-credential', c.spec.userId, c.spec.name),
        );
    }
    await commitAndSync(this.core, ops);
  }
}
