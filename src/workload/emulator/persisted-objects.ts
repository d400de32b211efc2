import { z } from 'zod';
import {
  ConflictError,
  InputError,
  NotFoundError,
  UnprocessableError,
  type ApiObject,
  type KubeObject,
  type LabelSelector,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';

/**
 * What users store in an emulated workload cluster (namespaces, Secrets, ConfigMaps —
 * including the bootstrap-token Secrets Cluster API creates) lives in Magnetar's object store,
 * so it survives a restart and an etcd-backup feature can snapshot it. Own type keys
 * (apiVersion `workload.magnetar.io/v1`), in the project namespace of the CAPI cluster, named
 * `<cluster>.<namespace>.<name>` (namespaces: `<cluster>.<name>`), labelled with the cluster
 * and the namespace.
 */

export const WORKLOAD_API_VERSION = 'workload.magnetar.io/v1';
/** Store type keys of persisted workload-cluster objects. */
export const WorkloadTypes = {
  Namespace: 'WorkloadNamespace.workload.magnetar.io',
  Secret: 'WorkloadSecret.workload.magnetar.io',
  ConfigMap: 'WorkloadConfigMap.workload.magnetar.io',
} as const;
/** Label: the CAPI cluster a persisted object belongs to. */
export const WORKLOAD_CLUSTER_LABEL = 'workload.magnetar.io/cluster';
/** Label: the namespace (inside the workload cluster) of a persisted object. */
export const WORKLOAD_NAMESPACE_LABEL = 'workload.magnetar.io/namespace';

/** Kinds persisted. */
export type PersistedKind = 'Namespace' | 'Secret' | 'ConfigMap';

const RESOURCE: Record<PersistedKind, string> = {
  Namespace: 'namespaces',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
};
const TYPE_KEY: Record<PersistedKind, string> = {
  Namespace: WorkloadTypes.Namespace,
  Secret: WorkloadTypes.Secret,
  ConfigMap: WorkloadTypes.ConfigMap,
};

const StringMap = z.record(z.string(), z.string());
/** A request body for a persisted kind (validated: it comes from a client). */
export const PersistedBodySchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z
    .looseObject({
      name: z.string().optional(),
      generateName: z.string().optional(),
      namespace: z.string().optional(),
      resourceVersion: z.string().optional(),
      labels: StringMap.nullish(),
      annotations: StringMap.nullish(),
    })
    .default({}),
  type: z.string().optional(),
  data: StringMap.nullish(),
  stringData: StringMap.nullish(),
  binaryData: StringMap.nullish(),
  immutable: z.boolean().optional(),
});
export type PersistedBody = z.infer<typeof PersistedBodySchema>;

/** What is kept of a persisted object (the stored `spec.object`). */
interface StoredBody {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  type?: string;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(
  kind: PersistedKind,
  name: string,
  field: string,
  value: string,
  why: string,
): UnprocessableError {
  return new UnprocessableError(`${kind} "${name}" is invalid: ${field}: Invalid value: "${value}": ${why}`, {
    code: 'Invalid',
    details: { name, kind: RESOURCE[kind] },
  });
}

/** Store access to one emulated cluster's persisted objects. */
export class PersistedObjects {
  constructor(
    private readonly store: ObjectStore,
    /** Project namespace of the CAPI cluster. */
    private readonly project: string,
    /** CAPI cluster name. */
    private readonly cluster: string,
  ) {}

  private storeName(kind: PersistedKind, namespace: string, name: string): string {
    return kind === 'Namespace' ? `${this.cluster}.${name}` : `${this.cluster}.${namespace}.${name}`;
  }

