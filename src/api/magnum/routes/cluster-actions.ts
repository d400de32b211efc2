import type { FastifyInstance } from 'fastify';
import {
  ConflictError,
  InputError,
  masterCountProblem,
  nodeGroupSizeProblem,
  templateName,
  upgradePathProblem,
  type MagnumClusterObject,
} from '../../../domain/index.ts';
import type { TypedOp } from '../typed-store.ts';
import { requireRole, stateOf, type Env } from '../context.ts';
import { defaultNodeGroup, findCluster, findNodeGroup, findTemplate } from '../lookup.ts';
import { atLeast, formatVersion, requireVersion } from '../microversion.ts';
import { ResizeSchema, UpgradeSchema, parseBody } from '../schemas.ts';
import { requireStatus, retryOnConflict, withOperation } from '../writes.ts';

/** `POST /v1/clusters/{id}/actions/resize` (≥1.7) and `/actions/upgrade` (≥1.8). */
export function clusterActionRoutes(app: FastifyInstance, env: Env): void {
  app.post<{ Params: { ident: string } }>('/clusters/:ident/actions/resize', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 7, 'POST /v1/clusters/{cluster}/actions/resize');
    requireRole(caller, 'member', 'cluster:resize');
    const body = parseBody(ResizeSchema, req.body, 'cluster resize request');
    if (body.node_count === 0 && !atLeast(version, 10)) {
      throw new InputError(
        'Resizing a node group to zero is not supported in the requested microversion; it needs 1.10 or later.',
        {
          code: 'ZeroNodeCountNotSupported',
        },
      );
    }
    const uuid = await retryOnConflict(async () => {
      // Magnum has no all-projects rule for resize: other projects' clusters are not found.
      const cluster = await findCluster(env, caller, req.params.ident, false, true);
      const group = body.nodegroup
        ? await findNodeGroup(env, cluster, body.nodegroup)
        : await defaultNodeGroup(env, cluster, 'worker');
      const g = group.spec;
      if (g.role === 'master') {
        const problem = masterCountProblem(env.deps.policy, body.node_count);
        if (problem) throw new InputError(problem, { code: 'MasterNGSizeInvalid' });
      } else {
        if (
          body.node_count < g.minNodeCount ||
          (g.maxNodeCount !== null && g.maxNodeCount > 0 && body.node_count > g.maxNodeCount)
        ) {
          throw new InputError(
            `Resizing ${g.name} outside the allowed range: min_node_count = ${g.minNodeCount}, max_node_count = ${g.maxNodeCount ?? 'None'}`,
            { code: 'NGResizeOutBounds' },
          );
        }
        const problem = nodeGroupSizeProblem(env.deps.policy, body.node_count, g.name);
        if (problem) throw new InputError(problem, { code: 'NodeGroupTooLarge' });
      }
      if (group.metadata.deletionTimestamp) {
        throw new InputError(`Node group ${g.name} is being deleted and cannot be resized.`, {
          code: 'NotSupported',
        });
      }
      requireStatus(cluster, 'resizable', 'Resizing');
      const now = new Date(env.deps.clock.now()).toISOString();
      const toRemove = { ...(cluster.spec.nodesToRemove ?? {}) };
      if (body.nodes_to_remove && body.nodes_to_remove.length > 0)
        toRemove[group.metadata.uid] = body.nodes_to_remove;
      else delete toRemove[group.metadata.uid];
      const ops: TypedOp[] = [
        { op: 'update', object: withOperation(cluster, 'UPDATE', now, { nodesToRemove: toRemove }) },
        { op: 'update', object: withOperation(group, 'UPDATE', now, { nodeCount: body.node_count }) },
      ];
      await env.store.commit(ops);
      return cluster.metadata.uid;
    });
    return reply.code(202).send({ uuid });
  });

  app.post<{ Params: { ident: string } }>('/clusters/:ident/actions/upgrade', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 7, 'POST /v1/clusters/{cluster}/actions/upgrade');
    if (!atLeast(version, 8)) {
      throw new InputError(
        `Upgrading a cluster is not supported in microversion ${formatVersion(version)}; it needs 1.8 or later.`,
        {
          code: 'ClusterUpgradeNotSupported',
        },
      );
    }
    requireRole(caller, 'member', 'cluster:upgrade');
    const body = parseBody(UpgradeSchema, req.body, 'cluster upgrade request');
    const uuid = await retryOnConflict(async () => {
      const cluster: MagnumClusterObject = await findCluster(
        env,
        caller,
        req.params.ident,
        caller.isAdmin,
        true,
      );
      const target = findTemplate(env, caller, body.cluster_template);
      if (body.nodegroup) {
        const ng = await findNodeGroup(env, cluster, body.nodegroup);
        if (!ng.spec.isDefault && target.metadata.uid !== cluster.spec.clusterTemplateId) {
          const current = env.model.templates.get(cluster.spec.clusterTemplateId);
          throw new ConflictError(
            `Cluster Template is not valid for upgrade: Nodegroup ${ng.spec.name} can be upgraded only to match cluster's template (${current ? templateName(current) : cluster.spec.clusterTemplateId}).`,
            { code: 'InvalidClusterTemplateForUpgrade' },
          );
        }
      }
      requireStatus(cluster, 'complete', 'Upgrading');
      const current = env.model.templates.get(cluster.spec.clusterTemplateId);
      const fromTag = cluster.spec.labels.kube_tag ?? current?.spec.labels.kube_tag;
      const toTag = target.spec.labels.kube_tag;
      const problem = upgradePathProblem(fromTag, toTag);
      if (problem) throw new InputError(problem, { code: 'InvalidUpgradePath' });
      const now = new Date(env.deps.clock.now()).toISOString();
      const labels = { ...cluster.spec.labels, ...(toTag ? { kube_tag: toTag } : {}) };
      const ops: TypedOp[] = [
        {
          op: 'update',
          object: withOperation(cluster, 'UPDATE', now, { clusterTemplateId: target.metadata.uid, labels }),
        },
      ];
      // The whole cluster moves to the new template, as the Cluster API drivers do: every node
      // group gets the template's image and Kubernetes version.
      for (const g of env.model.nodeGroupsOf(cluster.metadata.uid)) {
        if (g.metadata.deletionTimestamp) continue;
        const fresh = await findNodeGroup(env, cluster, g.metadata.uid);
        const ngLabels = { ...fresh.spec.labels, ...(toTag ? { kube_tag: toTag } : {}) };
        ops.push({
          op: 'update',
          object: withOperation(fresh, 'UPDATE', now, { imageId: target.spec.imageId, labels: ngLabels }),
        });
      }
      await env.store.commit(ops);
      return cluster.metadata.uid;
    });
    return reply.code(202).send({ uuid });
  });
}
