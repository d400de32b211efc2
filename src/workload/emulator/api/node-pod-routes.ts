import {
  acceptsTable,
  InputError,
  kubeSuccess,
  matchesFieldSelector,
  matchesSelector,
  nodePrinter,
  NotAllowedError,
  parseFieldSelector,
  parseLabelSelector,
  patchTypeOf,
  podPrinter,
  type KubeNode,
  type KubeObject,
  type KubePod,
  type Printer,
} from '../../../domain/index.ts';
import { notFound } from '../cluster-model.ts';
import { methodNotAllowed, type RequestContext } from './context.ts';
import { listQuery, readJson, sendJson, sendJsonText, sendList, sendObject, sendText } from './http-io.ts';
import { serveWatch } from './watch.ts';

/**
 * Nodes and pods of an emulated cluster: list/get/watch, node patch (cordon, labels) and
 * delete, pod delete, and the eviction subresource with disruption-budget checks.
 */

const NODE_FIELDS = ['spec.unschedulable', 'spec.providerID'];
const POD_FIELDS = [
  'spec.nodeName',
  'status.phase',
  'status.podIP',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'status.nominatedNodeName',
];

function filterFor(ctx: RequestContext, fields: readonly string[]): (o: KubeObject) => boolean {
  const q = listQuery(ctx.url);
  const labels = parseLabelSelector(q.labelSelector ?? '');
  const selector = parseFieldSelector(q.fieldSelector, fields);
  return (o) => matchesSelector(o.metadata.labels, labels) && matchesFieldSelector(o, selector);
}

function list(
  ctx: RequestContext,
  kind: 'Node' | 'Pod',
  current: () => KubeObject[],
  fields: readonly string[],
  printer: Printer,
): void {
  const q = listQuery(ctx.url);
  const matches = filterFor(ctx, fields);
  if (q.watch) {
    serveWatch(ctx.req, ctx.res, ctx.view, { kind, current, matches, query: q, printer });
    return;
  }
  const items = current().filter(matches);
  items.sort((a, b) =>
    `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`.localeCompare(
      `${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`,
    ),
  );
  sendList(ctx.req, ctx.res, items, {
    listKind: `${kind}List`,
    apiVersion: 'v1',
    resourceVersion: ctx.view.model.resourceVersion,
    printer,
    nowMs: ctx.view.clock.now(),
    includeObject: q.includeObject,
  });
}

/** `/api/v1/nodes[/<name>]`. */
export async function serveNodes(ctx: RequestContext, name: string | undefined): Promise<void> {
  const model = ctx.view.model;
  const now = ctx.view.clock.now();
  if (name === undefined) {
    if (ctx.method !== 'GET') throw methodNotAllowed(ctx, 'nodes');
    const q = listQuery(ctx.url);
    if (!q.watch && !q.labelSelector && !q.fieldSelector && !acceptsTable(ctx.req.headers.accept)) {
      sendJsonText(ctx.res, 200, model.nodeListJson());
      return;
    }
    list(ctx, 'Node', () => model.listNodes(), NODE_FIELDS, nodePrinter);
    return;
  }
  switch (ctx.method) {
    case 'GET': {
      const node = model.getNode(name);
      if (!node) throw notFound('nodes', name);
      sendObject(ctx.req, ctx.res, node, { printer: nodePrinter, nowMs: now });
      return;
    }
    case 'PATCH': {
      const type = patchTypeOf(ctx.req.headers['content-type']);
      if (!type)
        throw new InputError(
          `the content type ${ctx.req.headers['content-type'] ?? '(none)'} is not a supported patch type`,
          { code: 'UnsupportedMediaType' },
        );
      const patch = await readJson(ctx.req);
      const node: KubeNode = model.patchNode(name, type, patch);
      sendJson(ctx.res, 200, node);
      return;
    }
    case 'DELETE': {
      const node = model.removeNode(name);
      if (!node) throw notFound('nodes', name);
      ctx.view.nodeDeleted(name);
      sendJson(
        ctx.res,
        200,
        kubeSuccess({ name, kind: 'nodes', ...(node.metadata.uid ? { uid: node.metadata.uid } : {}) }),
      );
      return;
    }
    default:
      throw methodNotAllowed(ctx, `nodes/${name}`);
  }
}

/** `/api/v1/pods` and `/api/v1/namespaces/<ns>/pods[/<name>[/eviction|/log]]`. */
export async function servePods(
  ctx: RequestContext,
  namespace: string | undefined,
  name: string | undefined,
  sub: string | undefined,
): Promise<void> {
  const model = ctx.view.model;
  const now = ctx.view.clock.now();
  if (name === undefined) {
    if (ctx.method === 'POST') {
      throw new NotAllowedError(
        'pods cannot be created in an emulated workload cluster: the embedded cloud runs no containers',
        { code: 'MethodNotAllowed' },
      );
    }
    if (ctx.method !== 'GET') throw methodNotAllowed(ctx, 'pods');
    list(ctx, 'Pod', () => model.listPods(namespace), POD_FIELDS, podPrinter);
    return;
  }
  const ns = namespace!;
  if (sub === 'eviction') {
    if (ctx.method !== 'POST') throw methodNotAllowed(ctx, 'pods/eviction');
    const body = (await readJson(ctx.req)) as { metadata?: { name?: string } } | undefined;
    if (body?.metadata?.name !== undefined && body.metadata.name !== name) {
      throw new InputError(`name in URL does not match name in Eviction object`, { code: 'BadRequest' });
    }
    const outcome = model.evict(ns, name);
    if (outcome.evicted) sendJson(ctx.res, 201, { ...kubeSuccess(), code: 201 });
    else sendJson(ctx.res, 429, outcome.status);
    return;
  }
  if (sub === 'log') {
    if (ctx.method !== 'GET') throw methodNotAllowed(ctx, 'pods/log');
    if (!model.getPod(ns, name)) throw notFound('pods', name);
    sendText(
      ctx.res,
      200,
      `pod ${ns}/${name} is emulated by Magnetar: no container runs, so there are no logs\n`,
    );
    return;
  }
  if (sub !== undefined) throw notFound(`pods/${sub}`, name);
  switch (ctx.method) {
    case 'GET': {
      const pod: KubePod | undefined = model.getPod(ns, name);
      if (!pod) throw notFound('pods', name);
      sendObject(ctx.req, ctx.res, pod, { printer: podPrinter, nowMs: now });
      return;
    }
    case 'DELETE':
      sendJson(ctx.res, 200, model.deletePod(ns, name));
      return;
    default:
      throw methodNotAllowed(ctx, `pods/${name}`);
  }
}