  private toKube(kind: PersistedKind, o: ApiObject): KubeObject {
    const body = (o.spec as { object?: StoredBody }).object ?? { labels: {}, annotations: {} };
    const namespace = o.metadata.labels[WORKLOAD_NAMESPACE_LABEL];
    const name =
      kind === 'Namespace'
        ? o.metadata.name.slice(this.cluster.length + 1)
        : o.metadata.name.slice(this.cluster.length + 1 + (namespace ?? '').length + 1);
    const out: KubeObject = {
      apiVersion: 'v1',
      kind,
      metadata: {
        name,
        ...(kind === 'Namespace' ? {} : { namespace }),
        uid: o.metadata.uid,
        resourceVersion: o.metadata.resourceVersion,
        creationTimestamp: o.metadata.creationTimestamp,
        ...(Object.keys(body.labels).length > 0 ? { labels: body.labels } : {}),
        ...(Object.keys(body.annotations).length > 0 ? { annotations: body.annotations } : {}),
      },
    };
    if (kind === 'Namespace') {
      out.spec = { finalizers: ['kubernetes'] };
      out.status = { phase: 'Active' };
    }
    if (kind === 'Secret') out.type = body.type ?? 'Opaque';
    if (body.data) out.data = body.data;
    if (body.binaryData) out.binaryData = body.binaryData;
    if (body.immutable !== undefined) out.immutable = body.immutable;
    return out;
  }

  private selector(namespace?: string): LabelSelector {
    const sel: LabelSelector = [{ key: WORKLOAD_CLUSTER_LABEL, operator: 'In', values: [this.cluster] }];
    if (namespace !== undefined)
      sel.push({ key: WORKLOAD_NAMESPACE_LABEL, operator: 'In', values: [namespace] });
    return sel;
  }

  async list(
    kind: PersistedKind,
    namespace?: string,
  ): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const r = await this.store.list(TYPE_KEY[kind], {
      namespace: this.project,
      labelSelector: this.selector(kind === 'Namespace' ? undefined : namespace),
    });
    return { items: r.items.map((o) => this.toKube(kind, o)), resourceVersion: r.resourceVersion };
  }

  async get(kind: PersistedKind, namespace: string, name: string): Promise<KubeObject | undefined> {
    const o = await this.store.get(TYPE_KEY[kind], this.project, this.storeName(kind, namespace, name));
    return o ? this.toKube(kind, o) : undefined;
  }

  /** Validate a body into what is stored. */
  private validate(kind: PersistedKind, name: string, body: PersistedBody): StoredBody {
    if (
      kind === 'Namespace'
        ? !(LABEL.test(name) && name.length <= 63)
        : !(SUBDOMAIN.test(name) && name.length <= 253)
    ) {
      throw invalid(
        kind,
        name,
        'metadata.name',
        name,
        kind === 'Namespace'
          ? "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
          : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      );
    }
    const out: StoredBody = {
      labels: body.metadata.labels ?? {},
      annotations: body.metadata.annotations ?? {},
    };
    if (kind === 'Namespace') return out;
    const data: Record<string, string> = { ...(body.data ?? {}) };
    for (const [k, v] of Object.entries(data)) {
      if (!DATA_KEY.test(k))
        throw invalid(
          kind,
          name,
          `data[${k}]`,
          k,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        );
      if (kind === 'Secret' && !BASE64.test(v))
        throw new InputError(
          `${kind} in version "v1" cannot be handled as a ${kind}: illegal base64 data at data[${k}]`,
          { code: 'BadRequest' },
        );
    }
    if (kind === 'Secret') {
      for (const [k, v] of Object.entries(body.stringData ?? {}))
        data[k] = Buffer.from(v, 'utf8').toString('base64');
      out.type = body.type ?? 'Opaque';
    } else if (body.binaryData) out.binaryData = body.binaryData;
    if (Object.keys(data).length > 0) out.data = data;
    if (body.immutable !== undefined) out.immutable = body.immutable;
    return out;
  }

