import { randomUUID } from 'node:crypto';
import { buildServer } from '../../src/api/index.ts';
import { embeddedCloud, type EmbeddedCloud } from '../../src/cloudsim/index.ts';
import {
  AuthenticationError,
  ManualClock,
  type AuthContext,
  type Clock,
  type IdentityProvider,
  type ProjectInfo,
} from '../../src/domain/index.ts';
import { SqliteStore, type ObjectStore } from '../../src/store/index.ts';
import type { FastifyInstance } from 'fastify';

/**
 * A test identity: fixed tokens for an admin, two users in two projects, a token without a project.
 * (The real identity is Magnetar's Keystone-compatible one; the embedded cloud only needs `validate`.)
 */
export class TestIdentity implements IdentityProvider {
  readonly adminProject = 'a0000000000000000000000000000001';
  readonly projectA = 'b0000000000000000000000000000002';
  readonly projectB = 'c0000000000000000000000000000003';
  private readonly tokens = new Map<string, AuthContext>();

  constructor() {
    this.add('admin-token', 'admin-user', 'admin', this.adminProject, 'admin', true);
    this.add('alice-token', 'alice-user', 'alice', this.projectA, 'demo', false);
    this.add('bob-token', 'bob-user', 'bob', this.projectB, 'other', false);
    this.add('alice2-token', 'alice-user', 'alice', this.projectB, 'other', false);
  }

  private add(
    token: string,
    userId: string,
    userName: string,
    projectId: string | undefined,
    projectName: string,
    admin: boolean,
  ): void {
    this.tokens.set(token, {
      token,
      userId,
      userName,
      userDomainId: 'default',
      ...(projectId ? { projectId, projectName, projectDomainId: 'default' } : {}),
      roles: admin ? ['admin', 'member', 'reader'] : ['member', 'reader'],
      isServiceAccount: false,
      isAdmin: admin,
      expiresAt: '2099-01-01T00:00:00Z',
      methods: ['password'],
    });
  }

  async validate(token: string): Promise<AuthContext> {
    const ctx = this.tokens.get(token);
    if (!ctx) throw new AuthenticationError('The request you have made requires authentication.');
    return ctx;
  }

  async getProject(id: string): Promise<ProjectInfo | undefined> {
    return (await this.listProjects()).find((p) => p.id === id);
  }

  async listProjects(): Promise<ProjectInfo[]> {
    return [
      { id: this.adminProject, name: 'admin', domainId: 'default', enabled: true },
      { id: this.projectA, name: 'demo', domainId: 'default', enabled: true },
      { id: this.projectB, name: 'other', domainId: 'default', enabled: true },
    ];
  }
}

/** A JSON answer. */
export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A running embedded cloud on an ephemeral port, with its own store and identity. */
export interface CloudHarness {
  url: string;
  app: FastifyInstance;
  cloud: EmbeddedCloud;
  store: ObjectStore;
  clock: ManualClock | Clock;
  identity: TestIdentity;
  /** Call the cloud: path under /cloud, token name (admin/alice/bob). */
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: {
      token?: string | null;
      body?: unknown;
      headers?: Record<string, string>;
      raw?: Buffer | string;
    },
  ): Promise<Answer<T>>;
  close(): Promise<void>;
}

/** Start the embedded cloud under `/cloud` on 127.0.0.1, seeded. */
export async function startCloud(
  options: { latencyMs?: number; clock?: ManualClock | Clock; store?: ObjectStore; storePath?: string } = {},
): Promise<CloudHarness> {
  const clock = options.clock ?? new ManualClock();
  const store = options.store ?? new SqliteStore({ path: options.storePath ?? ':memory:' });
  const identity = new TestIdentity();
  const cloud = embeddedCloud({ store, identity, clock, latencyMs: options.latencyMs ?? 0 });
  const app = await buildServer({
    config: { bodyLimitBytes: 1024 * 1024, logLevel: 'silent' },
    plugins: [{ name: 'cloud', prefix: '/cloud', plugin: cloud.plugin }],
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  await cloud.seed({ adminProjectId: identity.adminProject });
  return {
    url,
    app,
    cloud,
    store,
    clock,
    identity,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      const token = o.token === undefined ? 'alice' : o.token;
      if (token !== null) headers['x-auth-token'] = `${token}-token`;
      let body: string | Blob | undefined;
      if (o.raw !== undefined) body = typeof o.raw === 'string' ? o.raw : new Blob([new Uint8Array(o.raw)]);
      else if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${url}/cloud${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.text();
      let parsed: unknown = {};
      try {
        parsed = text === '' ? {} : JSON.parse(text);
      } catch {
        parsed = {};
      }
      return { status: res.status, headers: res.headers, body: parsed as never, text };
    },
    async close() {
      await cloud.close();
      await app.close();
      if (!options.store) await store.close();
    },
  };
}

/** A fresh UUID (for not-found checks). */
export const uuid = () => randomUUID();
