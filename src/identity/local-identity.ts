import {
  ConflictError,
  silentLogger,
  systemClock,
  type AuthContext,
  type Clock,
  type Logger,
  type ProjectInfo,
} from '../domain/index.ts';
import type { ObjectStore } from '../store/index.ts';
import { AppCredentials } from './app-credentials.ts';
import { Assignments, grantRole } from './assignments.ts';
import { authenticate, type AuthRequest } from './authenticate.ts';
import { BOOTSTRAP, bootstrapIdentity, type BootstrapResult } from './bootstrap.ts';
import { ServiceCatalog, type ServiceRegistration } from './catalog.ts';
import { bootstrapBanner, writeClientFiles, type ClientFiles } from './client-files.ts';
import { commitAndSync, keystoneTime, newIdentityObject, type IdentityCore } from './core.ts';
import { Directory } from './directory.ts';
import { SIGNING_KEY_NAME, type ProjectSpec } from './kinds.ts';
import { notFound } from './policy.ts';
import { Projects } from './projects.ts';
import { DEFAULT_SCRYPT_COST, newAuditId, type ScryptCost } from './secrets.ts';
import { SecretVerifier } from './secret-verifier.ts';
import { newSigningKey } from './token-codec.ts';
import {
  authContextOf,
  mintToken,
  purgeExpiredRevocations,
  resolveToken,
  revokeToken,
  type ResolvedToken,
} from './tokens.ts';
import type { MagnetarIdentity, ServiceToken } from './provider.ts';
import { Users } from './users.ts';
import { IdentityView, type Rec } from './view.ts';

/** Options of {@link LocalIdentity.open}. */
export interface LocalIdentityOptions {
  store: ObjectStore;
  /** Public base URL of the server (known only once it listens), e.g. `() => 'http://127.0.0.1:9511'`. */
  baseUrl: () => string;
  /** @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** Region of every catalog endpoint. @default RegionOne */
  region?: string;
  /** Token lifetime. @default 3600 */
  tokenTtlSeconds?: number;
  /** Password hashing cost. @default DEFAULT_SCRYPT_COST (N=16384, r=8, p=1) */
  scryptCost?: ScryptCost;
  /** Longest time the in-memory view goes without checking the store's revision. @default 1000 */
  maxStalenessMs?: number;
}

/** Options of {@link LocalIdentity.writeClientFiles}. */
export interface WriteClientFilesOptions {
  dataDir: string;
  /** Base URL to put in the files. @default the identity's base URL */
  baseUrl?: string;
  /** Print the first-start passwords to stdout (only when this start created them). @default false */
  print?: boolean;
}

/** Most validated tokens remembered; the cache starts over when full. */
const VALIDATED_CACHE_SIZE = 10_000;

function projectInfo(p: Rec<ProjectSpec>): ProjectInfo {
  return { id: p.id, name: p.spec.name, domainId: p.spec.domainId, enabled: p.spec.enabled };
}

/**
 * Magnetar's own Keystone v3-compatible identity over the object store: users, projects,
 * roles, application credentials, signed tokens, and the service catalog. Token validation
 * works from an in-memory view of the identity state (see {@link IdentityView}).
 */
export class LocalIdentity implements MagnetarIdentity {
  readonly mode = 'local' as const;
  readonly users: Users;
  readonly projects: Projects;
  readonly assignments: Assignments;
  readonly appCredentials: AppCredentials;
  readonly directory: Directory;
  readonly catalog: ServiceCatalog;
  private readonly core: IdentityCore;
  private lastBootstrap: BootstrapResult = { firstStart: false, credentials: [] };
  /** Service tokens per project, with the view generation they were last found valid at. */
  private readonly serviceTokens = new Map<string, { token: string; expiresAtMs: number; validAt: number }>();
  /** Validated tokens, good while the view has not changed and the token has not expired. */
  private readonly validated = new Map<
    string,
    { ctx: AuthContext; generation: number; expiresAtMs: number }
  >();

  private constructor(core: IdentityCore) {
    this.core = core;
    this.catalog = core.catalog;
    this.users = new Users(core);
    this.projects = new Projects(core);
    this.assignments = new Assignments(core);
    this.appCredentials = new AppCredentials(core);
    this.directory = new Directory(core);
  }

