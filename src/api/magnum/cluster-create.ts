import { randomUUID } from 'node:crypto';
import {
  ConflictError,
  InputError,
  LABEL_MAGNUM_CLUSTER,
  MAGNUM_API_VERSION,
  MAGNUM_FINALIZER,
  MagnumTypes,
  NotAllowedError,
  masterCountProblem,
  missingFieldsReason,
  missingRequiredFields,
  nodeGroupSizeProblem,
  nodeGroupStoreName,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type MagnumClusterSpec,
  type MagnumClusterStatus,
  type NewObject,
  type NodeGroupSpec,
  type NodeGroupStatus,
  type QuotaObject,
} from '../../domain/index.ts';
import type { Caller, Env } from './context.ts';
import { findTemplate } from './lookup.ts';
import { atLeast, type Microversion } from './microversion.ts';
import { generateName } from './names.ts';
import { toStringDict } from './python-literal.ts';
import { checkResources } from './resource-checks.ts';
import { ClusterCreateSchema, parseBody } from './schemas.ts';

/**
 * `POST /v1/clusters`: Magnum's validations in its order, the operator policy, then one store
 * commit with the cluster and its `default-master` and `default-worker` node groups, so no
 * half-written cluster ever exists and a read right after the 202 says `CREATE_IN_PROGRESS`
 * (or `CREATE_FAILED` when the policy's required options were missing).
 */

/** Store name of a project's quota row for a resource. */
export function quotaStoreName(projectId: string, resource: string): string {
  return `${projectId}.${resource}`;
}

/** The project's cluster limit: its quota row, else the policy default. */
export async function clusterLimit(env: Env, projectId: string): Promise<number> {
  const q = await env.store.get<QuotaObject>(
    MagnumTypes.Quota,
    projectId,
    quotaStoreName(projectId, 'Cluster'),
  );
  return q?.spec.hardLimit ?? env.deps.policy.defaultClusterQuota;
}

/** Labels of a new child: the parent's when none given, merged over them with `merge_labels`, else only the given ones. */
export function childLabels(
  parent: Record<string, string>,
  given: Record<string, string> | undefined,
  merge: boolean,
): Record<string, string> {
  if (!given || Object.keys(given).length === 0) return { ...parent };
  return merge ? { ...parent, ...given } : { ...given };
}

