import { z } from 'zod';
import {
  ConflictError,
  NotFoundError,
  type Clock,
  type KubeMeta,
  type KubeNode,
  type KubePod,
  type KubeSecret,
  type KubeVersionInfo,
} from '../../domain/index.ts';
import { errorFromResponse, KubeHttp, type KubeTls } from './kube-http.ts';

/**
 * A small client of a workload cluster's Kubernetes API: what the controllers need to find
 * nodes, drain and delete them, and hand out bootstrap tokens. Answers are checked with zod
 * (they come from outside), then used with the wire types of `domain/kube`.
 */

/** A served object whose name is known. */
export type Named<T extends { metadata: KubeMeta }> = T & { metadata: KubeMeta & { name: string } };

/** One change a node watch reports; a BOOKMARK only moves the resourceVersion on. */
export type NodeWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: Named<KubeNode> }
  | { type: 'BOOKMARK'; resourceVersion: string };

/** Options of {@link WorkloadClient}. */
export interface WorkloadClientOptions {
  /** `https://host:port` of the cluster's API. */
  server: string;
  tls: KubeTls;
  /** Time source for drain retries and token expirations. */
  clock: Clock;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
  /** Pause between drain passes while evictions are blocked. @default 5000 */
  drainRetryMs?: number;
}

/** Result of an eviction request. */
export type EvictionResult = 'evicted' | 'blocked-by-pdb' | 'gone';

/** Result of a drain. */
export interface DrainResult {
  /** True when no pod that needs evicting is left on the node. */
  done: boolean;
  /** `namespace/name` of the pods still on the node. */
  remaining: string[];
}

/** A Secret to create. */
export interface SecretInput {
  metadata: KubeMeta;
  type?: string;
  /** base64 values. */
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A bootstrap token to create (kubeadm's `bootstrap-token-<id>` Secret in kube-system). */
export interface BootstrapTokenInput {
  /** 6 characters [a-z0-9]. */
  id: string;
  /** 16 characters [a-z0-9]. */
  secret: string;
  ttlSeconds: number;
}

const ObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({ name: z.string() }),
});
const ListSchema = z.looseObject({ items: z.array(ObjectSchema) });
const WatchEventSchema = z.object({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  object: z.looseObject({}),
});
const VersionSchema = z.looseObject({ major: z.string(), minor: z.string(), gitVersion: z.string() });

function parseObject<T>(body: unknown, what: string): T {
  const r = ObjectSchema.safeParse(body);
  if (!r.success)
    throw new Error(
      `${what}: unexpected answer from the workload cluster: ${r.error.issues[0]?.message ?? 'invalid'}`,
    );
  return r.data as unknown as T;
}

function parseList<T>(body: unknown, what: string): T[] {
  const r = ListSchema.safeParse(body);
  if (!r.success)
    throw new Error(
      `${what}: unexpected answer from the workload cluster: ${r.error.issues[0]?.message ?? 'invalid'}`,
    );
  return r.data.items as unknown as T[];
}

const enc = encodeURIComponent;

/** True for pods a drain leaves alone: DaemonSet pods and static (mirror) pods. */
export function drainSkips(pod: KubePod): boolean {
  if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return true;
  return (pod.metadata.ownerReferences ?? []).some((o) => o.controller && o.kind === 'DaemonSet');
}

/** Client of one workload cluster's API. */
export class WorkloadClient {
  /** The API server URL. */
  readonly server: string;
  private readonly http: KubeHttp;
  private readonly clock: Clock;
  private readonly drainRetryMs: number;

