/**
 * Who is calling: the result of validating an identity token. Produced by the identity
 * module (local Keystone-compatible identity, or an external Keystone) and consumed by
 * every API façade for policy decisions.
 */
export interface AuthContext {
  /** The token itself (to act on the caller's behalf, e.g. against an external cloud). */
  token: string;
  userId: string;
  userName: string;
  userDomainId: string;
  /** Project scope; absent for unscoped or domain-scoped tokens. */
  projectId?: string;
  projectName?: string;
  projectDomainId?: string;
  /** Role names in the scope, implied roles expanded (admin ⊃ member ⊃ reader). */
  roles: string[];
  /** True for users flagged as service accounts (operator policy: only they create clusters). */
  isServiceAccount: boolean;
  /** Shortcut: `roles` contains `admin`. */
  isAdmin: boolean;
  /** ISO time the token expires. */
  expiresAt: string;
  /** How the token was obtained. */
  methods: string[];
}

/** A project as far as the façades need it. */
export interface ProjectInfo {
  id: string;
  name: string;
  domainId: string;
  enabled: boolean;
}

/** What the API façades need from identity. */
export interface IdentityProvider {
  /** Validate a token; AuthenticationError when missing, malformed, expired or revoked. */
  validate(token: string): Promise<AuthContext>;
  getProject(id: string): Promise<ProjectInfo | undefined>;
  listProjects(): Promise<ProjectInfo[]>;
}

/** True when the caller has `role` (implied roles already expanded by the validator). */
export function hasRole(ctx: AuthContext, role: string): boolean {
  return ctx.roles.includes(role);
}
