import type { FastifyInstance } from 'fastify';
import {
  InputError,
  MagnumTypes,
  capiClusterName,
  nodeGroupSizeProblem,
  type HealthStatus,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../../domain/index.ts';
import { createCluster } from '../cluster-create.ts';
import type { TypedOp } from '../typed-store.ts';
import { requireRole, stateOf, type Caller, type Env } from '../context.ts';
import { COMMON_INTERNAL, applyMagnumPatch, changedAttributes, parsePatch } from '../json-patch.ts';
import { clusterNotFound, defaultNodeGroup, findCluster, normalizeUuid } from '../lookup.ts';
import { atLeast, type Microversion } from '../microversion.ts';
import { nextLink, pageOf, param, parseListQuery, type ListQuery, type Query } from '../pagination.ts';
import { toStringDict } from '../python-literal.ts';
import { clusterToWire } from '../wire.ts';
import { requireStatus, retryOnConflict, stamped, withOperation } from '../writes.ts';

/** `/v1/clusters`: list (short form), detail, show (full form), create, PATCH, delete. */

const CLUSTER_SORT_KEYS = [
  'uuid',
  'name',
  'cluster_template_id',
  'keypair',
  'docker_volume_size',
  'node_count',
  'master_count',
  'status',
  'health_status',
  'master_flavor_id',
  'flavor_id',
  'create_timeout',
  'stack_id',
  'cluster_id',
  'created_at',
  'updated_at',
  'project_id',
  'user_id',
  'api_address',
  'status_reason',
];

const HEALTH = new Set<HealthStatus>(['HEALTHY', 'UNHEALTHY', 'UNKNOWN']);

/** The wire form of one cluster, with what it needs from the read model. */
export function clusterWire(
  env: Env,
  c: MagnumClusterObject,
  version: Microversion,
  expand: boolean,
): Record<string, unknown> {
  return clusterToWire(
    c,
    env.model.nodeGroupsOf(c.metadata.uid),
    env.model.templates.get(c.spec.clusterTemplateId),
    version,
    env.deps.baseUrl(),
    expand,
  );
}

/** The JSON text of a cluster's wire form, from the read model's cache when nothing it depends on changed. */
export function clusterJson(
  env: Env,
  c: MagnumClusterObject,
  version: Microversion,
  expand: boolean,
): string {
  const base = env.deps.baseUrl();
  const template = env.model.templates.get(c.spec.clusterTemplateId);
  const key = `${c.metadata.resourceVersion}|${env.model.clusterStamp(c.metadata.uid)}|${template?.metadata.resourceVersion ?? '-'}|${atLeast(version, 13) ? 13 : 1}|${base}`;
  return env.model.cachedJson(c.metadata.uid, expand ? 'full' : 'short', key, () =>
    clusterWire(env, c, version, expand),
  );
}

const JSON_TYPE = 'application/json; charset=utf-8';

async function listClusters(
  env: Env,
  caller: Caller,
  version: Microversion,
  query: Query,
  detail: boolean,
): Promise<string> {
  requireRole(caller, 'reader', detail ? 'cluster:detail' : 'cluster:get_all');
  const q: ListQuery = parseListQuery(query, CLUSTER_SORT_KEYS);
  // Admins list every project's clusters (Magnum's `cluster:get_all_all_projects`).
  const all = env.model.clustersOf(caller.isAdmin ? undefined : caller.projectId);
  const marker = q.marker ? normalizeUuid(q.marker) : undefined;
  let items: MagnumClusterObject[];
  if (q.sortKey === 'id' || q.sortKey === 'created_at') {
    const ordered = q.sortDir === 'desc' ? all.reverse() : all;
    let start = 0;
    if (marker !== undefined) {
      start = ordered.findIndex((c) => c.metadata.uid === marker) + 1;
      if (start === 0) throw clusterNotFound(q.marker!);
    }
    items = ordered.slice(start, start + q.limit);
  } else {
    const page = pageOf(
      all.map((c) => ({ id: c.metadata.uid, wire: clusterWire(env, c, version, true), item: c })),
      { ...q, ...(marker ? { marker } : {}) },
    );
    if (!page) throw clusterNotFound(q.marker ?? '');
    items = page.map((p) => p.item);
  }
  const clusters = items.map((c) => clusterJson(env, c, version, detail));
  const next = nextLink(
    env.deps.baseUrl(),
    detail ? 'clusters/detail' : 'clusters',
    q,
    items.length,
    items.at(-1)?.metadata.uid,
  );
  return `{"clusters":[${clusters.join(',')}]${next ? `,"next":${JSON.stringify(next)}` : ''}}`;
}

/** Apply a cluster PATCH (node_count of default-worker, health_status, health_status_reason). */
async function patchCluster(
  env: Env,
  caller: Caller,
  version: Microversion,
  ident: string,
  rawBody: unknown,
  query: Query,
): Promise<string> {
  requireRole(caller, 'member', 'cluster:update');
  const ops = parsePatch(rawBody, 'cluster');
  const rollback = param(query, 'rollback');
  if (rollback !== undefined && !/^(true|false|1|0|yes|no|on|off|t|f|y|n)$/i.test(rollback)) {
    throw new InputError(
      `Invalid input for field/attribute rollback: it must be a boolean (got '${rollback}').`,
      { code: 'Invalid' },
    );
  }
  return retryOnConflict(async () => {
    const cluster = await findCluster(env, caller, ident, caller.isAdmin, true);
    const before = clusterWire(env, cluster, version, true);
    const after = applyMagnumPatch(before, ops, {
      internal: [
        ...COMMON_INTERNAL,
        '/api_address',
        '/node_addresses',
        '/master_addresses',
        '/stack_id',
        '/cluster_id',
        '/ca_cert_ref',
        '/magnum_cert_ref',
        '/etcd_ca_cert_ref',
        '/front_proxy_ca_cert_ref',
        '/trust_id',
        '/trustee_user_name',
        '/trustee_password',
        '/trustee_user_id',
      ],
      nonRemovable: ['/cluster_template_id'],
      literalPaths: ['/labels', '/health_status_reason'],
      what: 'cluster',
    });
    const changed = changedAttributes(before, after);
    const refused = changed.filter(
      (k) => !['node_count', 'health_status', 'health_status_reason'].includes(k),
    );
    if (refused.length > 0) {
      throw new InputError(
        `cannot change cluster property(ies) ${refused.join(', ')}: only node_count, health_status and health_status_reason can be updated; use "openstack coe cluster resize" for other node groups and "openstack coe cluster upgrade" to change the template.`,
        { code: 'InvalidParameterValue' },
      );
    }
    if (changed.length === 0) return cluster.metadata.uid;
    const now = new Date(env.deps.clock.now()).toISOString();
    const ops2: TypedOp[] = [];
    let next: MagnumClusterObject = cluster;
    const healthChanged = changed.includes('health_status') || changed.includes('health_status_reason');
    if (healthChanged) {
      const hs = after.health_status;
      if (hs !== null && (typeof hs !== 'string' || !HEALTH.has(hs as HealthStatus))) {
        throw new InputError(
          `Invalid input for field/attribute health_status: value should be one of HEALTHY, UNHEALTHY, UNKNOWN (got '${JSON.stringify(hs)}').`,
          {
            code: 'Invalid',
          },
        );
      }
      const reason =
        after.health_status_reason === null
          ? null
          : toStringDict(after.health_status_reason, 'health_status_reason');
      next = stamped(
        {
          ...next,
          spec: {
            ...next.spec,
            healthStatusOverride: (hs as HealthStatus | null) ?? null,
            healthStatusReasonOverride: reason,
          },
        },
        now,
      );
    }
    if (changed.includes('node_count')) {
      const count = after.node_count;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        throw new InputError(
          `Invalid input for field/attribute node_count: it must be an integer >= 0 (got '${String(count)}').`,
          { code: 'Invalid' },
        );
      }
      if (count === 0 && !atLeast(version, 10)) {
        throw new InputError(
          'A node_count of 0 is not supported in the requested microversion; it needs 1.10 or later.',
          {
            code: 'ZeroNodeCountNotSupported',
          },
        );
      }
      requireStatus(cluster, 'complete', 'Updating');
      const worker = await defaultNodeGroup(env, cluster, 'worker');
      const problem = nodeGroupSizeProblem(env.deps.policy, count, worker.spec.name);
      if (problem) throw new InputError(problem, { code: 'NodeGroupTooLarge' });
      ops2.push({ op: 'update', object: withOperation(worker, 'UPDATE', now, { nodeCount: count }) });
      next = withOperation(next, 'UPDATE', now);
    }
    ops2.unshift({ op: 'update', object: next });
    const [saved] = (await env.store.commit(ops2)) as [MagnumClusterObject];
    if (!changed.includes('node_count')) await acknowledgeHealthOnly(env, cluster, saved);
    return cluster.metadata.uid;
  });
}

