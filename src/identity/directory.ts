import type { IdentityCore } from './core.ts';
import type { DomainSpec, ProjectSpec, RoleSpec, UserSpec } from './kinds.ts';
import { notFound } from './policy.ts';
import type { Rec } from './view.ts';

/** A role and the roles it implies directly. */
export interface RoleInference {
  prior: Rec<RoleSpec>;
  implies: Rec<RoleSpec>[];
}

/** Read-only lookups of domains and roles (readable by every authenticated caller). */
export class Directory {
  constructor(private readonly core: IdentityCore) {}

  /** Lookups by id without policy, for rendering names of things the caller may already see. */
  findDomain(id: string): Rec<DomainSpec> | undefined {
    return this.core.view.domains.get(id);
  }

  findProject(id: string): Rec<ProjectSpec> | undefined {
    return this.core.view.projects.get(id);
  }

  findUser(id: string): Rec<UserSpec> | undefined {
    return this.core.view.users.get(id);
  }

  findRole(id: string): Rec<RoleSpec> | undefined {
    return this.core.view.roles.get(id);
  }

  listDomains(filter: { name?: string; enabled?: boolean } = {}): Rec<DomainSpec>[] {
    return [...this.core.view.domains.values()].filter(
      (d) =>
        (filter.name === undefined || d.spec.name === filter.name) &&
        (filter.enabled === undefined || d.spec.enabled === filter.enabled),
    );
  }

  getDomain(id: string): Rec<DomainSpec> {
    const d = this.core.view.domains.get(id);
    if (!d) throw notFound('domain', id);
    return d;
  }

  listRoles(filter: { name?: string } = {}): Rec<RoleSpec>[] {
    return [...this.core.view.roles.values()].filter(
      (r) => filter.name === undefined || r.spec.name === filter.name,
    );
  }

  getRole(id: string): Rec<RoleSpec> {
    const r = this.core.view.roles.get(id);
    if (!r) throw notFound('role', id);
    return r;
  }

  /** Direct implications of one role. */
  inference(id: string): RoleInference {
    const prior = this.getRole(id);
    const implies = prior.spec.implies.flatMap((i) => {
      const r = this.core.view.roles.get(i);
      return r ? [r] : [];
    });
    return { prior, implies };
  }

  /** Every role that implies others. */
  inferences(): RoleInference[] {
    return this.listRoles()
      .filter((r) => r.spec.implies.length > 0)
      .map((r) => this.inference(r.id));
  }
}
