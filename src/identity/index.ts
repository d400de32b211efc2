/**
 * Identity: a Keystone v3-compatible identity over the object store ({@link LocalIdentity}),
 * or validation against an external Keystone ({@link KeystoneIdentity}).
 */
export { LocalIdentity, type LocalIdentityOptions, type WriteClientFilesOptions } from './local-identity.ts';
export type { MagnetarIdentity, ServiceToken } from './provider.ts';
export {
  KeystoneIdentity,
  keystoneServiceAuth,
  type KeystoneIdentityOptions,
  type KeystoneServiceAuth,
} from './keystone-identity.ts';
export { publishToKeystone, type KeystoneCall, type PublishedService } from './keystone-catalog.ts';
export {
  ServiceCatalog,
  PROJECT_ID_TEMPLATE,
  INTERFACES,
  type ServiceRegistration,
  type CatalogService,
  type CatalogEndpoint,
  type EndpointInterface,
} from './catalog.ts';
export type {
  AuthRequest,
  AuthMethod,
  ScopeRequest,
  DomainRef,
  UserRef,
  ProjectRef,
} from './authenticate.ts';
export type { ResolvedToken } from './tokens.ts';
export type { BootstrapResult, BootstrapCredential } from './bootstrap.ts';
export { BOOTSTRAP } from './bootstrap.ts';
export { BOOTSTRAP_CLOUDS, type ClientFiles } from './client-files.ts';
export type { UserInput, UserFilter } from './users.ts';
export type { ProjectInput, ProjectFilter } from './projects.ts';
export type { AssignmentQuery, AssignmentEntry } from './assignments.ts';
export type { AppCredInput, CreatedAppCred, RoleRef } from './app-credentials.ts';
export type { RoleInference } from './directory.ts';
export type { Rec } from './view.ts';
export type {
  DomainSpec,
  ProjectSpec,
  UserSpec,
  RoleSpec,
  AssignmentScope,
  ApplicationCredentialSpec,
} from './kinds.ts';
export { IDENTITY_API_VERSION } from './kinds.ts';
export { keystoneTime } from './core.ts';
export { forbidden, notFound } from './policy.ts';
export { DEFAULT_SCRYPT_COST, type ScryptCost } from './secrets.ts';