/**
 * A health-only PATCH changes the spec (the driver reads the override from there), which bumps
 * the generation; Magnum saves health changes without calling the driver, so when the cluster
 * was idle we record the new generation as observed at once and the status does not move.
 */
async function acknowledgeHealthOnly(
  env: Env,
  before: MagnumClusterObject,
  saved: MagnumClusterObject,
): Promise<void> {
  const observed = before.status.observedGeneration ?? 0;
  if (before.metadata.deletionTimestamp || observed < before.metadata.generation) return;
  await retryOnConflict(async () => {
    const cur = await env.store.get<MagnumClusterObject>(
      MagnumTypes.Cluster,
      saved.metadata.namespace,
      saved.metadata.name,
    );
    if (!cur || cur.metadata.uid !== saved.metadata.uid) return;
    if ((cur.status.observedGeneration ?? 0) >= cur.metadata.generation) return;
    if (cur.metadata.generation !== saved.metadata.generation) return; // another operation came in meanwhile
    await env.store.updateStatus({
      ...cur,
      status: { ...cur.status, observedGeneration: cur.metadata.generation },
    });
  });
}

/** Delete a cluster and mark its node groups, in one commit. */
async function deleteCluster(env: Env, caller: Caller, ident: string): Promise<void> {
  requireRole(caller, 'member', 'cluster:delete');
  const cluster = await findCluster(env, caller, ident, caller.isAdmin, true);
  const groups = env.model.nodeGroupsOf(cluster.metadata.uid).filter((g) => !g.metadata.deletionTimestamp);
  const now = new Date(env.deps.clock.now()).toISOString();
  const ops: TypedOp[] = [
    {
      op: 'delete',
      type: MagnumTypes.Cluster,
      namespace: cluster.metadata.namespace,
      name: cluster.metadata.name,
      options: { uid: cluster.metadata.uid, now },
    },
    ...groups.map((g: NodeGroupObject): TypedOp => ({
      op: 'delete',
      type: MagnumTypes.NodeGroup,
      namespace: g.metadata.namespace,
      name: g.metadata.name,
      options: { now },
    })),
  ];
  try {
    await env.store.commit(ops);
  } catch (err) {
    // a node group may have gone meanwhile; the cluster delete is what matters
    if (!(err instanceof Error && 'status' in err && err.status === 404)) throw err;
    await env.store.delete(MagnumTypes.Cluster, cluster.metadata.namespace, cluster.metadata.name, {
      uid: cluster.metadata.uid,
      now,
    });
  }
  // A cluster without finalizer (created already failed) is gone now: drop any CA it got.
  if (cluster.metadata.finalizers.length === 0 && env.deps.pki) {
    await env.deps.pki.deleteCluster({
      namespace: cluster.metadata.namespace,
      name: capiClusterName(cluster),
    });
  }
}

