import {
  createCloudClients,
  CloudError,
  Session,
  type CloudClients,
  type EndpointInterface,
  type SessionOptions,
} from '../cloud/index.ts';
import type { Clock } from '../domain/index.ts';

/** Options of {@link createServiceClouds}. */
export interface ServiceCloudsOptions {
  /** Keystone v3 URL, e.g. `http://127.0.0.1:9511/identity/v3`. */
  authUrl: string;
  /**
   * A token of Magnetar's service user scoped to a project (identity grants the user a role
   * there first). Called per project; identity caches and renews it.
   */
  issueServiceToken: (projectId: string) => Promise<{ token: string }>;
  clock: Clock;
  /** Session options (timeouts, retries). */
  session?: SessionOptions;
  /** The catalog interface the controllers call the services on. @default public */
  interface?: EndpointInterface;
}

/** Cloud access of the controllers: clients per tenant project, as Magnetar's service user. */
export interface ServiceClouds {
  cloud(projectId: string): Promise<CloudClients>;
  /** Public key of a user's keypair (admin read with `user_id`, Nova 2.10+), or undefined. */
  userKeypair(projectId: string, userId: string, name: string): Promise<string | undefined>;
  close(): void;
}

/**
 * Sessions of Magnetar's service user, one per tenant project, rebuilt when identity hands out
 * a new token (tokens are renewed before they expire).
 */
export function createServiceClouds(options: ServiceCloudsOptions): ServiceClouds {
  const entries = new Map<string, { token: string; session: Session; clients: CloudClients }>();
  const sessionFor = async (projectId: string) => {
    const { token } = await options.issueServiceToken(projectId);
    const hit = entries.get(projectId);
    if (hit && hit.token === token) return hit;
    hit?.session.close();
    const session = new Session(
      {
        authType: 'v3token',
        auth: { auth_url: options.authUrl, token, project_id: projectId },
        ...(options.interface ? { interface: options.interface } : {}),
      },
      { clock: options.clock, ...options.session },
    );
    const entry = { token, session, clients: createCloudClients(session) };
    entries.set(projectId, entry);
    return entry;
  };
  return {
    async cloud(projectId) {
      return (await sessionFor(projectId)).clients;
    },
    async userKeypair(projectId, userId, name) {
      const { session } = await sessionFor(projectId);
      try {
        const res = await session.request<{ keypair?: { public_key?: string } }>(
          'compute',
          'GET',
          `/os-keypairs/${encodeURIComponent(name)}`,
          {
            query: { user_id: userId },
            headers: { 'OpenStack-API-Version': 'compute 2.10', 'X-OpenStack-Nova-API-Version': '2.10' },
          },
        );
        return res.body.keypair?.public_key;
      } catch (err) {
        if (err instanceof CloudError && err.kind === 'not-found') return undefined;
        throw err;
      }
    },
    close() {
      for (const e of entries.values()) e.session.close();
      entries.clear();
    },
  };
}
