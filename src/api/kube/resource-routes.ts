import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { kubeSuccess, type AuthContext } from '../../domain/index.ts';
import { checkAccess, visibleNamespaces, type Access } from './access.ts';
import { caller, parseQuery, resourceOf, type KubeRoutesDeps, type ResourceParams } from './context.ts';
import { notFoundStatus } from './not-found.ts';
import {
  createObject,
  deleteObject,
  deletePreconditions,
  getObject,
  listObjects,
  patchBody,
  patchKind,
  patchObject,
  render,
  replaceObject,
} from './object-ops.ts';
import type { KubeResource } from './resources.ts';
import { getScale, writeScale } from './scale.ts';
import { badRequest, methodNotAllowed } from './status.ts';
import { serveWatch } from './watch.ts';

/**
 * The resource paths: `/apis/<group>/<version>/<plural>` (all namespaces: list, watch),
 * `…/namespaces/<ns>/<plural>` (list, watch, create), `…/<plural>/<name>` (get, update,
 * patch, delete) and `…/<name>/<scale|status>`.
 */

type Req = FastifyRequest<{ Params: ResourceParams }>;

async function allowed(
  deps: KubeRoutesDeps,
  req: Req,
  r: KubeResource,
  verb: string,
  access: Access,
): Promise<AuthContext> {
  const ctx = await caller(deps, req);
  checkAccess(
    ctx,
    { verb, resource: r.plural, group: r.group, namespace: req.params.namespace ?? '' },
    access,
  );
  return ctx;
}

export function resourceRoutes(app: FastifyInstance, deps: KubeRoutesDeps): void {
  const base = '/apis/:group/:version';

  // All namespaces (kubectl -A): admins see everything, others their project.
  app.get(`${base}/:plural`, async (req: Req, reply: FastifyReply) => {
    const r = resourceOf(req.params);
    const ctx = await caller(deps, req);
    const q = parseQuery(req, r);
    const namespaces = visibleNamespaces(ctx);
    if (q.watch) return serveWatch(deps, req, reply, r, namespaces, q);
    return listObjects(deps, r, namespaces, q, req.headers.accept);
  });

  const collection = `${base}/namespaces/:namespace/:plural`;
  app.get(collection, async (req: Req, reply: FastifyReply) => {
    const r = resourceOf(req.params);
    const q = parseQuery(req, r);
    await allowed(deps, req, r, q.watch ? 'watch' : 'list', 'read');
    const ns = [req.params.namespace!];
    if (q.watch) return serveWatch(deps, req, reply, r, ns, q);
    return listObjects(deps, r, ns, q, req.headers.accept);
  });
  app.post(collection, async (req: Req, reply: FastifyReply) => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, 'create', 'write');
    const q = parseQuery(req, r);
    const obj = await createObject(deps, r, req.params.namespace!, req.body, q);
    return reply.code(201).send(render(deps, r, obj, req.headers.accept));
  });

  const item = `${collection}/:name`;
  app.get(item, async (req: Req) => {
    const r = resourceOf(req.params);
    const q = parseQuery(req, r);
    await allowed(deps, req, r, 'get', 'read');
    return render(
      deps,
      r,
      await getObject(deps, r, req.params.namespace!, req.params.name!),
      req.headers.accept,
      q,
    );
  });
  app.put(item, async (req: Req) => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, 'update', 'write');
    const q = parseQuery(req, r);
    const obj = await replaceObject(deps, r, req.params.namespace!, req.params.name!, req.body, q);
    return render(deps, r, obj, req.headers.accept);
  });
  app.patch(item, async (req: Req, reply: FastifyReply) => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, 'patch', 'write');
    const q = parseQuery(req, r);
    const kind = patchKind(req.headers['content-type']);
    const { object, created } = await patchObject(
      deps,
      r,
      req.params.namespace!,
      req.params.name!,
      kind,
      patchBody(kind, req.body),
      q,
    );
    return reply.code(created ? 201 : 200).send(render(deps, r, object, req.headers.accept));
  });
  app.delete(item, async (req: Req) => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, 'delete', 'write');
    const q = parseQuery(req, r);
    const { object, uid } = await deleteObject(
      deps,
      r,
      req.params.namespace!,
      req.params.name!,
      deletePreconditions(req.body),
      q,
    );
    if (object) return render(deps, r, object, req.headers.accept);
    return kubeSuccess({ name: req.params.name!, group: r.group, kind: r.plural, uid });
  });

  const sub = `${item}/:subresource`;
  app.get(sub, async (req: Req) => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, 'get', 'read');
    const { namespace, name, subresource } = req.params;
    if (subresource === 'status')
      return render(deps, r, await getObject(deps, r, namespace!, name!), undefined);
    if (subresource === 'scale' && r.scale) return getScale(deps, r, namespace!, name!);
    throw notFoundStatus();
  });
  const writeSub = async (req: Req, verb: 'update' | 'patch') => {
    const r = resourceOf(req.params);
    await allowed(deps, req, r, verb, 'write');
    const { namespace, name, subresource } = req.params;
    if (subresource === 'status')
      throw methodNotAllowed('the status of Cluster API objects is written by the controllers');
    if (subresource !== 'scale' || !r.scale) throw notFoundStatus();
    const q = parseQuery(req, r);
    if (verb === 'update') return writeScale(deps, r, namespace!, name!, { put: req.body }, q.dryRun);
    const kind = patchKind(req.headers['content-type']);
    if (kind === 'apply')
      throw badRequest('server-side apply is not supported on the scale subresource; use a merge patch');
    return writeScale(
      deps,
      r,
      namespace!,
      name!,
      { patch: patchBody(kind, req.body), type: kind === 'strategic' ? 'merge' : kind },
      q.dryRun,
    );
  };
  app.put(sub, async (req: Req) => writeSub(req, 'update'));
  app.patch(sub, async (req: Req) => writeSub(req, 'patch'));
}
