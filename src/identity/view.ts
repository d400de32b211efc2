import type { z } from 'zod';
import { ConflictError, type ApiObject, type Clock, type Logger } from '../domain/index.ts';
import type { ObjectStore, WatchEvent } from '../store/index.ts';
import {
  ApplicationCredentialSpecSchema,
  DomainSpecSchema,
  identityType,
  ProjectSpecSchema,
  RoleAssignmentSpecSchema,
  RoleSpecSchema,
  SigningKeySpecSchema,
  TokenRevocationSpecSchema,
  UserSpecSchema,
  VIEWED_KINDS,
  type ApplicationCredentialSpec,
  type DomainSpec,
  type IdentityKind,
  type ProjectSpec,
  type RoleAssignmentSpec,
  type RoleSpec,
  type UserSpec,
} from './kinds.ts';
import type { SigningKey } from './token-codec.ts';

/** A stored identity entity as the view holds it: its id (the object name) and parsed spec. */
export interface Rec<S> {
  id: string;
  spec: S;
}

const TYPES = VIEWED_KINDS.map(identityType);
const PAGE = 1000;

function nameKey(domainId: string, name: string): string {
  return `${domainId}\u0000${name}`;
}

/**
 * The identity state in memory, kept fresh from the store's revision feed. Token validation
 * reads only this; the store is consulted when `onChange` fires (any process, for PostgreSQL)
 * and, as a safety net, at most once per `maxStalenessMs` with a single cheap revision read.
 */
export class IdentityView {
  readonly domains = new Map<string, Rec<DomainSpec>>();
  readonly projects = new Map<string, Rec<ProjectSpec>>();
  readonly users = new Map<string, Rec<UserSpec>>();
  readonly roles = new Map<string, Rec<RoleSpec>>();
  readonly assignments = new Map<string, Rec<RoleAssignmentSpec>>();
  readonly appCreds = new Map<string, Rec<ApplicationCredentialSpec>>();
  /** Revoked audit ids → when the revoked token expires. */
  readonly revoked = new Map<string, number>();
  readonly keys = new Map<string, SigningKey>();
  /** The key new tokens are signed with (the newest). */
  currentKey: SigningKey | undefined;
  /** Bumped on every change applied: anything derived from the view is stale once it moves. */
  generation = 0;

  private readonly usersByName = new Map<string, string>();
  private readonly projectsByName = new Map<string, string>();
  private readonly assignmentsByUser = new Map<string, Set<string>>();