  constructor(options: WorkloadClientOptions) {
    this.server = options.server;
    this.http = new KubeHttp({
      server: options.server,
      tls: options.tls,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
    this.clock = options.clock;
    this.drainRetryMs = options.drainRetryMs ?? 5_000;
  }

  /** Close its connections; the client is not used afterwards. */
  close(): void {
    this.http.close();
  }

  /** `/version`. */
  async version(): Promise<KubeVersionInfo> {
    const { body } = await this.http.send({ method: 'GET', path: '/version' });
    const r = VersionSchema.safeParse(body);
    if (!r.success) throw new Error(`${this.server}/version: unexpected answer`);
    return r.data as unknown as KubeVersionInfo;
  }

  async listNodes(): Promise<Named<KubeNode>[]> {
    return (await this.listNodesAt()).items;
  }

  /** The nodes, and the list's resourceVersion: where a {@link watchNodes} of them starts. */
  async listNodesAt(): Promise<{ items: Named<KubeNode>[]; resourceVersion: string }> {
    const { body } = await this.http.send({ method: 'GET', path: '/api/v1/nodes' });
    const items = parseList<Named<KubeNode>>(body, 'list nodes');
    const rv = (body as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    return { items, resourceVersion: typeof rv === 'string' ? rv : '' };
  }

  /**
   * Follow the nodes' changes after `resourceVersion`: `onEvent` gets each ADDED, MODIFIED and
   * DELETED node. Resolves when the server ends the watch (after `timeoutSeconds`); rejects
   * when the connection fails or `signal` aborts, and with the server's error when it refuses
   * the resourceVersion (410 Expired: list again).
   */
  watchNodes(
    resourceVersion: string,
    onEvent: (event: NodeWatchEvent) => void,
    options: { timeoutSeconds: number; signal?: AbortSignal },
  ): Promise<void> {
    return this.http.stream(
      {
        path: '/api/v1/nodes',
        query: {
          watch: 'true',
          resourceVersion,
          timeoutSeconds: String(Math.max(1, Math.round(options.timeoutSeconds))),
        },
      },
      (line) => {
        const e = WatchEventSchema.safeParse(line);
        if (!e.success) throw new Error('watch nodes: unexpected event from the workload cluster');
        if (e.data.type === 'ERROR')
          throw errorFromResponse(
            typeof e.data.object.code === 'number' ? e.data.object.code : 500,
            e.data.object,
            'watch nodes',
          );
        if (e.data.type === 'BOOKMARK') {
          const rv = (e.data.object as { metadata?: { resourceVersion?: unknown } }).metadata
            ?.resourceVersion;
          if (typeof rv === 'string') onEvent({ type: 'BOOKMARK', resourceVersion: rv });
          return;
        }
        onEvent({ type: e.data.type, object: parseObject<Named<KubeNode>>(e.data.object, 'watch nodes') });
      },
      options.signal,
    );
  }

  /** A node, or undefined when there is none of that name. */
  async getNode(name: string): Promise<Named<KubeNode> | undefined> {
    const res = await this.http.send({ method: 'GET', path: `/api/v1/nodes/${enc(name)}` }, [404]);
    return res.status === 404 ? undefined : parseObject(res.body, `get node ${name}`);
  }

  /** Mark the node unschedulable (`kubectl cordon`). */
  async cordon(name: string): Promise<void> {
    await this.patchNode(name, { spec: { unschedulable: true } });
  }

  /** Mark the node schedulable again (`kubectl uncordon`). */
  async uncordon(name: string): Promise<void> {
    await this.patchNode(name, { spec: { unschedulable: null } });
  }

  private async patchNode(name: string, patch: unknown): Promise<void> {
    await this.http.send({
      method: 'PATCH',
      path: `/api/v1/nodes/${enc(name)}`,
      body: patch,
      contentType: 'application/strategic-merge-patch+json',
    });
  }

  /** Pods, on one node and/or in one namespace. */
  async listPods(filter: { nodeName?: string; namespace?: string } = {}): Promise<Named<KubePod>[]> {
    const path = filter.namespace ? `/api/v1/namespaces/${enc(filter.namespace)}/pods` : '/api/v1/pods';
    const { body } = await this.http.send({
      method: 'GET',
      path,
      query: { fieldSelector: filter.nodeName ? `spec.nodeName=${filter.nodeName}` : undefined },
    });
    return parseList(body, 'list pods');
  }

  /** Ask the API to evict a pod; disruption budgets decide (429 → blocked). */
  async evict(namespace: string, pod: string): Promise<EvictionResult> {
    const res = await this.http.send(
      {
        method: 'POST',
        path: `/api/v1/namespaces/${enc(namespace)}/pods/${enc(pod)}/eviction`,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } },
      },
      [404, 429],
    );
    if (res.status === 404) return 'gone';
    if (res.status === 429) return 'blocked-by-pdb';
    return 'evicted';
  }

  /**
   * Cordon the node and evict every pod on it except DaemonSet and static pods, respecting
   * disruption budgets; blocked evictions are retried every `drainRetryMs` until `timeoutMs`
   * (0: a single pass, for callers that requeue themselves) or the signal aborts.
   */
  async drain(name: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<DrainResult> {
    const deadline = this.clock.now() + Math.max(0, options.timeoutMs);
    await this.cordon(name);
    for (;;) {
      const pods = (await this.listPods({ nodeName: name })).filter((p) => !drainSkips(p));
      for (const p of pods) {
        if (p.metadata.deletionTimestamp) continue;
        await this.evict(p.metadata.namespace ?? 'default', p.metadata.name);
      }
      const left = (await this.listPods({ nodeName: name })).filter((p) => !drainSkips(p));
      const remaining = left.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`);
      if (remaining.length === 0) return { done: true, remaining };
      const wait = Math.min(this.drainRetryMs, deadline - this.clock.now());
      if (options.signal?.aborted || wait <= 0) return { done: false, remaining };
      try {
        await this.clock.sleep(wait, options.signal);
      } catch {
        return { done: false, remaining };
      }
    }
  }

  /** Delete a node; a node that is already gone is fine. */
  async deleteNode(name: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `/api/v1/nodes/${enc(name)}` }, [404]);
  }

  /** A Secret, or undefined. */
  async getSecret(namespace: string, name: string): Promise<Named<KubeSecret> | undefined> {
    const res = await this.http.send(
      { method: 'GET', path: `/api/v1/namespaces/${enc(namespace)}/secrets/${enc(name)}` },
      [404],
    );
    return res.status === 404 ? undefined : parseObject(res.body, `get secret ${namespace}/${name}`);
  }

  /** Create a Secret; ConflictError(AlreadyExists) when it exists. */
  async createSecret(namespace: string, secret: SecretInput): Promise<Named<KubeSecret>> {
    const body = { ...secret, apiVersion: 'v1', kind: 'Secret', metadata: { ...secret.metadata, namespace } };
    const { body: out } = await this.http.send({
      method: 'POST',
      path: `/api/v1/namespaces/${enc(namespace)}/secrets`,
      body,
    });
    return parseObject(out, `create secret ${namespace}/${secret.metadata.name ?? ''}`);
  }

  /** Replace a Secret (its `metadata.resourceVersion` guards against lost updates). */
  async replaceSecret(namespace: string, secret: Named<KubeSecret>): Promise<Named<KubeSecret>> {
    const { body } = await this.http.send({
      method: 'PUT',
      path: `/api/v1/namespaces/${enc(namespace)}/secrets/${enc(secret.metadata.name)}`,
      body: secret,
    });
    return parseObject(body, `replace secret ${namespace}/${secret.metadata.name}`);
  }

  /**
   * Create (or, when it exists, renew) the bootstrap token `<id>.<secret>` in kube-system,
   * as kubeadm's bootstrap-token Secret, expiring `ttlSeconds` from now.
   */
  async createBootstrapToken(token: BootstrapTokenInput): Promise<void> {
    if (!/^[a-z0-9]{6}$/.test(token.id) || !/^[a-z0-9]{16}$/.test(token.secret)) {
      throw new Error('a bootstrap token is <6 [a-z0-9]>.<16 [a-z0-9]>');
    }
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
    const data = {
      'token-id': b64(token.id),
      'token-secret': b64(token.secret),
      expiration: b64(
        new Date(this.clock.now() + token.ttlSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      ),
      'usage-bootstrap-authentication': b64('true'),
      'usage-bootstrap-signing': b64('true'),
      'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
      description: b64('Cluster API bootstrap token (Magnetar)'),
    };
    const name = `bootstrap-token-${token.id}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.createSecret('kube-system', {
          metadata: { name, namespace: 'kube-system' },
          type: 'bootstrap.kubernetes.io/token',
          data,
        });
        return;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 3) throw err;
      }
      const current = await this.getSecret('kube-system', name);
      if (!current) continue;
      try {
        await this.replaceSecret('kube-system', { ...current, type: 'bootstrap.kubernetes.io/token', data });
        return;
      } catch (err) {
        if (!(err instanceof ConflictError || err instanceof NotFoundError) || attempt >= 3) throw err;
      }
    }
  }
}
