import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  ConflictError,
  InputError,
  LABEL_MAGNUM_CLUSTER,
  MAGNUM_API_VERSION,
  MAGNUM_FINALIZER,
  MagnumTypes,
  nodeGroupSizeProblem,
  nodeGroupStoreName,
  type MagnumClusterObject,
  type NewObject,
  type NodeGroupObject,
  type NodeGroupSpec,
  type NodeGroupStatus,
} from '../../../domain/index.ts';
import { childLabels } from '../cluster-create.ts';
import type { TypedOp } from '../typed-store.ts';
import { requireRole, stateOf, type Caller, type Env } from '../context.ts';
import { COMMON_INTERNAL, applyMagnumPatch, changedAttributes, parsePatch } from '../json-patch.ts';
import { findCluster, findNodeGroup, nodeGroupNotFound, normalizeUuid } from '../lookup.ts';
import { atLeast, requireVersion, type Microversion } from '../microversion.ts';
import { nextLink, pageOf, param, parseListQuery, type Query } from '../pagination.ts';
import { toStringDict } from '../python-literal.ts';
import { checkResources } from '../resource-checks.ts';
import { NodeGroupCreateSchema, NodeLabelsSchema, TaintSchema, parseBody } from '../schemas.ts';
import { nodeGroupToWire } from '../wire.ts';
import { requireStatus, retryOnConflict, withOperation } from '../writes.ts';
import { z } from 'zod';

/** `/v1/clusters/{cluster}/nodegroups` (≥1.9): list, show, create (202 + full object), PATCH, delete. */

const NG_SORT_KEYS = [
  'uuid',
  'name',
  'flavor_id',
  'image_id',
  'node_count',
  'role',
  'is_default',
  'status',
  'stack_id',
];
const API = '/v1/clusters/{cluster}/nodegroups';

/** Node group names become Kubernetes object names (MachineDeployments): a lowercase RFC 1123 label. */
const NG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Magnum's NodeGroupInvalidInput (409) checks of min/node/max counts. */
function checkCounts(name: string, min: number, count: number, max: number | null): void {
  const invalid = (attr: string, expl: string) =>
    new ConflictError(`${attr} for ${name} is invalid (${expl}).`, { code: 'NodeGroupInvalidInput' });
  if (max) {
    if (max < min)
      throw invalid(
        'max_node_count',
        `min_node_count (${min}) should be less or equal to max_node_count (${max})`,
      );
    if (count > max)
      throw invalid(
        'max_node_count',
        `node_count (${count}) should be less or equal to max_node_count (${max})`,
      );
  }
  if (min > count)
    throw invalid(
      'min_node_count',
      `min_node_count (${min}) should be less or equal to node_count (${count})`,
    );
}

function checkSize(env: Env, name: string, count: number, max: number | null): void {
  const problem =
    nodeGroupSizeProblem(env.deps.policy, count, name) ??
    (max !== null ? nodeGroupSizeProblem(env.deps.policy, max, name, 'max_node_count') : undefined);
  if (problem) throw new InputError(problem, { code: 'NodeGroupTooLarge' });
}

/** The cluster of a nodegroup request: admins see every project for reads only, as Magnum's rules say. */
async function clusterFor(
  env: Env,
  caller: Caller,
  ident: string,
  read: boolean,
): Promise<MagnumClusterObject> {
  return findCluster(env, caller, ident, read && caller.isAdmin, !read);
}

function wire(env: Env, g: NodeGroupObject, c: MagnumClusterObject, version: Microversion, expand: boolean) {
  return nodeGroupToWire(g, c, version, env.deps.baseUrl(), expand);
}