  private revision = 0;
  private lastCheckedMs = Number.NEGATIVE_INFINITY;
  private dirty = false;
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly maxStalenessMs: number,
  ) {}

  /** Load everything and follow the store's changes. */
  async start(): Promise<void> {
    await this.reload();
    this.unsubscribe = this.store.onChange(() => {
      this.dirty = true;
      void this.sync().catch((err: unknown) => this.logger.warn({ err }, 'identity view refresh failed'));
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /**
   * Make sure the view is at most `maxStalenessMs` behind the store: checks the store's
   * revision when the last check is older. Refreshes started by `onChange` are not waited
   * for (a concurrent write elsewhere lands a moment later); this process's own identity
   * writes wait for the view before they answer. Cheap in the steady state.
   */
  fresh(): Promise<void> | undefined {
    if (this.clock.now() - this.lastCheckedMs <= this.maxStalenessMs) return undefined;
    return this.running ?? this.sync();
  }

  /** Apply every change committed so far. Concurrent callers share one refresh. */
  sync(): Promise<void> {
    if (this.running) {
      this.dirty = true;
      return this.running;
    }
    const run = (async () => {
      try {
        do {
          this.dirty = false;
          await this.catchUp();
        } while (this.dirty);
      } finally {
        this.running = undefined;
      }
    })();
    this.running = run;
    return run;
  }

  private async catchUp(): Promise<void> {
    const checkedAt = this.clock.now();
    const head = await this.store.currentRevision();
    if (head > this.revision) {
      try {
        for (;;) {
          const events = await this.store.changes(this.revision, { types: TYPES, limit: PAGE });
          for (const e of events) this.apply(e);
          if (events.length > 0) this.revision = Math.max(this.revision, events[events.length - 1]!.revision);
          if (events.length < PAGE) break;
        }
      } catch (err) {
        if (!(err instanceof ConflictError && err.code === 'Expired')) throw err;
        await this.reload();
      }
      this.revision = Math.max(this.revision, head);
    }
    this.lastCheckedMs = checkedAt;
  }

  private async reload(): Promise<void> {
    const head = await this.store.currentRevision();
    this.clear();
    for (const type of TYPES) {
      const { items } = await this.store.list(type);
      for (const obj of items) this.put(obj);
    }
    this.revision = head;
    // Changes committed while listing are applied on top; replaying them in order ends at the latest state.
    const events = await this.store.changes(head, { types: TYPES, limit: PAGE });
    for (const e of events) this.apply(e);
    if (events.length > 0) this.revision = events[events.length - 1]!.revision;
    this.lastCheckedMs = this.clock.now();
  }

  private clear(): void {
    this.generation++;
    for (const m of [this.domains, this.projects, this.users, this.roles, this.assignments, this.appCreds])
      m.clear();
    this.revoked.clear();
    this.keys.clear();
    this.currentKey = undefined;
    this.usersByName.clear();
    this.projectsByName.clear();
    this.assignmentsByUser.clear();
  }

  private apply(e: WatchEvent): void {
    this.generation++;
    if (e.type === 'DELETED') this.remove(e.object);
    else this.put(e.object);
  }

  private parse<S extends z.ZodType>(schema: S, obj: ApiObject): z.infer<S> | undefined {
    const r = schema.safeParse(obj.spec);
    if (r.success) return r.data;
    this.logger.warn(
      { kind: obj.kind, name: obj.metadata.name, issues: r.error.issues },
      'ignoring malformed identity object',
    );
    return undefined;
  }

  private put(obj: ApiObject): void {
    const id = obj.metadata.name;
    const kind = obj.kind as IdentityKind;
    switch (kind) {
      case 'Domain': {
        const spec = this.parse(DomainSpecSchema, obj);
        if (spec) this.domains.set(id, { id, spec });
        return;
      }
      case 'Project': {
        const spec = this.parse(ProjectSpecSchema, obj);
        if (!spec) return;
        this.removeProjectIndex(id);
        this.projects.set(id, { id, spec });
        this.projectsByName.set(nameKey(spec.domainId, spec.name), id);
        return;
      }
      case 'User': {
        const spec = this.parse(UserSpecSchema, obj);
        if (!spec) return;
        this.removeUserIndex(id);
        this.users.set(id, { id, spec });
        this.usersByName.set(nameKey(spec.domainId, spec.name), id);
        return;
      }
      case 'Role': {
        const spec = this.parse(RoleSpecSchema, obj);
        if (spec) this.roles.set(id, { id, spec });
        return;
      }
      case 'RoleAssignment': {
        const spec = this.parse(RoleAssignmentSpecSchema, obj);
        if (!spec) return;
        this.assignments.set(id, { id, spec });
        let set = this.assignmentsByUser.get(spec.userId);
        if (!set) this.assignmentsByUser.set(spec.userId, (set = new Set()));
        set.add(id);
        return;
      }
      case 'ApplicationCredential': {
        const spec = this.parse(ApplicationCredentialSpecSchema, obj);
        if (spec) this.appCreds.set(id, { id, spec });
        return;
      }
      case 'TokenRevocation': {
        const spec = this.parse(TokenRevocationSpecSchema, obj);
        if (spec) this.revoked.set(spec.auditId, spec.expiresAtMs);
        return;
      }
      case 'SigningKey': {
        const spec = this.parse(SigningKeySpecSchema, obj);
        if (!spec) return;
        this.keys.clear();
        for (const k of spec.keys) this.keys.set(k.id, { id: k.id, secret: Buffer.from(k.secret, 'base64') });
        const newest = spec.keys[spec.keys.length - 1]!;
        this.currentKey = this.keys.get(newest.id);
        return;
      }
      case 'NameClaim':
        return;
    }
  }

  private remove(obj: ApiObject): void {
    const id = obj.metadata.name;
    const kind = obj.kind as IdentityKind;
    switch (kind) {
      case 'Domain':
        this.domains.delete(id);
        return;
      case 'Project':
        this.removeProjectIndex(id);
        this.projects.delete(id);
        return;
      case 'User':
        this.removeUserIndex(id);
        this.users.delete(id);
        return;
      case 'Role':
        this.roles.delete(id);
        return;
      case 'RoleAssignment': {
        const a = this.assignments.get(id);
        if (a) this.assignmentsByUser.get(a.spec.userId)?.delete(id);
        this.assignments.delete(id);
        return;
      }
      case 'ApplicationCredential':
        this.appCreds.delete(id);
        return;
      case 'TokenRevocation': {
        const r = TokenRevocationSpecSchema.safeParse(obj.spec);
        if (r.success) this.revoked.delete(r.data.auditId);
        return;
      }
      case 'SigningKey':
        this.keys.clear();
        this.currentKey = undefined;
        return;
      case 'NameClaim':
        return;
    }
  }

  private removeUserIndex(id: string): void {
    const prev = this.users.get(id);
    if (prev) this.usersByName.delete(nameKey(prev.spec.domainId, prev.spec.name));
  }

  private removeProjectIndex(id: string): void {
    const prev = this.projects.get(id);
    if (prev) this.projectsByName.delete(nameKey(prev.spec.domainId, prev.spec.name));
  }

  userByName(domainId: string, name: string): Rec<UserSpec> | undefined {
    const id = this.usersByName.get(nameKey(domainId, name));
    return id === undefined ? undefined : this.users.get(id);
  }

  projectByName(domainId: string, name: string): Rec<ProjectSpec> | undefined {
    const id = this.projectsByName.get(nameKey(domainId, name));
    return id === undefined ? undefined : this.projects.get(id);
  }

  domainByName(name: string): Rec<DomainSpec> | undefined {
    for (const d of this.domains.values()) if (d.spec.name === name) return d;
    return undefined;
  }

  roleByName(name: string): Rec<RoleSpec> | undefined {
    for (const r of this.roles.values()) if (r.spec.name === name) return r;
    return undefined;
  }

  /** Every assignment of a user (all scopes). */
  assignmentsOf(userId: string): Rec<RoleAssignmentSpec>[] {
    const names = this.assignmentsByUser.get(userId);
    if (!names) return [];
    const out: Rec<RoleAssignmentSpec>[] = [];
    for (const n of names) {
      const a = this.assignments.get(n);
      if (a) out.push(a);
    }
    return out;
  }
}
