import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotAllowedError, NotFoundError } from '../../../domain/index.ts';
import type { ClusterView } from './cluster-view.ts';
import { serveDerived } from './apps-routes.ts';
import { servePersisted } from './config-routes.ts';
import { verbOf, type RequestContext } from './context.ts';
import { serveDiscovery } from './discovery-routes.ts';
import { callerOf, isAdmin, listQuery, sendError } from './http-io.ts';
import { serveNodes, servePods } from './node-pod-routes.ts';

/**
 * The emulated Kubernetes API of one workload cluster: discovery, then the core, apps and
 * policy resources. Callers are authenticated by their client certificate (the TLS layer
 * already refused certificates from another CA); cluster-admin groups may do everything,
 * anyone else only discovery, as RBAC without bindings would allow.
 */

const PERSISTED = { namespaces: 'Namespace', secrets: 'Secret', configmaps: 'ConfigMap' } as const;

function notFound(): NotFoundError {
  return new NotFoundError('the server could not find the requested resource', { code: 'NotFound' });
}

/** Who may do what: admins everything, others discovery only. */
function authorize(
  ctx: RequestContext,
  group: string,
  resource: string,
  namespace: string | undefined,
  collection: boolean,
): void {
  if (isAdmin(ctx.caller)) return;
  const verb = verbOf(ctx.method, collection, listQuery(ctx.url).watch);
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  throw new NotAllowedError(
    `${resource} is forbidden: User "${ctx.caller.user}" cannot ${verb} resource "${resource}" in API group "${group}" ${scope}`,
    {
      code: 'Forbidden',
      details: { kind: resource },
    },
  );
}

async function route(ctx: RequestContext, version: string): Promise<void> {
  const segs = ctx.url.pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  if (serveDiscovery(ctx, segs, version)) return;

  let group: string;
  let rest: string[];
  if (segs[0] === 'api' && segs[1] === 'v1') {
    group = '';
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && (segs[1] === 'apps' || segs[1] === 'policy') && segs[2] === 'v1') {
    group = segs[1];
    rest = segs.slice(3);
  } else throw notFound();

  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, sub] = rest as [string | undefined, string | undefined, string | undefined];
  if (!resource || rest.length > 3) throw notFound();
  if (resource === 'namespaces' && namespace === undefined && group === '') {
    authorize(ctx, group, 'namespaces', undefined, name === undefined);
    await servePersisted(ctx, 'Namespace', '', name);
    return;
  }
  authorize(ctx, group, sub ? `${resource}/${sub}` : resource, namespace, name === undefined);

  if (group !== '') {
    if (sub !== undefined || !serveDerived(ctx, resource, namespace, name)) throw notFound();
    return;
  }
  switch (resource) {
    case 'nodes':
      if (namespace !== undefined || sub !== undefined) throw notFound();
      await serveNodes(ctx, name);
      return;
    case 'pods':
      if (name !== undefined && namespace === undefined) throw notFound();
      await servePods(ctx, namespace, name, sub);
      return;
    case 'secrets':
    case 'configmaps':
      if (sub !== undefined || (name !== undefined && namespace === undefined)) throw notFound();
      if (namespace === undefined && ctx.method !== 'GET') throw notFound();
      await servePersisted(ctx, PERSISTED[resource], namespace, name);
      return;
    default:
      throw notFound();
  }
}

/** Handle one request for `view`. */
export async function handleRequest(
  view: ClusterView,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const ctx: RequestContext = {
    req,
    res,
    url: new URL(req.url ?? '/', 'https://emulated.invalid'),
    method: (req.method ?? 'GET').toUpperCase(),
    view,
    caller: callerOf(req),
  };
  try {
    await route(ctx, view.model.version() ?? 'v0.0.0');
  } catch (err) {
    sendError(res, err, view.log);
  }
}