async function createNodeGroup(env: Env, caller: Caller, version: Microversion, ident: string, raw: unknown) {
  requireRole(caller, 'member', 'nodegroup:create');
  const body = parseBody(NodeGroupCreateSchema, raw, 'nodegroup');
  if (!atLeast(version, 14) && (body.node_labels != null || body.node_taints != null)) {
    throw new InputError(
      'Unknown attribute for argument nodegroup: node_labels/node_taints need microversion 1.14 or later.',
      {
        code: 'UnknownAttribute',
      },
    );
  }
  const cluster = await clusterFor(env, caller, ident, false);
  if (!cluster.status.apiAddress) {
    throw new ConflictError(
      `The cluster ${cluster.metadata.name} has no API address yet, so node groups cannot be added: wait until the cluster reaches CREATE_COMPLETE and retry.`,
      { code: 'ClusterAPIAddressUnavailable' },
    );
  }
  const existing = env.model.nodeGroupsOf(cluster.metadata.uid);
  if (
    existing.some((g) => g.spec.name === body.name) ||
    (await env.store.get(
      MagnumTypes.NodeGroup,
      cluster.metadata.namespace,
      nodeGroupStoreName(cluster.metadata.uid, body.name),
    ))
  ) {
    throw new ConflictError(
      `A node group with name ${body.name} already exists in the cluster ${cluster.metadata.name}.`,
      {
        code: 'NodeGroupAlreadyExists',
      },
    );
  }
  const role = body.role ?? 'worker';
  const count = body.node_count ?? 1;
  const min = body.min_node_count ?? 0;
  const max = body.max_node_count ?? null;
  checkCounts(body.name, min, count, max);
  if (role === 'master')
    throw new InputError('Creating master nodegroups is currently not supported.', {
      code: 'CreateMasterNodeGroup',
    });
  if (!NG_NAME.test(body.name) || body.name.length > 63) {
    throw new InputError(
      `Invalid node group name ${body.name}: use lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters (it names Kubernetes objects).`,
      { code: 'InvalidName' },
    );
  }
  checkSize(env, body.name, count, max);
  if (cluster.metadata.deletionTimestamp)
    throw new InputError(`Cluster ${cluster.metadata.name} is being deleted.`, { code: 'NotSupported' });
  const template = env.model.templates.get(cluster.spec.clusterTemplateId);
  const imageId = body.image_id ?? template?.spec.imageId ?? null;
  const flavorId = body.flavor_id ?? cluster.spec.flavorId;
  await checkResources(env.deps.cloud, caller, {
    ...(body.image_id ? { image: imageId } : {}),
    ...(body.flavor_id ? { flavor: flavorId } : {}),
  });
  const given = body.labels ? toStringDict(body.labels, 'labels') : undefined;
  const uid = randomUUID();
  const now = new Date(env.deps.clock.now()).toISOString();
  const obj: NewObject<NodeGroupSpec, NodeGroupStatus> = {
    apiVersion: MAGNUM_API_VERSION,
    kind: 'NodeGroup',
    metadata: {
      name: nodeGroupStoreName(cluster.metadata.uid, body.name),
      namespace: cluster.metadata.namespace,
      uid,
      labels: { [LABEL_MAGNUM_CLUSTER]: cluster.metadata.uid },
      ownerReferences: [
        {
          apiVersion: MAGNUM_API_VERSION,
          kind: 'Cluster',
          name: cluster.metadata.name,
          uid: cluster.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: [MAGNUM_FINALIZER],
    },
    spec: {
      action: 'CREATE',
      operationId: randomUUID(),
      clusterId: cluster.metadata.uid,
      name: body.name,
      role,
      nodeCount: count,
      minNodeCount: min,
      maxNodeCount: max,
      flavorId,
      imageId,
      dockerVolumeSize: body.docker_volume_size ?? cluster.spec.dockerVolumeSize,
      labels: childLabels(cluster.spec.labels, given, body.merge_labels ?? false),
      isDefault: false,
      ...(body.node_labels ? { nodeLabels: body.node_labels } : {}),
      ...(body.node_taints
        ? {
            nodeTaints: body.node_taints.map((t) => ({
              key: t.key,
              effect: t.effect,
              ...(t.value != null ? { value: t.value } : {}),
            })),
          }
        : {}),
      id: env.model.nextNodeGroupId(),
    },
    status: {},
  };
  try {
    const [, created] = (await env.store.commit([
      { op: 'update', object: withOperation(cluster, 'UPDATE', now) },
      { op: 'create', object: obj },
    ])) as [MagnumClusterObject, NodeGroupObject];
    return wire(env, created, cluster, version, true);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'AlreadyExists') {
      throw new ConflictError(
        `A node group with name ${body.name} already exists in the cluster ${cluster.metadata.name}.`,
        {
          code: 'NodeGroupAlreadyExists',
        },
      );
    }
    throw err;
  }
}

async function patchNodeGroup(
  env: Env,
  caller: Caller,
  version: Microversion,
  ident: string,
  ngIdent: string,
  raw: unknown,
) {
  requireRole(caller, 'member', 'nodegroup:update');
  const ops = parsePatch(raw, 'nodegroup');
  return retryOnConflict(async () => {
    const cluster = await clusterFor(env, caller, ident, false);
    const group = await findNodeGroup(env, cluster, ngIdent);
    const before = wire(env, group, cluster, version, true);
    const internal = [
      ...COMMON_INTERNAL,
      '/name',
      '/cluster_id',
      '/docker_volume_size',
      '/labels',
      '/flavor_id',
      '/image_id',
      '/node_addresses',
      '/node_count',
      '/role',
      '/is_default',
      '/stack_id',
      '/status',
      '/status_reason',
      '/version',
      '/merge_labels',
      '/labels_overridden',
      '/labels_added',
      '/labels_skipped',
      ...(atLeast(version, 14) ? [] : ['/node_labels', '/node_taints']),
    ];
    const after = applyMagnumPatch(before, ops, {
      internal,
      nonRemovable: [],
      literalPaths: ['/node_labels', '/node_taints'],
      what: 'nodegroup',
    });
    const changed = changedAttributes(before, after);
    if (changed.length === 0) return before;
    const parsed = z
      .strictObject({
        min_node_count: z.number().int().min(0).nullable().optional(),
        max_node_count: z.number().int().min(0).nullable().optional(),
        node_labels: NodeLabelsSchema.nullable().optional(),
        node_taints: z.array(TaintSchema).nullable().optional(),
      })
      .safeParse(Object.fromEntries(changed.map((k) => [k, after[k] ?? null])));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.map(String).join('.');
      throw new InputError(
        `Invalid input for field/attribute ${field}: ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)} (got '${JSON.stringify(after[String(issue.path[0])])}').`,
        {
          code: 'Invalid',
        },
      );
    }
    const p = parsed.data;
    const s = group.spec;
    const min = changed.includes('min_node_count') ? (p.min_node_count ?? 0) : s.minNodeCount;
    const max = changed.includes('max_node_count') ? (p.max_node_count ?? null) : s.maxNodeCount;
    checkCounts(s.name, min, s.nodeCount, max);
    if (s.role !== 'master') checkSize(env, s.name, s.nodeCount, max);
    if ((p.node_labels || p.node_taints) && s.role === 'master') {
      throw new ConflictError(
        `node_labels and node_taints for ${s.name} are invalid (not supported on master node groups).`,
        {
          code: 'NodeGroupInvalidInput',
        },
      );
    }
    if (group.metadata.deletionTimestamp)
      throw new InputError(`Node group ${s.name} is being deleted.`, { code: 'NotSupported' });
    requireStatus(group, 'resizable', 'Updating');
    const now = new Date(env.deps.clock.now()).toISOString();
    const update: Partial<NodeGroupSpec> = { minNodeCount: min, maxNodeCount: max };
    if (changed.includes('node_labels')) update.nodeLabels = p.node_labels ?? {};
    if (changed.includes('node_taints'))
      update.nodeTaints = (p.node_taints ?? []).map((t) => ({
        key: t.key,
        effect: t.effect,
        ...(t.value != null ? { value: t.value } : {}),
      }));
    const [, saved] = (await env.store.commit([
      { op: 'update', object: withOperation(cluster, 'UPDATE', now) },
      { op: 'update', object: withOperation(group, 'UPDATE', now, update) },
    ])) as [MagnumClusterObject, NodeGroupObject];
    return wire(env, saved, cluster, version, true);
  });
}

