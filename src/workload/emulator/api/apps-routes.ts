import {
  daemonSetPrinter,
  deploymentPrinter,
  matchesSelector,
  NotFoundError,
  parseLabelSelector,
  podDisruptionBudgetPrinter,
  replicaSetPrinter,
  type KubeObject,
  type Printer,
} from '../../../domain/index.ts';
import { methodNotAllowed, type RequestContext } from './context.ts';
import { listQuery, sendList, sendObject } from './http-io.ts';

/** Read-only views of the derived workloads: kube-proxy DaemonSet, CoreDNS Deployment/ReplicaSet, its PodDisruptionBudget. */

const KINDS: Record<
  string,
  { kind: string; apiVersion: string; printer: Printer; items: (ctx: RequestContext) => KubeObject[] }
> = {
  daemonsets: {
    kind: 'DaemonSet',
    apiVersion: 'apps/v1',
    printer: daemonSetPrinter,
    items: (ctx) => ctx.view.model.workloads().daemonSets,
  },
  deployments: {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    printer: deploymentPrinter,
    items: (ctx) => ctx.view.model.workloads().deployments,
  },
  replicasets: {
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    printer: replicaSetPrinter,
    items: (ctx) => ctx.view.model.workloads().replicaSets,
  },
  poddisruptionbudgets: {
    kind: 'PodDisruptionBudget',
    apiVersion: 'policy/v1',
    printer: podDisruptionBudgetPrinter,
    items: (ctx) => ctx.view.model.podDisruptionBudgets(),
  },
};

/** Serve `/apis/{apps,policy}/v1/[namespaces/<ns>/]<resource>[/<name>]`. */
export function serveDerived(
  ctx: RequestContext,
  resource: string,
  namespace: string | undefined,
  name: string | undefined,
): boolean {
  const def = KINDS[resource];
  if (!def) return false;
  if (ctx.method !== 'GET') throw methodNotAllowed(ctx, resource);
  const q = listQuery(ctx.url);
  if (q.watch) throw methodNotAllowed(ctx, `watch ${resource} (watch is served for nodes and pods)`);
  const labels = parseLabelSelector(q.labelSelector ?? '');
  const items = def
    .items(ctx)
    .filter(
      (o) => (!namespace || o.metadata.namespace === namespace) && matchesSelector(o.metadata.labels, labels),
    );
  const now = ctx.view.clock.now();
  if (name === undefined) {
    sendList(ctx.req, ctx.res, items, {
      listKind: `${def.kind}List`,
      apiVersion: def.apiVersion,
      resourceVersion: ctx.view.model.resourceVersion,
      printer: def.printer,
      nowMs: now,
      includeObject: q.includeObject,
    });
    return true;
  }
  const obj = items.find((o) => o.metadata.name === name);
  if (!obj)
    throw new NotFoundError(`${resource}.${def.apiVersion.split('/')[0]} "${name}" not found`, {
      code: 'NotFound',
      details: { name, kind: resource },
    });
  sendObject(ctx.req, ctx.res, obj, { printer: def.printer, nowMs: now });
  return true;
}
