import { z } from 'zod';
import type { PatchOp } from './label-args.ts';

/**
 * A typed client of the Magnum v1 API, on top of the cloud library's authenticated session
 * (service type `container-infra`, every request with `OpenStack-API-Version: container-infra latest`).
 * Paths are relative to the catalog endpoint, which ends in `/v1`. Answers are checked with
 * zod; objects keep every key the server sent, because show commands print them.
 */

/** The part of the cloud library's `Session` this client uses. */
export interface MagnumSession {
  request<T>(
    serviceType: string,
    method: string,
    path: string,
    options?: {
      body?: unknown;
      query?: Record<string, string | number | boolean | undefined>;
      headers?: Record<string, string>;
      retry?: boolean;
      expect?: number[];
    },
  ): Promise<{ status: number; headers: Record<string, string>; body: T }>;
}

/** Service type of Magnum in the catalog. */
export const MAGNUM_SERVICE_TYPE = 'container-infra';
/** The microversion header the `openstack coe` client always sends. */
export const MAGNUM_VERSION_HEADERS = { 'OpenStack-API-Version': 'container-infra latest' } as const;

/** A Magnum object as the server returned it (snake_case keys). */
export type WireObject = Record<string, unknown>;

const Loose = z.looseObject({});
const TemplateWire = z.looseObject({ uuid: z.string(), name: z.string().nullish() });
const ClusterWire = z.looseObject({
  uuid: z.string(),
  name: z.string().nullish(),
  status: z.string().nullish(),
  status_reason: z.string().nullish(),
  cluster_template_id: z.string().nullish(),
  api_address: z.string().nullish(),
});
const NodeGroupWire = z.looseObject({
  uuid: z.string(),
  name: z.string().nullish(),
  status: z.string().nullish(),
  status_reason: z.string().nullish(),
});
const UuidWire = z.looseObject({ uuid: z.string() });
const CertificateWire = z.looseObject({ pem: z.string().nullish() });

export type TemplateObject = z.infer<typeof TemplateWire>;
export type ClusterObject = z.infer<typeof ClusterWire>;
export type NodeGroupObject = z.infer<typeof NodeGroupWire>;

/** Paging and sorting of list calls (`--limit --sort-key --sort-dir --marker`). */
export interface ListQuery {
  /** Return at most this many items, following `next` links. @default all (one request) */
  limit?: number;
  marker?: string;
  sortKey?: string;
  sortDir?: 'asc' | 'desc';
}

/** An answer that did not have the expected shape. */
export class UnexpectedAnswerError extends Error {
  override readonly name = 'UnexpectedAnswerError';
}

