import { AuthenticationError, InputError, NotAllowedError } from '../domain/index.ts';
import type { IdentityCore } from './core.ts';
import type { DomainSpec, ProjectSpec, UserSpec } from './kinds.ts';
import { directRoleIds } from './roles.ts';
import { newAuditId } from './secrets.ts';
import type { TokenScope } from './token-codec.ts';
import { mintToken, resolveToken, type ResolvedToken } from './tokens.ts';
import type { IdentityView, Rec } from './view.ts';

/** A domain named by id or by name. */
export type DomainRef = { id: string } | { name: string };
/** A user named by id, or by name within a domain. */
export type UserRef = { id: string } | { name: string; domain: DomainRef };
/** A project named by id, or by name within a domain. */
export type ProjectRef = { id: string } | { name: string; domain: DomainRef };

/** How the caller proves who they are (one method per request). */
export type AuthMethod =
  | { method: 'password'; user: UserRef; password: string }
  | { method: 'application_credential'; id: string; secret: string }
  | { method: 'application_credential'; name: string; user: UserRef; secret: string }
  | { method: 'token'; token: string };

/** What the caller asks the token to be scoped to. `default`: the user's default project if any. */
export type ScopeRequest =
  | { type: 'default' }
  | { type: 'unscoped' }
  | { type: 'project'; project: ProjectRef }
  | { type: 'domain'; domain: DomainRef }
  | { type: 'system' };

/** A parsed `POST /v3/auth/tokens` request. */
export interface AuthRequest {
  identity: AuthMethod;
  scope: ScopeRequest;
}

const BAD_CREDENTIALS =
  'The request you have made requires authentication. The user name, password or secret is incorrect.';
const SCOPE_REFUSED =
  'The request you have made requires authentication. The scope asked for does not exist or the user has no role on it.';

function badCredentials(): AuthenticationError {
  return new AuthenticationError(BAD_CREDENTIALS, { code: 'BadCredentials' });
}

function findDomain(view: IdentityView, ref: DomainRef): Rec<DomainSpec> | undefined {
  return 'id' in ref ? view.domains.get(ref.id) : view.domainByName(ref.name);
}

function findUser(view: IdentityView, ref: UserRef): Rec<UserSpec> | undefined {
  if ('id' in ref) return view.users.get(ref.id);
  const domain = findDomain(view, ref.domain);
  return domain ? view.userByName(domain.id, ref.name) : undefined;
}

function findProject(view: IdentityView, ref: ProjectRef): Rec<ProjectSpec> | undefined {
  if ('id' in ref) return view.projects.get(ref.id);
  const domain = findDomain(view, ref.domain);
  return domain ? view.projectByName(domain.id, ref.name) : undefined;
}

function resolveScope(core: IdentityCore, user: Rec<UserSpec>, req: ScopeRequest): TokenScope {
  const view = core.view;
  switch (req.type) {
    case 'unscoped':
      return { type: 'unscoped' };
    case 'system':
      return { type: 'system' };
    case 'default': {
      const id = user.spec.defaultProjectId;
      const project = id === undefined ? undefined : view.projects.get(id);
      const usable =
        project?.spec.enabled && directRoleIds(view, user.id, { type: 'project', id: project.id }).size > 0;
      return usable ? { type: 'project', id: project.id } : { type: 'unscoped' };
    }
    case 'project': {
      const project = findProject(view, req.project);
      if (!project) throw new AuthenticationError(SCOPE_REFUSED, { code: 'BadScope' });
      return { type: 'project', id: project.id };
    }
    case 'domain': {
      const domain = findDomain(view, req.domain);
      if (!domain) throw new AuthenticationError(SCOPE_REFUSED, { code: 'BadScope' });
      return { type: 'domain', id: domain.id };
    }
  }
}

