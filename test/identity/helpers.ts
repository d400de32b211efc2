import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/index.ts';
import { identityRoutes } from '../../src/api/identity/index.ts';
import { ManualClock } from '../../src/domain/index.ts';
import {
  LocalIdentity,
  type BootstrapCredential,
  type LocalIdentityOptions,
} from '../../src/identity/index.ts';
import { SqliteStore, type ObjectStore } from '../../src/store/index.ts';

/** scrypt cost for tests: the same code path, a fraction of the time. */
export const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };

/** A running identity server on an ephemeral port. */
export interface IdentityServer {
  url: string;
  v3: string;
  identity: LocalIdentity;
  store: ObjectStore;
  clock: ManualClock;
  app: FastifyInstance;
  creds: Record<'admin' | 'demo' | 'demo-sa', BootstrapCredential>;
  close(): Promise<void>;
}

/** Start the identity API over a fresh in-memory store (or the given one), bootstrapped. */
export async function startIdentityServer(
  options: { store?: ObjectStore; clock?: ManualClock; identity?: Partial<LocalIdentityOptions> } = {},
): Promise<IdentityServer> {
  const store = options.store ?? new SqliteStore({ path: ':memory:' });
  const clock = options.clock ?? new ManualClock();
  let base = 'http://127.0.0.1:0';
  const identity = await LocalIdentity.open({
    store,
    clock,
    baseUrl: () => base,
    scryptCost: FAST_SCRYPT,
    ...options.identity,
  });
  const boot = await identity.bootstrap();
  identity.registerService({
    type: 'identity',
    name: 'keystone',
    urlForProject: () => `${base}/identity/v3`,
  });
  const app = await buildServer({
    config: { bodyLimitBytes: 1024 * 1024, logLevel: 'silent' },
    plugins: [{ name: 'identity', prefix: '/identity', plugin: identityRoutes(identity) }],
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('no address');
  base = `http://127.0.0.1:${addr.port}`;
  const byName = (n: string) => {
    const c = boot.credentials.find((x) => x.username === n);
    if (!c) throw new Error(`bootstrap did not create ${n}`);
    return c;
  };
  const creds = boot.firstStart
    ? { admin: byName('admin'), demo: byName('demo'), 'demo-sa': byName('demo-sa') }
    : ({} as IdentityServer['creds']);
  return {
    url: base,
    v3: `${base}/identity/v3`,
    identity,
    store,
    clock,
    app,
    creds,
    async close() {
      await app.close();
      await identity.close();
      if (!options.store) await store.close();
    },
  };
}

/** A JSON response; `body` is cast to what the caller expects (the assertions check it). */
export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Keystone wire shapes, as far as the tests read them. */
export interface KRef {
  id: string;
  name: string;
}
export interface KEndpoint {
  id: string;
  interface: string;
  region: string;
  region_id: string;
  url: string;
  service_id?: string;
}
export interface KService {
  id: string;
  type: string;
  name: string;
  endpoints: KEndpoint[];
}
export interface KToken {
  methods: string[];
  user: KRef & { domain: KRef };
  project?: KRef & { domain: KRef };
  domain?: KRef;
  system?: { all: boolean };
  roles?: KRef[];
  catalog?: KService[];
  audit_ids: string[];
  expires_at: string;
  issued_at: string;
  application_credential?: { id: string; name: string; restricted: boolean };
}
export interface KUser extends KRef {
  domain_id: string;
  enabled: boolean;
  default_project_id?: string;
  service_account: boolean;
  [extra: string]: unknown;
}
export interface KProject extends KRef {
  domain_id: string;
  enabled: boolean;
  description: string;
  tags: string[];
  [extra: string]: unknown;
}
export interface KAppCred extends KRef {
  secret?: string;
  project_id: string;
  user_id: string;
  expires_at: string | null;
  unrestricted: boolean;
  roles: KRef[];
}
export interface KAssignment {
  role: { id: string; name?: string };
  user: { id: string; name?: string; domain?: KRef };
  scope: {
    project?: { id: string; name?: string; domain?: KRef };
    domain?: { id: string; name?: string };
    system?: { all: boolean };
  };
  links: { assignment: string };
}
export interface KError {
  error: { code: number; title: string; message: string };
}

/** Call the server: JSON in, JSON out. */
export async function call<T = unknown>(
  url: string,
  method: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.token) headers['x-auth-token'] = options.token;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** The password auth body keystoneauth sends. */
export function passwordAuth(
  user: { name: string; domain?: { name?: string; id?: string } } | { id: string },
  password: string,
  scope?: unknown,
): unknown {
  const u =
    'id' in user
      ? { id: user.id, password }
      : { name: user.name, domain: user.domain ?? { name: 'Default' }, password };
  return {
    auth: {
      identity: { methods: ['password'], password: { user: u } },
      ...(scope !== undefined ? { scope } : {}),
    },
  };
}

/** Project scope by name in the Default domain. */
export function projectScope(name: string): unknown {
  return { project: { name, domain: { name: 'Default' } } };
}

/** Log in with a password and a project scope; returns the token and the body. */
export async function login(
  s: IdentityServer,
  who: BootstrapCredential | { username: string; password: string; projectName?: string },
  scope: unknown = projectScope(who.projectName ?? 'demo'),
): Promise<{ token: string; body: { token: KToken } }> {
  const r = await call<{ token: KToken }>(`${s.v3}/auth/tokens`, 'POST', {
    body: passwordAuth({ name: who.username }, who.password, scope),
  });
  if (r.status !== 201) throw new Error(`login ${who.username}: ${r.status} ${r.text}`);
  return { token: r.headers.get('x-subject-token')!, body: r.body };
}

/** Assert a Keystone error body. */
export function isKeystoneError(r: Reply, status: number): boolean {
  const e = (r.body as Partial<KError> | undefined)?.error;
  return (
    r.status === status && typeof e?.message === 'string' && e.code === status && typeof e.title === 'string'
  );
}