export function nodeGroupRoutes(app: FastifyInstance, env: Env): void {
  app.get<{ Params: { ident: string } }>('/clusters/:ident/nodegroups', async (req) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 9, `GET ${API}`);
    requireRole(caller, 'reader', 'nodegroup:get_all');
    const q = parseListQuery(req.query as Query, NG_SORT_KEYS);
    const role = param(req.query as Query, 'role');
    const cluster = await clusterFor(env, caller, req.params.ident, true);
    const groups = env.model
      .nodeGroupsOf(cluster.metadata.uid)
      .filter((g) => role === undefined || g.spec.role === role)
      .map((g) => ({ id: g.metadata.uid, wire: wire(env, g, cluster, version, false), item: g }));
    const page = pageOf(groups, { ...q, ...(q.marker ? { marker: normalizeUuid(q.marker) } : {}) });
    if (!page) throw nodeGroupNotFound(q.marker ?? '');
    const next = nextLink(
      env.deps.baseUrl(),
      `clusters/${cluster.metadata.uid}/nodegroups`,
      q,
      page.length,
      page.at(-1)?.id,
      role ? { role } : {},
    );
    return { nodegroups: page.map((p) => p.wire), ...(next ? { next } : {}) };
  });

  app.get<{ Params: { ident: string; ng: string } }>('/clusters/:ident/nodegroups/:ng', async (req) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 9, `GET ${API}/{nodegroup}`);
    requireRole(caller, 'reader', 'nodegroup:get');
    const cluster = await clusterFor(env, caller, req.params.ident, true);
    const g = await findNodeGroup(env, cluster, req.params.ng);
    return wire(env, g, cluster, version, true);
  });

  app.post<{ Params: { ident: string } }>('/clusters/:ident/nodegroups', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 9, `POST ${API}`);
    const out = await retryOnConflict(() =>
      createNodeGroup(env, caller, version, req.params.ident, req.body),
    );
    return reply.code(202).send(out);
  });

  app.patch<{ Params: { ident: string; ng: string } }>(
    '/clusters/:ident/nodegroups/:ng',
    async (req, reply) => {
      const { caller, version } = stateOf(req);
      requireVersion(version, 9, `PATCH ${API}/{nodegroup}`);
      const out = await patchNodeGroup(env, caller, version, req.params.ident, req.params.ng, req.body);
      return reply.code(202).send(out);
    },
  );

  app.delete<{ Params: { ident: string; ng: string } }>(
    '/clusters/:ident/nodegroups/:ng',
    async (req, reply) => {
      const { caller, version } = stateOf(req);
      requireVersion(version, 9, `DELETE ${API}/{nodegroup}`);
      requireRole(caller, 'member', 'nodegroup:delete');
      await retryOnConflict(async () => {
        const cluster = await clusterFor(env, caller, req.params.ident, false);
        const g = await findNodeGroup(env, cluster, req.params.ng);
        if (g.spec.isDefault)
          throw new InputError('Deleting a default nodegroup is not supported.', {
            code: 'DeletingDefaultNGNotSupported',
          });
        const now = new Date(env.deps.clock.now()).toISOString();
        const ops: TypedOp[] = [
          { op: 'update', object: withOperation(cluster, 'UPDATE', now) },
          {
            op: 'delete',
            type: MagnumTypes.NodeGroup,
            namespace: g.metadata.namespace,
            name: g.metadata.name,
            options: { uid: g.metadata.uid, now },
          },
        ];
        if (!g.metadata.deletionTimestamp) await env.store.commit(ops);
      });
      return reply.code(204).send();
    },
  );
}
