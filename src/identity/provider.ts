import type { IdentityProvider } from '../domain/index.ts';
import type { ServiceRegistration } from './catalog.ts';

/** A token for Magnetar's own service user, scoped to one project. */
export interface ServiceToken {
  token: string;
  /** ISO time. */
  expiresAt: string;
  projectId: string;
}

/**
 * What the server wiring gets from identity in either mode: the façades' {@link IdentityProvider},
 * plus the catalog registration and the service user's tokens.
 */
export interface MagnetarIdentity extends IdentityProvider {
  /** `local`: Magnetar's own identity; `keystone`: an external Keystone. */
  readonly mode: 'local' | 'keystone';
  /** Public base URL of this server, e.g. `http://127.0.0.1:9511` (valid once it listens). */
  readonly baseUrl: string;
  /**
   * Add a service to the catalog. In `keystone` mode the catalog belongs to the external
   * Keystone; registrations are only recorded (see {@link KeystoneIdentity.registerService}).
   */
  registerService(reg: ServiceRegistration): void;
  /** A token of Magnetar's service user scoped to a project, for controllers acting there. */
  issueServiceToken(projectId: string): Promise<ServiceToken>;
  close(): Promise<void>;
}