function issue(
  core: IdentityCore,
  user: Rec<UserSpec>,
  scope: TokenScope,
  fields: { methods: string[]; expiresAtMs: number; parentAuditId?: string; appCredId?: string },
): ResolvedToken {
  const now = core.clock.now();
  try {
    return mintToken(core, {
      userId: user.id,
      scope,
      methods: fields.methods,
      issuedAtMs: now,
      expiresAtMs: fields.expiresAtMs,
      auditIds: fields.parentAuditId ? [newAuditId(), fields.parentAuditId] : [newAuditId()],
      ...(fields.appCredId ? { appCredId: fields.appCredId } : {}),
    });
  } catch (err) {
    // The only way a fresh token fails to resolve is a scope without roles (or a disabled target).
    if (err instanceof AuthenticationError)
      throw new AuthenticationError(SCOPE_REFUSED, { code: 'BadScope', cause: err });
    throw err;
  }
}

function checkEnabled(user: Rec<UserSpec>, view: IdentityView): void {
  if (!user.spec.enabled || !view.domains.get(user.spec.domainId)?.spec.enabled) {
    throw new AuthenticationError(
      `The request you have made requires authentication. The account is disabled for user: ${user.id}.`,
      {
        code: 'UserDisabled',
      },
    );
  }
}

/** Authenticate and issue a token, as `POST /v3/auth/tokens`. */
export async function authenticate(core: IdentityCore, req: AuthRequest): Promise<ResolvedToken> {
  const view = core.view;
  const now = core.clock.now();
  const id = req.identity;
  switch (id.method) {
    case 'password': {
      const user = findUser(view, id.user);
      const ok = await core.secrets.verify(id.password, user?.spec.passwordHash);
      if (!user || !ok) throw badCredentials();
      checkEnabled(user, view);
      return issue(core, user, resolveScope(core, user, req.scope), {
        methods: ['password'],
        expiresAtMs: now + core.tokenTtlMs,
      });
    }
    case 'application_credential': {
      let cred;
      if ('id' in id) cred = view.appCreds.get(id.id);
      else {
        const owner = findUser(view, id.user);
        cred = owner
          ? [...view.appCreds.values()].find((c) => c.spec.userId === owner.id && c.spec.name === id.name)
          : undefined;
      }
      const ok = await core.secrets.verify(id.secret, cred?.spec.secretHash);
      if (!cred || !ok) throw badCredentials();
      if (cred.spec.expiresAtMs !== null && now >= cred.spec.expiresAtMs) {
        throw new AuthenticationError(
          'The request you have made requires authentication. The application credential has expired.',
          {
            code: 'AppCredExpired',
          },
        );
      }
      const user = view.users.get(cred.spec.userId);
      if (!user) throw badCredentials();
      checkEnabled(user, view);
      const s = req.scope;
      const sameProject =
        s.type === 'default' ||
        (s.type === 'project' && findProject(view, s.project)?.id === cred.spec.projectId);
      if (!sameProject) {
        throw new InputError(
          'Application credentials cannot request a scope: the token is scoped to their project.',
          {
            code: 'AppCredScope',
          },
        );
      }
      const ttlEnd = now + core.tokenTtlMs;
      return issue(
        core,
        user,
        { type: 'project', id: cred.spec.projectId },
        {
          methods: ['application_credential'],
          expiresAtMs: cred.spec.expiresAtMs === null ? ttlEnd : Math.min(ttlEnd, cred.spec.expiresAtMs),
          appCredId: cred.id,
        },
      );
    }
    case 'token': {
      const parent = resolveToken(core, id.token);
      if (parent.appCred) {
        throw new NotAllowedError('A token obtained with an application credential cannot be rescoped.', {
          code: 'RescopeAppCred',
        });
      }
      const methods = ['token', ...parent.payload.methods.filter((m) => m !== 'token')];
      return issue(core, parent.user, resolveScope(core, parent.user, req.scope), {
        methods,
        expiresAtMs: parent.payload.expiresAtMs,
        parentAuditId: parent.payload.auditIds[0]!,
      });
    }
  }
}
