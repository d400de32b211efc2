import type {
  AuthContext,
  CloudLookup,
  FlavorInfo,
  ImageInfo,
  KeypairInfo,
  NetworkInfo,
  SubnetInfo,
} from '../domain/index.ts';
import { createCloudClients, type CloudClients } from './clients.ts';
import { isNotFound } from './cloud-error.ts';
import { CloudConfigError, type EndpointInterface } from './clouds-config.ts';
import { HttpTransport } from './http-transport.ts';
import { Session, type SessionOptions } from './session.ts';

/** Options of {@link createCloudLookup}: give `sessionFor`, or `authUrl`. */
export interface CloudLookupOptions {
  /**
   * The session that acts for a caller, e.g. `base.forToken(auth.token, auth.projectId)`,
   * so per-user resources (Nova keypairs) resolve as the caller sees them.
   */
  sessionFor?: (auth: AuthContext) => Session;
  /**
   * Keystone that issued the callers' tokens (used when `sessionFor` is absent): each caller's
   * token is exchanged there for one scoped to its project, with that project's catalog.
   */
  authUrl?: string | (() => string);
  /** Options of the sessions made for `authUrl`. */
  sessionOptions?: SessionOptions;
  /** The catalog interface those sessions call the services on. @default public */
  interface?: EndpointInterface;
  /** Callers (token + project) whose sessions are kept, so one request's look-ups share one token exchange. @default 256 */
  cacheSize?: number;
}

/** A {@link CloudLookup} that can release its connections. */
export interface ClosableCloudLookup extends CloudLookup {
  /** Close the connections opened for `authUrl` sessions. */
  close(): void;
}

/**
 * The {@link CloudLookup} the Magnum façade validates templates and clusters with, over the
 * typed clients (embedded cloud or a real one).
 */
export function createCloudLookup(options: CloudLookupOptions): ClosableCloudLookup {
  const cacheSize = options.cacheSize ?? 256;
  const cache = new Map<string, CloudClients>();
  let transport: HttpTransport | undefined;
  const sessionFor =
    options.sessionFor ??
    ((auth: AuthContext): Session => {
      const authUrl = typeof options.authUrl === 'function' ? options.authUrl() : options.authUrl;
      if (!authUrl) throw new CloudConfigError('createCloudLookup needs sessionFor or authUrl');
      transport ??= new HttpTransport();
      const scope: Record<string, string> = auth.projectId ? { project_id: auth.projectId } : {};
      return new Session(
        {
          authType: 'v3token',
          auth: { auth_url: authUrl, token: auth.token, ...scope },
          ...(options.interface ? { interface: options.interface } : {}),
        },
        { ...(options.sessionOptions ?? {}), transport },
      );
    });
  const clients = (auth: AuthContext): CloudClients => {
    const key = `${auth.token}\u0000${auth.projectId ?? ''}`;
    let c = cache.get(key);
    if (c) {
      cache.delete(key);
    } else {
      c = createCloudClients(sessionFor(auth));
      while (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, c);
    return c;
  };

  return {
    async findImage(auth, nameOrId) {
      const image = await clients(auth).image.findImage(nameOrId);
      if (image === undefined || image === 'ambiguous') return image;
      const info: ImageInfo = { id: image.id, name: image.name, properties: image.properties };
      if (image.osDistro !== undefined) info.osDistro = image.osDistro;
      if (image.osAdminUser !== undefined) info.osAdminUser = image.osAdminUser;
      return info;
    },
    async findFlavor(auth, nameOrId) {
      const f = await clients(auth).compute.findFlavor(nameOrId);
      if (f === undefined || f === 'ambiguous') return f;
      const info: FlavorInfo = { id: f.id, name: f.name, vcpus: f.vcpus, ramMb: f.ramMb, diskGb: f.diskGb };
      return info;
    },
    async findKeypair(auth, name) {
      try {
        const k = await clients(auth).compute.getKeypair(name);
        const info: KeypairInfo = { name: k.name, publicKey: k.publicKey };
        if (k.fingerprint !== undefined) info.fingerprint = k.fingerprint;
        return info;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async findNetwork(auth, nameOrId) {
      const n = await clients(auth).network.findNetwork(nameOrId);
      if (n === undefined || n === 'ambiguous') return n;
      const info: NetworkInfo = { id: n.id, name: n.name, external: n.external };
      return info;
    },
    async findSubnet(auth, nameOrId) {
      const s = await clients(auth).network.findSubnet(nameOrId);
      if (s === undefined || s === 'ambiguous') return s;
      const info: SubnetInfo = { id: s.id, name: s.name, networkId: s.networkId, cidr: s.cidr };
      return info;
    },
    close() {
      cache.clear();
      transport?.close();
    },
    async availabilityZones(auth) {
      const zones = await clients(auth).compute.listAvailabilityZones();
      return zones
        .filter((z) => z.available)
        .map((z) => z.name)
        .sort();
    },
  };
}