  /** Load the identity state, make sure a signing key exists, and follow the store's changes. */
  static async open(options: LocalIdentityOptions): Promise<LocalIdentity> {
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? silentLogger;
    const view = new IdentityView(options.store, clock, logger, options.maxStalenessMs ?? 1000);
    const scryptCost = options.scryptCost ?? DEFAULT_SCRYPT_COST;
    const core: IdentityCore = {
      store: options.store,
      view,
      clock,
      logger,
      catalog: new ServiceCatalog(options.region ?? 'RegionOne'),
      baseUrl: options.baseUrl,
      tokenTtlMs: (options.tokenTtlSeconds ?? 3600) * 1000,
      scryptCost,
      secrets: new SecretVerifier(scryptCost, clock),
      serviceUserName: BOOTSTRAP.serviceUser,
    };
    await view.start();
    if (!view.currentKey) {
      const key = newSigningKey();
      const spec = { keys: [{ ...key, createdAt: new Date(clock.now()).toISOString() }] };
      try {
        await commitAndSync(core, [
          { op: 'create', object: newIdentityObject('SigningKey', SIGNING_KEY_NAME, spec) },
        ]);
      } catch (err) {
        // Another process created it first; theirs is the one.
        if (!(err instanceof ConflictError)) throw err;
      }
      if (!view.currentKey) throw new Error('identity: the token signing key could not be loaded');
    }
    await purgeExpiredRevocations(core);
    return new LocalIdentity(core);
  }

  /** Stop following the store. */
  async close(): Promise<void> {
    this.core.view.stop();
  }

  /** Public base URL of the server. */
  get baseUrl(): string {
    return this.core.baseUrl();
  }

  /** The identity endpoint clients authenticate against: `<base>/identity/v3`. */
  get authUrl(): string {
    return `${this.core.baseUrl()}/identity/v3`;
  }

  get region(): string {
    return this.core.catalog.region;
  }

  // --- IdentityProvider ---

  async validate(token: string): Promise<AuthContext> {
    const view = this.core.view;
    const pending = view.fresh();
    if (pending) await pending;
    const hit = this.validated.get(token);
    if (hit && hit.generation === view.generation && this.core.clock.now() < hit.expiresAtMs) {
      return { ...hit.ctx, roles: [...hit.ctx.roles], methods: [...hit.ctx.methods] };
    }
    const resolved = resolveToken(this.core, token);
    const ctx = authContextOf(resolved);
    if (this.validated.size >= VALIDATED_CACHE_SIZE) this.validated.clear();
    this.validated.set(token, {
      ctx,
      generation: view.generation,
      expiresAtMs: resolved.payload.expiresAtMs,
    });
    return { ...ctx, roles: [...ctx.roles], methods: [...ctx.methods] };
  }

  async getProject(id: string): Promise<ProjectInfo | undefined> {
    await this.core.view.fresh();
    const p = this.core.view.projects.get(id);
    return p ? projectInfo(p) : undefined;
  }

  /**
   * Catch up with every identity change committed so far. A process that only reads this
   * store (the embedded cloud's thread) sees other processes' writes up to `maxStalenessMs`
   * late; it calls this before refusing a token that may be younger than its view.
   */
  async refresh(): Promise<void> {
    await this.core.view.sync();
  }

  async listProjects(): Promise<ProjectInfo[]> {
    await this.core.view.fresh();
    return [...this.core.view.projects.values()].map(projectInfo);
  }

  // --- tokens ---

  /** Validate a token with everything Keystone shows about it. */
  async resolve(token: string): Promise<ResolvedToken> {
    await this.core.view.fresh();
    return resolveToken(this.core, token);
  }

  /** `POST /v3/auth/tokens`. */
  async authenticate(req: AuthRequest): Promise<ResolvedToken> {
    await this.core.view.fresh();
    return authenticate(this.core, req);
  }

  /** Revoke a token: it stops working at once, everywhere. */
  async revoke(token: ResolvedToken): Promise<void> {
    await purgeExpiredRevocations(this.core);
    await revokeToken(this.core, token);
  }

  /** Services in the catalog shown to a token (project-bound URLs only for a project scope). */
  catalogFor(token: ResolvedToken): ReturnType<ServiceCatalog['forScope']> {
    return this.core.catalog.forScope(token.project?.project.id);
  }

  /** Projects the token's user has a role on (`GET /v3/auth/projects`). */
  projectsOfUser(userId: string): Rec<ProjectSpec>[] {
    const ids = new Set<string>();
    for (const a of this.core.view.assignmentsOf(userId))
      if (a.spec.scope.type === 'project') ids.add(a.spec.scope.id);
    return [...ids].flatMap((id) => {
      const p = this.core.view.projects.get(id);
      return p?.spec.enabled ? [p] : [];
    });
  }

  /** Domains the user has a role on, or holds projects in (`GET /v3/auth/domains`). */
  domainsOfUser(userId: string): string[] {
    const ids = new Set<string>();
    for (const a of this.core.view.assignmentsOf(userId))
      if (a.spec.scope.type === 'domain') ids.add(a.spec.scope.id);
    return [...ids].filter((id) => this.core.view.domains.get(id)?.spec.enabled);
  }