export async function createCluster(
  env: Env,
  caller: Caller,
  version: Microversion,
  rawBody: unknown,
): Promise<string> {
  const { policy } = env.deps;
  const { store } = env;
  if (!caller.isMember) {
    throw new NotAllowedError(
      `Policy doesn't allow cluster:create to be performed: it needs the member role in project ${caller.projectId}.`,
      {
        code: 'PolicyNotAuthorized',
      },
    );
  }
  if (policy.serviceAccountRequired && !caller.auth.isServiceAccount) {
    throw new NotAllowedError(
      `Clusters must be created by a service account, not by the personal account ${caller.auth.userName}: authenticate as a service account of project ${caller.auth.projectName ?? caller.projectId} and retry. A cluster must not depend on a person's account, which may be removed one day.`,
      { code: 'ServiceAccountRequired' },
    );
  }
  const body = parseBody(ClusterCreateSchema, rawBody, 'cluster');
  const masterCount = body.master_count ?? 1;
  const nodeCount = body.node_count ?? 1;
  if (nodeCount === 0 && !atLeast(version, 10)) {
    throw new InputError(
      'A node_count of 0 is not supported in the requested microversion; it needs 1.10 or later.',
      {
        code: 'ZeroNodeCountNotSupported',
      },
    );
  }

  const limit = await clusterLimit(env, caller.projectId);
  if ((await store.count(MagnumTypes.Cluster, caller.projectId)) >= limit) {
    throw new NotAllowedError(
      `Resource limit exceeded: You have reached the maximum clusters per project, ${limit}. You may delete a cluster to make room for a new one.`,
      { code: 'QuotaExceeded' },
    );
  }

  let template: ClusterTemplateObject | undefined;
  if (body.cluster_template_id) {
    try {
      template = findTemplate(env, caller, body.cluster_template_id);
    } catch (err) {
      // Magnum answers a missing template on cluster create with 400, not 404.
      if (err instanceof Error && 'status' in err && err.status === 404) {
        throw new InputError(`ClusterTemplate ${body.cluster_template_id} could not be found.`, {
          code: 'ClusterTemplateNotFound',
        });
      }
      throw err;
    }
    if (template.spec.hidden && !caller.isAdmin) {
      throw new NotAllowedError(
        `Cluster template ${body.cluster_template_id} is hidden; only an administrator can create clusters from it.`,
        {
          code: 'ClusterTemplateHidden',
        },
      );
    }
  }
  const ts = template?.spec;
  const dockerVolumeSize = body.docker_volume_size ?? ts?.dockerVolumeSize ?? null;
  if (ts?.dockerStorageDriver === 'devicemapper' && (dockerVolumeSize === null || dockerVolumeSize < 3)) {
    throw new InputError(
      `docker volume size ${dockerVolumeSize ?? 'None'} GB is not valid, expecting minimum value 3GB for devicemapper storage`,
      {
        code: 'InvalidParameterValue',
      },
    );
  }
  const masterProblem = masterCountProblem(policy, masterCount);
  if (masterProblem) throw new InputError(masterProblem, { code: 'MasterNGSizeInvalid' });
  const workerProblem = nodeGroupSizeProblem(policy, nodeCount, 'default-worker');
  if (workerProblem) throw new InputError(workerProblem, { code: 'NodeGroupTooLarge' });

  const masterLbEnabled = policy.requireMasterLoadBalancer
    ? true
    : (body.master_lb_enabled ?? ts?.masterLbEnabled ?? false);
  if (masterCount > 1 && !masterLbEnabled) {
    throw new InputError('master_count must be 1 when master_lb_enabled is False', {
      code: 'InvalidParameterValue',
    });
  }

  const given = body.labels ? toStringDict(body.labels, 'labels') : undefined;
  const labels = childLabels(ts?.labels ?? {}, given, body.merge_labels ?? false);
  const spec: MagnumClusterSpec = {
    action: 'CREATE',
    operationId: randomUUID(),
    clusterTemplateId: template?.metadata.uid ?? '',
    keypair: body.keypair ?? ts?.keypairId ?? null,
    dockerVolumeSize,
    labels,
    masterFlavorId: body.master_flavor_id ?? ts?.masterFlavorId ?? null,
    flavorId: body.flavor_id ?? ts?.flavorId ?? null,
    fixedNetwork: body.fixed_network ?? ts?.fixedNetwork ?? null,
    fixedSubnet: body.fixed_subnet ?? ts?.fixedSubnet ?? null,
    floatingIpEnabled: body.floating_ip_enabled ?? ts?.floatingIpEnabled ?? true,
    masterLbEnabled,
    createTimeout: body.create_timeout ?? policy.createTimeoutMinutes,
    discoveryUrl: body.discovery_url ?? null,
    userId: caller.userId,
  };

  await checkResources(env.deps.cloud, caller, {
    image: ts?.imageId,
    flavor: spec.flavorId,
    masterFlavor: spec.masterFlavorId,
    keypair: spec.keypair,
    externalNetwork: ts?.externalNetworkId,
    fixedNetwork: spec.fixedNetwork,
    fixedSubnet: spec.fixedSubnet,
  });

  const missing = missingRequiredFields(policy, body);
  let status: MagnumClusterStatus = {};
  if (missing.length > 0) {
    spec.missingRequiredFields = missing;
    // Accepted, but already failed: the driver leaves such clusters alone.
    status = {
      observedGeneration: 1,
      observedAction: 'CREATE',
      outcome: 'Failed',
      reason: missingFieldsReason(missing),
    };
  }
  const finalizers = missing.length > 0 ? [] : [MAGNUM_FINALIZER];
  const uid = randomUUID();
  const name = body.name ?? (await freeGeneratedName(env, caller.projectId));

  const cluster: NewObject<MagnumClusterSpec, MagnumClusterStatus> = {
    apiVersion: MAGNUM_API_VERSION,
    kind: 'Cluster',
    metadata: { name, namespace: caller.projectId, uid, finalizers },
    spec,
    status,
  };
  const group = (role: 'master' | 'worker', count: number): NewObject<NodeGroupSpec, NodeGroupStatus> => {
    const ngName = `default-${role}`;
    const minFromLabel = role === 'worker' ? Number(labels.min_node_count) : NaN;
    return {
      apiVersion: MAGNUM_API_VERSION,
      kind: 'NodeGroup',
      metadata: {
        name: nodeGroupStoreName(uid, ngName),
        namespace: caller.projectId,
        labels: { [LABEL_MAGNUM_CLUSTER]: uid },
        ownerReferences: [
          {
            apiVersion: MAGNUM_API_VERSION,
            kind: 'Cluster',
            name,
            uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        finalizers,
      },
      spec: {
        action: 'CREATE',
        operationId: randomUUID(),
        clusterId: uid,
        name: ngName,
        role,
        nodeCount: count,
        minNodeCount: Number.isInteger(minFromLabel) && minFromLabel >= 0 ? minFromLabel : 0,
        maxNodeCount: null,
        flavorId: role === 'master' ? spec.masterFlavorId : spec.flavorId,
        imageId: ts?.imageId ?? null,
        dockerVolumeSize,
        labels: { ...labels },
        isDefault: true,
        id: env.model.nextNodeGroupId(),
      },
      status: missing.length > 0 ? { ...status } : {},
    };
  };
  try {
    await store.commit([
      { op: 'create', object: cluster },
      { op: 'create', object: group('master', masterCount) },
      { op: 'create', object: group('worker', nodeCount) },
    ]);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'AlreadyExists') {
      throw new ConflictError(
        `A cluster with name ${name} already exists in project ${caller.projectId}. Cluster names are unique within a project (a cluster being deleted keeps its name until it is gone); choose another name.`,
        { code: 'ClusterAlreadyExists' },
      );
    }
    throw err;
  }
  return uid;
}

async function freeGeneratedName(env: Env, projectId: string): Promise<string> {
  for (let i = 0; i < 20; i++) {
    const n = generateName('cluster');
    if (!(await env.store.get<MagnumClusterObject>(MagnumTypes.Cluster, projectId, n))) return n;
  }
  return `cluster-${randomUUID().slice(0, 8)}`;
}
