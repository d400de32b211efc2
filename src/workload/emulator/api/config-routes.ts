import { stringify } from 'yaml';
import {
  applyPatch,
  ConflictError,
  configMapPrinter,
  InputError,
  kubeSuccess,
  matchesFieldSelector,
  matchesSelector,
  namespacePrinter,
  NotAllowedError,
  NotFoundError,
  parseFieldSelector,
  parseLabelSelector,
  patchTypeOf,
  secretPrinter,
  type KubeObject,
  type Printer,
} from '../../../domain/index.ts';
import { EMULATED_ANNOTATION, suffix } from '../system-objects.ts';
import { PersistedBodySchema, type PersistedBody, type PersistedKind } from '../persisted-objects.ts';
import { methodNotAllowed, type RequestContext } from './context.ts';
import { listQuery, readJson, sendJson, sendList, sendObject } from './http-io.ts';

/**
 * Namespaces, Secrets and ConfigMaps of an emulated cluster. What users create is persisted
 * in the store; the namespaces kubeadm creates (default, kube-system, kube-public,
 * kube-node-lease) and the ConfigMaps it writes (`kube-root-ca.crt` in every namespace,
 * `kubeadm-config`, `cluster-info`) are derived and read-only.
 */

export const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'] as const;

const PRINTERS: Record<PersistedKind, Printer> = {
  Namespace: namespacePrinter,
  Secret: secretPrinter,
  ConfigMap: configMapPrinter,
};
const RESOURCE: Record<PersistedKind, string> = {
  Namespace: 'namespaces',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
};

function notFound(kind: PersistedKind, name: string): NotFoundError {
  return new NotFoundError(`${RESOURCE[kind]} "${name}" not found`, {
    code: 'NotFound',
    details: { name, kind: RESOURCE[kind] },
  });
}

function created(ctx: RequestContext): string {
  return ctx.view.model.initialized ?? new Date(ctx.view.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function systemNamespace(ctx: RequestContext, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: `${ctx.view.name}-ns-${name}`,
      resourceVersion: '1',
      creationTimestamp: created(ctx),
      labels: { 'kubernetes.io/metadata.name': name },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** The ConfigMaps kubeadm and the root-CA publisher would have written in `namespace`. */
function systemConfigMaps(ctx: RequestContext, namespace: string): KubeObject[] {
  const meta = (name: string) => ({
    name,
    namespace,
    uid: `${ctx.view.name}-cm-${namespace}-${name}`,
    resourceVersion: '1',
    creationTimestamp: created(ctx),
    annotations: { [EMULATED_ANNOTATION]: 'derived by the emulation; read-only' },
  });
  const out: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta('kube-root-ca.crt'),
      data: { 'ca.crt': ctx.view.caPem() + '\n' },
    },
  ];
  const version = ctx.view.model.version() ?? '';
  if (namespace === 'kube-system') {
    out.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta('kubeadm-config'),
      data: {
        ClusterConfiguration: stringify({
          apiVersion: 'kubeadm.k8s.io/v1beta4',
          kind: 'ClusterConfiguration',
          clusterName: ctx.view.name,
          kubernetesVersion: version,
          controlPlaneEndpoint: ctx.view.serverAddress(),
        }),
      },
    });
  }
  if (namespace === 'kube-public') {
    const kubeconfig = stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: '',
          cluster: {
            server: `https://${ctx.view.serverAddress()}`,
            'certificate-authority-data': Buffer.from(ctx.view.caPem() + '\n').toString('base64'),
          },
        },
      ],
      contexts: null,
      'current-context': '',
      preferences: {},
      users: null,
    });
    out.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cluster-info'), data: { kubeconfig } });
  }
  return out;
}

async function namespaceExists(ctx: RequestContext, name: string): Promise<boolean> {
  return (
    (SYSTEM_NAMESPACES as readonly string[]).includes(name) ||
    (await ctx.view.persisted.get('Namespace', '', name)) !== undefined
  );
}

async function allNamespaces(ctx: RequestContext): Promise<string[]> {
  const persisted = await ctx.view.persisted.list('Namespace');
  return [...SYSTEM_NAMESPACES, ...persisted.items.map((n) => n.metadata.name!)];
}

function derived(
  ctx: RequestContext,
  kind: PersistedKind,
  namespace: string,
  name: string,
): KubeObject | undefined {
  if (kind === 'Namespace')
    return (SYSTEM_NAMESPACES as readonly string[]).includes(name) ? systemNamespace(ctx, name) : undefined;
  if (kind === 'ConfigMap') return systemConfigMaps(ctx, namespace).find((c) => c.metadata.name === name);
  return undefined;
}

