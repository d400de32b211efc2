import type { FastifyInstance } from 'fastify';
import {
  acceptsTable,
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
  buildTable,
  namespacePrinter,
  type ApiResource,
  type AuthContext,
  type KubeNamespace,
  type KubeVersionInfo,
  type ProjectInfo,
} from '../../domain/index.ts';
import { canAccess } from './access.ts';
import { caller, type KubeRoutesDeps } from './context.ts';
import { notFoundStatus } from './not-found.ts';
import { discoveryResources, servedGroups } from './resources.ts';
import { openApiGroupVersion, openApiRoot } from './openapi.ts';
import { methodNotAllowed } from './status.ts';
import { NotAllowedError, NotFoundError } from '../../domain/index.ts';

/**
 * Discovery (the legacy, non-aggregated documents, which kubectl accepts when the server
 * answers plain JSON to its aggregated-discovery Accept header), `/version`, and the core v1
 * `namespaces`: one per project the caller can see. Discovery needs no token, as on a
 * Kubernetes API server with anonymous discovery; namespaces do.
 */

const CORE: ApiResource[] = [
  {
    name: 'namespaces',
    singularName: 'namespace',
    namespaced: false,
    kind: 'Namespace',
    verbs: ['get', 'list'],
    shortNames: ['ns'],
  },
];

/** The Kubernetes release whose API conventions the façade follows. */
export const VERSION_INFO: KubeVersionInfo = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0+magnetar',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'n/a',
  platform: 'linux/amd64',
};

/** Project name annotation on namespaces. */
export const PROJECT_NAME_ANNOTATION = 'magnetar.io/project-name';

function namespaceOf(p: ProjectInfo): KubeNamespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: p.id,
      uid: p.id,
      resourceVersion: '1',
      labels: { 'kubernetes.io/metadata.name': p.id },
      annotations: { [PROJECT_NAME_ANNOTATION]: p.name },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: p.enabled ? 'Active' : 'Terminating' },
  };
}

async function visibleProjects(deps: KubeRoutesDeps, ctx: AuthContext): Promise<ProjectInfo[]> {
  if (ctx.isAdmin) return deps.identity.listProjects();
  if (!ctx.projectId) return [];
  const p = await deps.identity.getProject(ctx.projectId);
  return p ? [p] : [];
}

export function discoveryRoutes(app: FastifyInstance, deps: KubeRoutesDeps, prefix: string): void {
  const address = () => {
    const u = new URL(deps.baseUrl());
    return u.host;
  };
  app.get('/version', async () => VERSION_INFO);
  app.get('/api', async () => apiVersionsDocument(address()));
  app.get('/api/v1', async () => apiResourceListDocument('v1', CORE));
  app.get('/apis', async () => apiGroupListDocument(servedGroups()));
  app.get<{ Params: { group: string } }>('/apis/:group', async (req) => {
    const g = servedGroups().find((x) => x.name === req.params.group);
    if (!g) throw notFoundStatus();
    return apiGroupDocument(g);
  });
  app.get<{ Params: { group: string; version: string } }>('/apis/:group/:version', async (req) => {
    const { group, version } = req.params;
    const resources = discoveryResources(group, version);
    if (!resources) throw notFoundStatus();
    return apiResourceListDocument(`${group}/${version}`, resources);
  });
  // OpenAPI v3 only as far as kubectl needs it to leave validation to the server; no v2.
  app.get('/openapi/v2', async () => {
    throw notFoundStatus();
  });
  app.get('/openapi/v3', async () => openApiRoot(prefix));
  app.get<{ Params: { group: string; version: string } }>('/openapi/v3/apis/:group/:version', async (req) => {
    const doc = openApiGroupVersion(req.params.group, req.params.version);
    if (!doc) throw notFoundStatus();
    return doc;
  });

  app.get('/api/v1/namespaces', async (req, reply) => {
    const ctx = await caller(deps, req);
    const items = (await visibleProjects(deps, ctx)).map(namespaceOf);
    const rv = String(await deps.store.currentRevision());
    if (acceptsTable(req.headers.accept)) {
      return buildTable(namespacePrinter, items, { resourceVersion: rv, nowMs: deps.clock.now() });
    }
    void reply;
    return { apiVersion: 'v1', kind: 'NamespaceList', metadata: { resourceVersion: rv }, items };
  });
  app.get<{ Params: { ns: string } }>('/api/v1/namespaces/:ns', async (req) => {
    const ctx = await caller(deps, req);
    const ns = req.params.ns;
    const p = await deps.identity.getProject(ns);
    if (!p)
      throw new NotFoundError(`namespaces "${ns}" not found`, {
        code: 'NotFound',
        details: { name: ns, kind: 'namespaces' },
      });
    if (!canAccess(ctx, ns, 'read'))
      throw new NotAllowedError(
        `namespaces "${ns}" is forbidden: User "${ctx.userName}" cannot get resource "namespaces" in API group "" in the namespace "${ns}"`,
        {
          code: 'Forbidden',
          details: { name: ns, kind: 'namespaces' },
        },
      );
    const item = namespaceOf(p);
    if (acceptsTable(req.headers.accept)) {
      return buildTable(namespacePrinter, [item], { resourceVersion: '1', nowMs: deps.clock.now() });
    }
    return item;
  });
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    app.route({
      method,
      url: '/api/v1/namespaces/:ns?',
      handler: async (req) => {
        await caller(deps, req);
        throw methodNotAllowed('namespaces are the projects of the identity service; manage them there');
      },
    });
  }
}
