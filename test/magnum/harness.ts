import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import {
  MagnumTypes,
  type ApiObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../src/domain/index.ts';

/**
 * A running Magnetar for the Magnum API tests, with callers for the policy matrix:
 * `admin` (admin of project admin), `demo` (member, personal account), `sa` (member, service
 * account), `reader` (reader in demo), `otherSa` (service account of another project).
 */

interface CloudEntry {
  auth: { auth_url: string; username: string; password: string; project_name: string };
}

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body text (for malformed JSON). */
  raw?: string;
  /** Microversion header value; default `container-infra latest`; null to omit. */
  version?: string | null;
  headers?: Record<string, string>;
}

export type Who = 'admin' | 'demo' | 'sa' | 'reader' | 'otherSa';

export class Harness {
  readonly tokens = {} as Record<Who, string>;
  readonly projects = {} as Record<'admin' | 'demo' | 'other', string>;
  readonly users = {} as Record<Who, string>;

  private constructor(
    readonly m: Magnetar,
    private readonly dataDir: string,
  ) {}

  get url(): string {
    return this.m.url;
  }

  static async start(): Promise<Harness> {
    const dataDir = mkdtempSync(join(tmpdir(), 'magnetar-magnum-'));
    const m = await startMagnetar({ config: testConfig({ dataDir }), controllers: false, logger: false });
    const h = new Harness(m, dataDir);
    await h.setUp();
    return h;
  }

  private cloud(name: string): CloudEntry {
    const clouds = (
      parseYaml(readFileSync(join(this.dataDir, 'clouds.yaml'), 'utf8')) as {
        clouds: Record<string, CloudEntry>;
      }
    ).clouds;
    return clouds[name]!;
  }

