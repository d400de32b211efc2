import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';

/**
 * A Magnetar without controllers for the kube façade tests, with tokens of the operator
 * (`admin`, admin of project admin) and of the demo project's service account (`demo`,
 * member of project demo), and helpers to call `/k8s` over real HTTP.
 */

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

interface CloudEntry {
  auth: { username: string; password: string; project_name: string };
}

export const MACHINES = '/apis/cluster.x-k8s.io/v1beta2';

export class KubeHarness {
  readonly tokens = { admin: '', demo: '' };
  readonly projects = { admin: '', demo: '' };

  private constructor(
    readonly m: Magnetar,
    readonly dataDir: string,
  ) {}

  static async start(options: { controllers?: boolean } = {}): Promise<KubeHarness> {
    const dataDir = mkdtempSync(join(tmpdir(), 'magnetar-kube-'));
    const m = await startMagnetar({
      config: testConfig({ dataDir }),
      controllers: options.controllers ?? false,
      logger: false,
    });
    const h = new KubeHarness(m, dataDir);
    const clouds = (
      parseYaml(readFileSync(join(dataDir, 'clouds.yaml'), 'utf8')) as { clouds: Record<string, CloudEntry> }
    ).clouds;
    for (const [who, cloud] of [
      ['admin', 'magnetar-admin'],
      ['demo', 'magnetar-demo-sa'],
    ] as const) {
      const a = clouds[cloud]!.auth;
      const res = await fetch(`${m.url}/identity/v3/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: a.username, password: a.password, domain: { name: 'Default' } } },
            },
            scope: { project: { name: a.project_name, domain: { name: 'Default' } } },
          },
        }),
      });
      if (res.status !== 201) throw new Error(`login ${who}: ${res.status}`);
      h.tokens[who] = res.headers.get('x-subject-token')!;
      const body = (await res.json()) as { token: { project: { id: string } } };
      h.projects[who] = body.token.project.id;
    }
    return h;
  }

  /** Call `/k8s<path>` as `who` (null: no token). */
  async call(
    method: string,
    path: string,
    options: {
      who?: 'admin' | 'demo' | null;
      body?: unknown;
      raw?: string;
      contentType?: string;
      accept?: string;
    } = {},
  ): Promise<Reply> {
    const who = options.who === undefined ? 'demo' : options.who;
    const headers: Record<string, string> = {};
    if (who) headers.authorization = `Bearer ${this.tokens[who]}`;
    if (options.accept) headers.accept = options.accept;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const res = await fetch(`${this.m.url}/k8s${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = {};
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  /** Path of a namespaced collection of cluster.x-k8s.io/v1beta2 (default: the demo project). */
  ns(plural: string, namespace = this.projects.demo): string {
    return `${MACHINES}/namespaces/${namespace}/${plural}`;
  }

  async close(): Promise<void> {
    await this.m.close();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A Machine manifest of cluster `cluster`. */
export function machine(
  name: string,
  cluster = 'c1',
  extra: { labels?: Record<string, string>; finalizers?: string[] } = {},
) {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name,
      labels: { 'cluster.x-k8s.io/cluster-name': cluster, ...extra.labels },
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
    },
    spec: {
      clusterName: cluster,
      version: 'v1.31.4',
      bootstrap: { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name } },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name },
    },
  };
}

/** A MachineDeployment manifest. */
export function machineDeployment(name: string, replicas: number, cluster = 'c1') {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: { name, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
    spec: {
      clusterName: cluster,
      replicas,
      selector: { matchLabels: { pool: name } },
      template: {
        metadata: { labels: { pool: name } },
        spec: {
          clusterName: cluster,
          version: 'v1.31.4',
          bootstrap: {
            configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', name },
          },
          infrastructureRef: {
            apiGroup: 'infrastructure.cluster.x-k8s.io',
            kind: 'OpenStackMachineTemplate',
            name,
          },
        },
      },
    },
  };
}
