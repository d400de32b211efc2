import { z } from 'zod';
import { typeKey, type ApiObject } from '../domain/index.ts';

/**
 * The identity module's stored kinds. All are global (namespace ''); the object name is the
 * Keystone id (or a deterministic key for assignments, claims and revocations). Specs are
 * parsed with zod when read back from the store.
 */

/** apiVersion of every identity object. */
export const IDENTITY_API_VERSION = 'identity.magnetar.io/v1';

/** Kinds stored by the identity module. */
export type IdentityKind =
  | 'Domain'
  | 'Project'
  | 'User'
  | 'Role'
  | 'RoleAssignment'
  | 'ApplicationCredential'
  | 'TokenRevocation'
  | 'SigningKey'
  | 'NameClaim';

/** Store type key of an identity kind. */
export function identityType(kind: IdentityKind): string {
  return typeKey(IDENTITY_API_VERSION, kind);
}

/** Kinds the in-memory view follows (claims are only a uniqueness guard). */
export const VIEWED_KINDS: readonly IdentityKind[] = [
  'Domain',
  'Project',
  'User',
  'Role',
  'RoleAssignment',
  'ApplicationCredential',
  'TokenRevocation',
  'SigningKey',
];

const extra = z.record(z.string(), z.unknown()).default({});

export const DomainSpecSchema = z.object({
  name: z.string(),
  description: z.string().default(''),
  enabled: z.boolean().default(true),
});
export type DomainSpec = z.infer<typeof DomainSpecSchema>;

export const ProjectSpecSchema = z.object({
  name: z.string(),
  domainId: z.string(),
  description: z.string().default(''),
  enabled: z.boolean().default(true),
  tags: z.array(z.string()).default([]),
  extra,
});
export type ProjectSpec = z.infer<typeof ProjectSpecSchema>;

export const UserSpecSchema = z.object({
  name: z.string(),
  domainId: z.string(),
  enabled: z.boolean().default(true),
  /** scrypt hash (see secrets.ts); absent when the user cannot log in with a password. */
  passwordHash: z.string().optional(),
  defaultProjectId: z.string().optional(),
  email: z.string().optional(),
  description: z.string().optional(),
  /** Operator policy: only service accounts create clusters. */
  serviceAccount: z.boolean().default(false),
  /** Tokens issued before this time (ms) are void: set on password change. */
  tokensValidAfterMs: z.number().optional(),
  /** Keystone's free-form extra attributes, echoed back as they were sent. */
  extra,
});
export type UserSpec = z.infer<typeof UserSpecSchema>;

export const RoleSpecSchema = z.object({
  name: z.string(),
  description: z.string().default(''),
  /** Ids of the roles this role implies (admin implies member, member implies reader). */
  implies: z.array(z.string()).default([]),
});
export type RoleSpec = z.infer<typeof RoleSpecSchema>;

/** Where a role is granted. */
export const AssignmentScopeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('project'), id: z.string() }),
  z.object({ type: z.literal('domain'), id: z.string() }),
  z.object({ type: z.literal('system') }),
]);
export type AssignmentScope = z.infer<typeof AssignmentScopeSchema>;

export const RoleAssignmentSpecSchema = z.object({
  userId: z.string(),
  roleId: z.string(),
  scope: AssignmentScopeSchema,
});
export type RoleAssignmentSpec = z.infer<typeof RoleAssignmentSpecSchema>;

export const ApplicationCredentialSpecSchema = z.object({
  name: z.string(),
  userId: z.string(),
  projectId: z.string(),
  secretHash: z.string(),
  description: z.string().nullable().default(null),
  /** Expiry in ms since the epoch; null for never. */
  expiresAtMs: z.number().nullable().default(null),
  roleIds: z.array(z.string()),
  unrestricted: z.boolean().default(false),
});
export type ApplicationCredentialSpec = z.infer<typeof ApplicationCredentialSpecSchema>;

export const TokenRevocationSpecSchema = z.object({
  /** Audit id of the revoked token. */
  auditId: z.string(),
  /** When the revoked token would have expired anyway (the revocation can be purged then). */
  expiresAtMs: z.number(),
});
export type TokenRevocationSpec = z.infer<typeof TokenRevocationSpecSchema>;

export const SigningKeySpecSchema = z.object({
  keys: z.array(z.object({ id: z.string(), secret: z.string(), createdAt: z.string() })).min(1),
});
export type SigningKeySpec = z.infer<typeof SigningKeySpecSchema>;

export const NameClaimSpecSchema = z.object({ ownerId: z.string() });

/** Stored identity object with a typed spec. */
export type IdentityObject<S> = ApiObject<S, Record<string, unknown>>;

/** Name of the single signing-key object. */
export const SIGNING_KEY_NAME = 'token-signing';

/** Store name of a role assignment: deterministic, so PUT is idempotent. */
export function assignmentName(spec: RoleAssignmentSpec): string {
  const where = spec.scope.type === 'system' ? 'system.all' : `${spec.scope.type}.${spec.scope.id}`;
  return `${where}.${spec.userId}.${spec.roleId}`;
}

/** Store name of a uniqueness claim on a name within a domain (or globally for domains and roles). */
export function claimName(
  kind: 'user' | 'project' | 'domain' | 'role' | 'application-credential',
  scope: string,
  name: string,
): string {
  return `${kind}.${scope}.${Buffer.from(name, 'utf8').toString('base64url')}`;
}