function check<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (${issue.path.join('.')}: ${issue.message})` : '';
    throw new UnexpectedAnswerError(`unexpected answer from the Magnum API for ${what}${where}`);
  }
  return r.data;
}

const seg = (s: string) => encodeURIComponent(s);

/** Magnum v1 API calls used by `coe`. */
export class MagnumClient {
  constructor(private readonly session: MagnumSession) {}

  private async call(
    method: string,
    path: string,
    options: { body?: unknown; query?: Record<string, string | number | boolean | undefined> } = {},
  ): Promise<unknown> {
    const res = await this.session.request<unknown>(MAGNUM_SERVICE_TYPE, method, path, {
      ...options,
      headers: { ...MAGNUM_VERSION_HEADERS },
      // Creating twice is worse than failing once: only reads and deletes may be retried.
      retry: method === 'GET' || method === 'DELETE',
    });
    return res.body;
  }

  /**
   * List `key` items at `path`. Without a limit: one request, `next` ignored (like the real
   * client). With a limit: the trailing-slash form `path/?limit=N`, following `next` until N items.
   */
  private async list<S extends z.ZodType>(
    path: string,
    key: string,
    item: S,
    query: ListQuery,
    extra: Record<string, string | undefined> = {},
    trailingSlash = true,
  ): Promise<z.infer<S>[]> {
    const page = z.looseObject({ [key]: z.array(item), next: z.string().nullish() });
    const read = (body: unknown, what: string): { items: z.infer<S>[]; next: string | undefined } => {
      const p = check(page, body, what) as Record<string, unknown>;
      return { items: p[key] as z.infer<S>[], next: typeof p.next === 'string' ? p.next : undefined };
    };
    const q: Record<string, string | number | undefined> = {
      limit: query.limit,
      marker: query.marker,
      sort_key: query.sortKey,
      sort_dir: query.sortDir,
      ...extra,
    };
    const hasQuery = Object.values(q).some((v) => v !== undefined);
    const first = read(
      await this.call('GET', hasQuery && trailingSlash ? `${path}/` : path, { query: q }),
      `GET ${path}`,
    );
    const items = [...first.items];
    if (query.limit === undefined) return items;
    let next = first.next;
    while (next && items.length < query.limit) {
      const link = parseNextLink(next);
      const more = read(await this.call('GET', link.path, { query: link.query }), `GET ${link.path}`);
      if (more.items.length === 0) break;
      items.push(...more.items);
      next = more.next;
    }
    return items.slice(0, query.limit);
  }

  /** A call to a Magnetar extension beside the Magnum API (e.g. `/clusters/{id}/backups`); returns the body. */
  extension(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
    return this.call(method, path, body === undefined ? {} : { body });
  }

  // --- cluster templates ---
  listTemplates(query: ListQuery = {}): Promise<TemplateObject[]> {
    return this.list('/clustertemplates', 'clustertemplates', TemplateWire, query);
  }
  async getTemplate(ident: string): Promise<TemplateObject> {
    return check(
      TemplateWire,
      await this.call('GET', `/clustertemplates/${seg(ident)}`),
      'a cluster template',
    );
  }
  async createTemplate(body: WireObject): Promise<TemplateObject> {
    return check(
      TemplateWire,
      await this.call('POST', '/clustertemplates', { body }),
      'a created cluster template',
    );
  }
  async updateTemplate(ident: string, patch: PatchOp[]): Promise<TemplateObject> {
    const path = `/clustertemplates/${seg(ident)}`;
    return check(
      TemplateWire,
      await this.call('PATCH', path, { body: patch }),
      'an updated cluster template',
    );
  }
  async deleteTemplate(ident: string): Promise<void> {
    await this.call('DELETE', `/clustertemplates/${seg(ident)}`);
  }

  // --- clusters ---
  listClusters(query: ListQuery = {}): Promise<ClusterObject[]> {
    return this.list('/clusters', 'clusters', ClusterWire, query);
  }
  async getCluster(ident: string): Promise<ClusterObject> {
    return check(ClusterWire, await this.call('GET', `/clusters/${seg(ident)}`), 'a cluster');
  }
  /** Returns the new cluster's uuid. */
  async createCluster(body: WireObject): Promise<string> {
    return check(UuidWire, await this.call('POST', '/clusters', { body }), 'a cluster create').uuid;
  }
  /** `rollback`: ask Magnum to roll back if the update fails (`?rollback=True`). */
  async updateCluster(ident: string, patch: PatchOp[], rollback = false): Promise<void> {
    const query = rollback ? { rollback: 'True' } : {};
    await this.call('PATCH', `/clusters/${seg(ident)}`, { body: patch, query });
  }
  async deleteCluster(ident: string): Promise<void> {
    await this.call('DELETE', `/clusters/${seg(ident)}`);
  }
  async resizeCluster(uuid: string, body: WireObject): Promise<void> {
    await this.call('POST', `/clusters/${seg(uuid)}/actions/resize`, { body });
  }
  async upgradeCluster(uuid: string, body: WireObject): Promise<void> {
    await this.call('POST', `/clusters/${seg(uuid)}/actions/upgrade`, { body });
  }

  // --- nodegroups ---
  listNodeGroups(cluster: string, query: ListQuery = {}, role?: string): Promise<NodeGroupObject[]> {
    const path = `/clusters/${seg(cluster)}/nodegroups`;
    return this.list(path, 'nodegroups', NodeGroupWire, query, { role });
  }
  async getNodeGroup(cluster: string, ng: string): Promise<NodeGroupObject> {
    const path = `/clusters/${seg(cluster)}/nodegroups/${seg(ng)}`;
    return check(NodeGroupWire, await this.call('GET', path), 'a nodegroup');
  }
  async createNodeGroup(cluster: string, body: WireObject): Promise<NodeGroupObject> {
    const path = `/clusters/${seg(cluster)}/nodegroups/`;
    return check(NodeGroupWire, await this.call('POST', path, { body }), 'a created nodegroup');
  }
  async updateNodeGroup(cluster: string, ng: string, patch: PatchOp[]): Promise<void> {
    await this.call('PATCH', `/clusters/${seg(cluster)}/nodegroups/${seg(ng)}`, { body: patch });
  }
  async deleteNodeGroup(cluster: string, ng: string): Promise<void> {
    await this.call('DELETE', `/clusters/${seg(cluster)}/nodegroups/${seg(ng)}`);
  }

  // --- certificates ---
  /** The cluster CA's PEM (null when the server sent none). */
  async getCa(clusterUuid: string): Promise<string | null> {
    return (
      check(CertificateWire, await this.call('GET', `/certificates/${seg(clusterUuid)}`), 'a certificate')
        .pem ?? null
    );
  }
  /** Sign a PEM CSR with the cluster CA; returns the certificate PEM (null when none was sent). */
  async signCsr(clusterUuid: string, csr: string): Promise<string | null> {
    const body = { cluster_uuid: clusterUuid, csr };
    return (
      check(CertificateWire, await this.call('POST', '/certificates', { body }), 'a signed certificate')
        .pem ?? null
    );
  }
  async rotateCa(clusterUuid: string): Promise<void> {
    await this.call('PATCH', `/certificates/${seg(clusterUuid)}`);
  }

  // --- services, stats, quotas ---
  async listServices(): Promise<WireObject[]> {
    const body = check(
      z.looseObject({ mservices: z.array(Loose) }),
      await this.call('GET', '/mservices'),
      'services',
    );
    return body.mservices;
  }
  async stats(projectId: string): Promise<WireObject> {
    return check(Loose, await this.call('GET', '/stats', { query: { project_id: projectId } }), 'stats');
  }
  listQuotas(query: ListQuery = {}, allTenants = false): Promise<WireObject[]> {
    return this.list(
      '/quotas',
      'quotas',
      Loose,
      query,
      { all_tenants: allTenants ? 'True' : undefined },
      false,
    );
  }
  async getQuota(projectId: string, resource: string): Promise<WireObject> {
    return check(Loose, await this.call('GET', `/quotas/${seg(projectId)}/${seg(resource)}`), 'a quota');
  }
  async createQuota(body: WireObject): Promise<WireObject> {
    return check(Loose, await this.call('POST', '/quotas', { body }), 'a created quota');
  }
  async updateQuota(projectId: string, resource: string, body: WireObject): Promise<WireObject> {
    const path = `/quotas/${seg(projectId)}/${seg(resource)}`;
    return check(Loose, await this.call('PATCH', path, { body }), 'an updated quota');
  }
  async deleteQuota(projectId: string, resource: string): Promise<void> {
    await this.call('DELETE', `/quotas/${seg(projectId)}/${seg(resource)}`);
  }
}

/**
 * Turn a Magnum `next` link (`http://host:9511/v1/clusters?limit=2&marker=…`) into a path
 * relative to the endpoint (`/clusters`) and its query, like the real client, which drops
 * the scheme, host and the `/v1` prefix.
 */
export function parseNextLink(next: string): { path: string; query: Record<string, string> } {
  const url = new URL(next, 'http://placeholder');
  let path = url.pathname;
  const v1 = path.indexOf('/v1/');
  if (v1 >= 0) path = path.slice(v1 + 3);
  return { path, query: Object.fromEntries(url.searchParams) };
}