  /** Whether the user holds a role on the system. */
  hasSystemRole(userId: string): boolean {
    return this.core.view.assignmentsOf(userId).some((a) => a.spec.scope.type === 'system');
  }

  // --- catalog ---

  /** Add a service to the catalog (other modules: Magnum API, embedded cloud, …). */
  registerService(reg: ServiceRegistration): void {
    this.core.catalog.register(reg);
  }

  // --- bootstrap and the service user ---

  /**
   * Create the initial state once per deployment (see {@link bootstrapIdentity}). Idempotent.
   * With `dataDir`, the new passwords are written to `clouds.yaml` at once (with the base URL
   * known so far), so they survive a start that fails before listening; call
   * {@link writeClientFiles} once listening to put the real URL in and print them.
   */
  async bootstrap(options: { dataDir?: string } = {}): Promise<BootstrapResult> {
    const result = await bootstrapIdentity(this.core);
    if (result.firstStart) {
      this.lastBootstrap = result;
      if (options.dataDir !== undefined) {
        writeClientFiles({
          dataDir: options.dataDir,
          authUrl: this.authUrl,
          region: this.core.catalog.region,
          credentials: result.credentials,
        });
      }
    }
    return result;
  }

  /**
   * Write `clouds.yaml` and the openrc files for the bootstrap users into `dataDir` (mode 0600),
   * with the passwords created by this process's {@link bootstrap} or, on later starts, the
   * ones already in the file. Prints the passwords once when asked and they are new.
   */
  writeClientFiles(options: WriteClientFilesOptions): ClientFiles {
    const authUrl = `${options.baseUrl ?? this.core.baseUrl()}/identity/v3`;
    const files = writeClientFiles({
      dataDir: options.dataDir,
      authUrl,
      region: this.core.catalog.region,
      credentials: this.lastBootstrap.credentials,
    });
    if (options.print && this.lastBootstrap.credentials.length > 0) {
      process.stdout.write(bootstrapBanner(this.lastBootstrap.credentials, files, authUrl));
    }
    // The passwords are written; nothing in memory needs them any more.
    this.lastBootstrap = { firstStart: this.lastBootstrap.firstStart, credentials: [] };
    return files;
  }

  private serviceUserId(): string {
    const u = this.core.view.userByName(BOOTSTRAP.domainId, BOOTSTRAP.serviceUser);
    if (!u) throw notFound('user', BOOTSTRAP.serviceUser);
    return u.id;
  }

  /** Give Magnetar's service user `role` on a project (idempotent). @default role 'admin' */
  async ensureServiceRole(projectId: string, role: 'admin' | 'member' | 'reader' = 'admin'): Promise<void> {
    await this.core.view.fresh();
    if (!this.core.view.projects.has(projectId)) throw notFound('project', projectId);
    const r = this.core.view.roleByName(role);
    if (!r) throw notFound('role', role);
    await grantRole(this.core, {
      userId: this.serviceUserId(),
      roleId: r.id,
      scope: { type: 'project', id: projectId },
    });
  }

  /**
   * A token for Magnetar's own service user scoped to `projectId` (granting it the admin role
   * there first), so controllers can act in a tenant's project. Reused while it has more than
   * half its lifetime left.
   */
  async issueServiceToken(projectId: string): Promise<ServiceToken> {
    const now = this.core.clock.now();
    const cached = this.serviceTokens.get(projectId);
    if (cached && cached.expiresAtMs - now > this.core.tokenTtlMs / 2) {
      try {
        await this.core.view.fresh();
        // Checked again only once identity has changed (a revocation, a role removed): the
        // controllers ask for every reconcile that calls the cloud.
        if (cached.validAt !== this.core.view.generation) {
          resolveToken(this.core, cached.token);
          cached.validAt = this.core.view.generation;
        }
        return { token: cached.token, expiresAt: keystoneTime(cached.expiresAtMs), projectId };
      } catch {
        this.serviceTokens.delete(projectId);
      }
    }
    await this.ensureServiceRole(projectId);
    const minted = mintToken(this.core, {
      userId: this.serviceUserId(),
      scope: { type: 'project', id: projectId },
      // Minted in-process for the service user, which has no password.
      methods: ['service'],
      issuedAtMs: now,
      expiresAtMs: now + this.core.tokenTtlMs,
      auditIds: [newAuditId()],
    });
    this.serviceTokens.set(projectId, {
      token: minted.token,
      expiresAtMs: minted.payload.expiresAtMs,
      validAt: this.core.view.generation,
    });
    return { token: minted.token, expiresAt: keystoneTime(minted.payload.expiresAtMs), projectId };
  }
}