function parseBody(body: unknown): PersistedBody {
  const r = PersistedBodySchema.safeParse(body ?? {});
  if (!r.success)
    throw new InputError(
      `the request body is not a valid object: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      { code: 'BadRequest' },
    );
  return r.data;
}

function readOnly(kind: PersistedKind, name: string): NotAllowedError {
  return new NotAllowedError(
    `${RESOURCE[kind]} "${name}" is forbidden: it is managed by the workload-cluster emulation and cannot be changed`,
    { code: 'Forbidden', details: { name, kind: RESOURCE[kind] } },
  );
}

/** Serve a persisted kind: collection when `name` is undefined. `namespace` is '' for namespaces and for all-namespace lists of namespaced kinds it is undefined. */
export async function servePersisted(
  ctx: RequestContext,
  kind: PersistedKind,
  namespace: string | undefined,
  name: string | undefined,
): Promise<void> {
  const store = ctx.view.persisted;
  const printer = PRINTERS[kind];
  const now = ctx.view.clock.now();
  if (name === undefined) {
    if (ctx.method === 'GET') {
      const q = listQuery(ctx.url);
      if (q.watch)
        throw methodNotAllowed(ctx, `watch ${RESOURCE[kind]} (watch is served for nodes and pods)`);
      const stored = await store.list(kind, kind === 'Namespace' ? undefined : namespace);
      let items = stored.items;
      if (kind === 'Namespace') items = [...SYSTEM_NAMESPACES.map((n) => systemNamespace(ctx, n)), ...items];
      if (kind === 'ConfigMap') {
        const namespaces = namespace
          ? (await namespaceExists(ctx, namespace))
            ? [namespace]
            : []
          : await allNamespaces(ctx);
        items = [...namespaces.flatMap((ns) => systemConfigMaps(ctx, ns)), ...items];
      }
      const labels = parseLabelSelector(q.labelSelector ?? '');
      const fields = parseFieldSelector(
        q.fieldSelector,
        kind === 'Secret' ? ['type'] : kind === 'Namespace' ? ['status.phase'] : [],
      );
      items = items.filter(
        (o) => matchesSelector(o.metadata.labels, labels) && matchesFieldSelector(o, fields),
      );
      items.sort((a, b) =>
        `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`.localeCompare(
          `${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`,
        ),
      );
      sendList(ctx.req, ctx.res, items, {
        listKind: `${kind}List`,
        apiVersion: 'v1',
        resourceVersion: stored.resourceVersion,
        printer,
        nowMs: now,
        includeObject: q.includeObject,
      });
      return;
    }
    if (ctx.method === 'POST') {
      const body = parseBody(await readJson(ctx.req));
      const ns = kind === 'Namespace' ? '' : namespace!;
      if (body.metadata.namespace !== undefined && kind !== 'Namespace' && body.metadata.namespace !== ns) {
        throw new InputError(
          'the namespace of the provided object does not match the namespace sent on the request',
          { code: 'BadRequest' },
        );
      }
      if (kind !== 'Namespace' && !(await namespaceExists(ctx, ns))) throw notFound('Namespace', ns);
      const wanted = body.metadata.name;
      if (wanted && derived(ctx, kind, ns, wanted)) {
        throw new ConflictError(`${RESOURCE[kind]} "${wanted}" already exists`, {
          code: 'AlreadyExists',
          details: { name: wanted, kind: RESOURCE[kind] },
        });
      }
      const obj = await store.create(kind, ns, body, () => suffix());
      ctx.view.persistedChanged();
      sendObject(ctx.req, ctx.res, obj, { printer, nowMs: now, status: 201 });
      return;
    }
    throw methodNotAllowed(ctx, RESOURCE[kind]);
  }

  const ns = kind === 'Namespace' ? '' : namespace!;
  const virtual = derived(ctx, kind, ns, name);
  if (kind === 'ConfigMap' && virtual && !(await namespaceExists(ctx, ns))) throw notFound(kind, name);
  switch (ctx.method) {
    case 'GET': {
      const obj = virtual ?? (await store.get(kind, ns, name));
      if (!obj) throw notFound(kind, name);
      sendObject(ctx.req, ctx.res, obj, { printer, nowMs: now });
      return;
    }
    case 'PUT':
    case 'PATCH': {
      if (virtual) throw readOnly(kind, name);
      let body: PersistedBody;
      if (ctx.method === 'PATCH') {
        const type = patchTypeOf(ctx.req.headers['content-type']);
        if (!type)
          throw new InputError(
            `the content type ${ctx.req.headers['content-type'] ?? '(none)'} is not a supported patch type`,
            { code: 'UnsupportedMediaType' },
          );
        const current = await store.get(kind, ns, name);
        if (!current) throw notFound(kind, name);
        body = parseBody(applyPatch(type, current, await readJson(ctx.req)));
      } else body = parseBody(await readJson(ctx.req));
      const obj = await store.replace(kind, ns, name, body);
      ctx.view.persistedChanged();
      sendObject(ctx.req, ctx.res, obj, { printer, nowMs: now });
      return;
    }
    case 'DELETE': {
      if (virtual) {
        if (kind === 'Namespace') {
          throw new NotAllowedError(`namespaces "${name}" is forbidden: this namespace may not be deleted`, {
            code: 'Forbidden',
            details: { name, kind: 'namespaces' },
          });
        }
        throw readOnly(kind, name);
      }
      const obj = await store.delete(kind, ns, name);
      if (kind === 'Namespace') await store.deleteNamespaceContents(name);
      ctx.view.persistedChanged();
      if (kind === 'Namespace') sendJson(ctx.res, 200, { ...obj, status: { phase: 'Terminating' } });
      else
        sendJson(
          ctx.res,
          200,
          kubeSuccess({ name, kind: RESOURCE[kind], ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}) }),
        );
      return;
    }
    default:
      throw methodNotAllowed(ctx, `${RESOURCE[kind]}/${name}`);
  }
}