  /** A project-scoped token by password. */
  async login(user: string, password: string, project: string): Promise<string> {
    const res = await fetch(`${this.url}/identity/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, password, domain: { name: 'Default' } } },
          },
          scope: { project: { name: project, domain: { name: 'Default' } } },
        },
      }),
    });
    if (res.status !== 201) throw new Error(`login ${user}: ${res.status} ${await res.text()}`);
    return res.headers.get('x-subject-token')!;
  }

  private async keystone(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.url}/identity/v3${path}`, {
      method,
      headers: { 'x-auth-token': this.tokens.admin, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  }

  private async addUser(
    who: Who,
    name: string,
    projectId: string,
    projectName: string,
    role: string,
    serviceAccount: boolean,
  ) {
    const password = `pw-${name}-secret`;
    const u = (await this.keystone('POST', '/users', {
      user: {
        name,
        password,
        domain_id: 'default',
        default_project_id: projectId,
        service_account: serviceAccount,
      },
    })) as { user: { id: string } };
    const roles = (await this.keystone('GET', `/roles?name=${role}`)) as { roles: { id: string }[] };
    await this.keystone('PUT', `/projects/${projectId}/users/${u.user.id}/roles/${roles.roles[0]!.id}`);
    this.users[who] = u.user.id;
    this.tokens[who] = await this.login(name, password, projectName);
  }

  private async setUp(): Promise<void> {
    for (const [who, cloud] of [
      ['admin', 'magnetar-admin'],
      ['demo', 'magnetar-demo'],
      ['sa', 'magnetar-demo-sa'],
    ] as const) {
      const c = this.cloud(cloud);
      this.tokens[who] = await this.login(c.auth.username, c.auth.password, c.auth.project_name);
    }
    const projects = (await this.keystone('GET', '/projects')) as {
      projects: { id: string; name: string }[];
    };
    this.projects.admin = projects.projects.find((p) => p.name === 'admin')!.id;
    this.projects.demo = projects.projects.find((p) => p.name === 'demo')!.id;
    const other = (await this.keystone('POST', '/projects', {
      project: { name: 'other', domain_id: 'default' },
    })) as { project: { id: string } };
    this.projects.other = other.project.id;
    await this.addUser('reader', 'demo-reader', this.projects.demo, 'demo', 'reader', false);
    await this.addUser('otherSa', 'other-sa', this.projects.other, 'other', 'member', true);
    const me = await fetch(`${this.url}/identity/v3/auth/tokens`, {
      headers: { 'x-auth-token': this.tokens.admin, 'x-subject-token': this.tokens.sa },
    });
    this.users.sa = ((await me.json()) as { token: { user: { id: string } } }).token.user.id;
    const me2 = await fetch(`${this.url}/identity/v3/auth/tokens`, {
      headers: { 'x-auth-token': this.tokens.admin, 'x-subject-token': this.tokens.demo },
    });
    this.users.demo = ((await me2.json()) as { token: { user: { id: string } } }).token.user.id;
    // Keypairs belong to users and cluster create checks them: every caller gets the ones the tests name.
    for (const who of ['admin', 'demo', 'sa', 'otherSa'] as const) {
      for (const name of ['my-keypair', 'k', 'kp']) await this.createKeypair(who, name);
    }
  }

  /** A keypair of `who` in the embedded cloud, as `openstack keypair create` makes it. */
  async createKeypair(who: Who, name: string): Promise<void> {
    const catalog = await fetch(`${this.url}/identity/v3/auth/catalog`, {
      headers: { 'x-auth-token': this.tokens[who] },
    });
    const compute = (
      (await catalog.json()) as {
        catalog: { type: string; endpoints: { interface: string; url: string }[] }[];
      }
    ).catalog
      .find((s) => s.type === 'compute')!
      .endpoints.find((e) => e.interface === 'public')!.url;
    const res = await fetch(`${compute}/os-keypairs`, {
      method: 'POST',
      headers: { 'x-auth-token': this.tokens[who], 'content-type': 'application/json' },
      body: JSON.stringify({ keypair: { name } }),
    });
    if (res.status !== 200 && res.status !== 201)
      throw new Error(`keypair ${name} of ${who}: ${res.status} ${await res.text()}`);
  }

  /** One HTTP call to Magnetar. */
  async call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { accept: 'application/json', ...(options.headers ?? {}) };
    const token = options.token === undefined ? this.tokens.sa : options.token;
    if (token !== null) headers['x-auth-token'] = token;
    const version = options.version === undefined ? 'container-infra latest' : options.version;
    if (version !== null) headers['openstack-api-version'] = version;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  /** `call` as a particular caller. */
  as(who: Who, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    return this.call(method, path, { ...options, token: this.tokens[who] });
  }

  /** The public templates seeded at start, by name. */
  async template(name: string): Promise<Record<string, unknown>> {
    const r = await this.call('GET', `/v1/clustertemplates/${name}`);
    if (r.status !== 200) throw new Error(`template ${name}: ${r.status} ${r.text}`);
    return r.body as Record<string, unknown>;
  }

  /** Create a cluster as the demo service account with the guide's arguments; returns its uuid. */
  async createCluster(name: string, extra: Record<string, unknown> = {}, who: Who = 'sa'): Promise<string> {
    const r = await this.as(who, 'POST', '/v1/clusters', {
      body: {
        name,
        cluster_template_id: 'k8s-v1.32',
        master_count: 3,
        node_count: 3,
        master_flavor_id: 'm1.medium',
        flavor_id: 'm1.medium',
        keypair: 'my-keypair',
        create_timeout: 60,
        discovery_url: null,
        ...extra,
      },
    });
    if (r.status !== 202) throw new Error(`create ${name}: ${r.status} ${r.text}`);
    return (r.body as { uuid: string }).uuid;
  }

  /**
   * Do what the magnum driver does when it finished the current generation of a cluster and its
   * node groups (test setup only: the driver is another module).
   */
  async driverFinishes(
    clusterUid: string,
    status: { apiAddress?: string; outcome?: 'Complete' | 'Failed'; reason?: string } = {},
  ): Promise<void> {
    const store = this.m.store;
    const c = (await store.getByUid(MagnumTypes.Cluster, clusterUid)) as unknown as MagnumClusterObject;
    await store.updateStatus({
      ...c,
      status: {
        ...c.status,
        observedGeneration: c.metadata.generation,
        observedAction: c.spec.action,
        outcome: status.outcome ?? 'Complete',
        ...(status.reason ? { reason: status.reason } : {}),
        apiAddress: status.apiAddress ?? c.status.apiAddress ?? 'https://192.0.2.10:6443',
      },
    } as unknown as ApiObject);
    const groups = await store.list(MagnumTypes.NodeGroup, { namespace: c.metadata.namespace });
    for (const raw of groups.items) {
      const g = raw as unknown as NodeGroupObject;
      if (g.spec.clusterId !== clusterUid) continue;
      await store.updateStatus({
        ...g,
        status: {
          ...g.status,
          observedGeneration: g.metadata.generation,
          observedAction: g.spec.action,
          outcome: status.outcome ?? 'Complete',
        },
      } as unknown as ApiObject);
    }
  }

  async close(): Promise<void> {
    await this.m.close();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The first Magnum error of a reply. */
export function magnumError(r: Reply): { status: number; title: string; detail: string; code: string } {
  const e = (r.body as { errors?: { status: number; title: string; detail: string; code: string }[] })
    ?.errors?.[0];
  if (!e) throw new Error(`not a Magnum error body: ${r.status} ${r.text}`);
  return e;
}