export function clusterRoutes(app: FastifyInstance, env: Env): void {
  app.get('/clusters', async (req, reply) => {
    const { caller, version } = stateOf(req);
    return reply.type(JSON_TYPE).send(await listClusters(env, caller, version, req.query as Query, false));
  });
  app.get('/clusters/detail', async (req, reply) => {
    const { caller, version } = stateOf(req);
    return reply.type(JSON_TYPE).send(await listClusters(env, caller, version, req.query as Query, true));
  });
  app.get<{ Params: { ident: string } }>('/clusters/:ident', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireRole(caller, 'reader', 'cluster:get');
    const c = await findCluster(env, caller, req.params.ident, caller.isAdmin);
    return reply.type(JSON_TYPE).send(clusterJson(env, c, version, true));
  });
  app.post('/clusters', async (req, reply) => {
    const { caller, version } = stateOf(req);
    const uuid = await createCluster(env, caller, version, req.body);
    return reply.code(202).send({ uuid });
  });
  app.patch<{ Params: { ident: string } }>('/clusters/:ident', async (req, reply) => {
    const { caller, version } = stateOf(req);
    const uuid = await patchCluster(env, caller, version, req.params.ident, req.body, req.query as Query);
    return reply.code(202).send({ uuid });
  });
  app.delete<{ Params: { ident: string } }>('/clusters/:ident', async (req, reply) => {
    const { caller } = stateOf(req);
    await deleteCluster(env, caller, req.params.ident);
    return reply.code(204).send();
  });
}