  async create(
    kind: PersistedKind,
    namespace: string,
    body: PersistedBody,
    randomName: () => string,
  ): Promise<KubeObject> {
    const name =
      body.metadata.name ?? (body.metadata.generateName ? body.metadata.generateName + randomName() : '');
    if (name === '') throw invalid(kind, '', 'metadata.name', '', 'name or generateName is required');
    const stored = this.validate(kind, name, body);
    try {
      const o = await this.store.create({
        apiVersion: WORKLOAD_API_VERSION,
        kind: `Workload${kind}`,
        metadata: {
          name: this.storeName(kind, namespace, name),
          namespace: this.project,
          labels: {
            [WORKLOAD_CLUSTER_LABEL]: this.cluster,
            ...(kind === 'Namespace' ? {} : { [WORKLOAD_NAMESPACE_LABEL]: namespace }),
          },
        },
        spec: { object: stored },
      });
      return this.toKube(kind, o);
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new ConflictError(`${RESOURCE[kind]} "${name}" already exists`, {
          code: 'AlreadyExists',
          details: { name, kind: RESOURCE[kind] },
        });
      }
      throw err;
    }
  }

  async replace(
    kind: PersistedKind,
    namespace: string,
    name: string,
    body: PersistedBody,
  ): Promise<KubeObject> {
    if (body.metadata.name !== undefined && body.metadata.name !== name) {
      throw new InputError(
        `the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`,
        { code: 'BadRequest' },
      );
    }
    const current = await this.store.get(TYPE_KEY[kind], this.project, this.storeName(kind, namespace, name));
    if (!current)
      throw new NotFoundError(`${RESOURCE[kind]} "${name}" not found`, {
        code: 'NotFound',
        details: { name, kind: RESOURCE[kind] },
      });
    const prev = (current.spec as { object?: StoredBody }).object;
    if (prev?.immutable) throw invalid(kind, name, 'data', '', 'field is immutable when `immutable` is set');
    const stored = this.validate(kind, name, body);
    try {
      const o = await this.store.update({
        ...current,
        metadata: {
          ...current.metadata,
          resourceVersion: body.metadata.resourceVersion ?? current.metadata.resourceVersion,
        },
        spec: { object: stored },
      });
      return this.toKube(kind, o);
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new ConflictError(
          `Operation cannot be fulfilled on ${RESOURCE[kind]} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          {
            code: 'Conflict',
            details: { name, kind: RESOURCE[kind] },
          },
        );
      }
      throw err;
    }
  }

  async delete(kind: PersistedKind, namespace: string, name: string): Promise<KubeObject> {
    const current = await this.get(kind, namespace, name);
    if (!current)
      throw new NotFoundError(`${RESOURCE[kind]} "${name}" not found`, {
        code: 'NotFound',
        details: { name, kind: RESOURCE[kind] },
      });
    try {
      await this.store.delete(TYPE_KEY[kind], this.project, this.storeName(kind, namespace, name));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    return current;
  }

  /** Remove a namespace's Secrets and ConfigMaps (namespace deletion). */
  async deleteNamespaceContents(namespace: string): Promise<void> {
    for (const kind of ['Secret', 'ConfigMap'] as const) {
      const r = await this.store.list(TYPE_KEY[kind], {
        namespace: this.project,
        labelSelector: this.selector(namespace),
      });
      for (const o of r.items)
        await this.store.delete(TYPE_KEY[kind], this.project, o.metadata.name).catch(ignoreNotFound);
    }
  }

  /** Remove every persisted object of the cluster (the CAPI cluster was deleted). */
  async deleteAll(): Promise<void> {
    for (const kind of ['Secret', 'ConfigMap', 'Namespace'] as const) {
      const r = await this.store.list(TYPE_KEY[kind], {
        namespace: this.project,
        labelSelector: this.selector(),
      });
      for (const o of r.items)
        await this.store.delete(TYPE_KEY[kind], this.project, o.metadata.name).catch(ignoreNotFound);
    }
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (err instanceof NotFoundError) return undefined;
  throw err;
}
