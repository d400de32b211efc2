import { randomUUID } from 'node:crypto';
import {
  ANNOTATION_MAGNUM_UPDATED_AT,
  CapiLabels,
  CapiTypes,
  ConflictError,
  defaultPolicy,
  LABEL_MAGNUM_CLUSTER,
  MagnumTypes,
  NotAllowedError,
  magnumStatus,
  masterCountProblem,
  nodeGroupSizeProblem,
  nodeGroupStoreName,
  type ApiObject,
  type MagnumClusterObject,
  type MagnumStatus,
  type NodeGroupObject,
  type OperatorPolicy,
} from '../../domain/index.ts';
import type { KubeResource } from './resources.ts';
import { conflict, invalid, notFound } from './status.ts';
import type { KubeRoutesDeps } from './context.ts';

/**
 * The operator's rules on the Cluster API objects the Magnum driver builds (they carry the
 * `magnum.magnetar.io/cluster-uuid` label). The Magnum cluster is their source of truth: the
 * driver rewrites their spec from it, so a spec edit through kubectl would be silently undone.
 * Hence:
 *
 * - the replicas of a Magnum-owned MachineDeployment or KubeadmControlPlane may change (`kubectl
 *   scale`, patch, edit): the change is a Magnum resize of its node group (node_count,
 *   `UPDATE_IN_PROGRESS`), checked by the same rules as `openstack coe cluster resize` — at most
 *   10 workers, at least `min_node_count`, an odd master count — and refused with 422 Invalid
 *   otherwise;
 * - any other spec change is refused (422, pointing to the `openstack coe` command that does it);
 * - deleting one is refused (403), except Machines: `kubectl delete machine` replaces a worker
 *   (its MachineSet or the control plane creates another), as in Cluster API;
 * - labels and annotations may change, except the two labels that tie an object to its cluster.
 *
 * Objects made by hand (without the label) follow the policy's size rules only.
 */

type Stored = ApiObject<unknown, unknown>;

/** Magnum statuses in which a resize is accepted (as `openstack coe cluster resize`). */
const RESIZABLE: ReadonlySet<MagnumStatus> = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'RESUME_COMPLETE',
  'RESTORE_COMPLETE',
  'ROLLBACK_COMPLETE',
  'SNAPSHOT_COMPLETE',
  'CHECK_COMPLETE',
  'ADOPT_COMPLETE',
  'UPDATE_FAILED',
  'UPDATE_IN_PROGRESS',
]);

/** Labels that tie an object to its clusters; kubectl may not change or remove them. */
const PINNED_LABELS = [LABEL_MAGNUM_CLUSTER, CapiLabels.clusterName] as const;

/** The Magnum cluster uuid an object was built for, or undefined for objects made by hand. */
export function magnumClusterOf(obj: {
  metadata: { labels?: Record<string, string> | null };
}): string | undefined {
  return obj.metadata.labels?.[LABEL_MAGNUM_CLUSTER] || undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!sameJson(ao[k], bo[k])) return false;
  return true;
}

function objectOf(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function replicasOf(spec: unknown): number | undefined {
  const r = (spec as { replicas?: unknown } | null)?.replicas;
  return typeof r === 'number' ? r : undefined;
}

function withoutReplicas(spec: unknown): unknown {
  if (typeof spec !== 'object' || spec === null) return spec;
  const { replicas: _r, ...rest } = spec as Record<string, unknown>;
  return rest;
}

/** Kinds whose replicas are a Magnum node group's node_count. */
function isResizable(r: KubeResource): boolean {
  return r.type === CapiTypes.MachineDeployment || r.type === CapiTypes.KubeadmControlPlane;
}

/** What to tell a user who tries to change `r` through kubectl. */
function hint(r: KubeResource): string {
  switch (r.type) {
    case CapiTypes.MachineDeployment:
      return 'change the node group with openstack coe nodegroup update / cluster resize / cluster upgrade';
    case CapiTypes.KubeadmControlPlane:
    case CapiTypes.Cluster:
      return 'change the cluster with openstack coe cluster update / cluster resize / cluster upgrade';
    case CapiTypes.MachineSet:
      return 'scale its MachineDeployment (kubectl scale machinedeployment, or openstack coe cluster resize)';
    default:
      return 'it follows its Magnum cluster; use the openstack coe commands';
  }
}

/** Policy size rules for any MachineDeployment / MachineSet (node groups hold at most N workers). */
export function sizeProblems(policy: OperatorPolicy, r: KubeResource, name: string, spec: unknown): string[] {
  if (r.type !== CapiTypes.MachineDeployment && r.type !== CapiTypes.MachineSet) return [];
  const replicas = replicasOf(spec);
  if (replicas === undefined) return [];
  const problem = nodeGroupSizeProblem(policy, replicas, name, 'replica count');
  return problem ? [`spec.replicas: ${replicas}: ${problem}`] : [];
}

/** A create may not claim to be built by the Magnum driver (422). */
export function checkCreate(
  r: KubeResource,
  name: string,
  labels: Record<string, string> | null | undefined,
): void {
  if (labels && LABEL_MAGNUM_CLUSTER in labels)
    throw forbiddenField(
      r,
      name,
      `metadata.labels[${LABEL_MAGNUM_CLUSTER}]`,
      'set only by Magnum for the objects it builds',
    );
}

function forbiddenField(r: KubeResource, name: string, field: string, why: string) {
  const err = invalid(r, name, [`${field}: ${why}`]);
  const causes = [{ reason: 'FieldValueForbidden', message: `Forbidden: ${why}`, field }];
  return Object.assign(err, {
    message: `${r.kind}.${r.group} "${name}" is invalid: ${field}: Forbidden: ${why}`,
    details: { ...err.details, causes },
  });
}

/**
 * Admission of an update (PUT, PATCH, scale) of a Magnum-owned object: throws when it is not
 * allowed, and says whether the replicas change (then the write must go through
 * {@link resizeThroughMagnum}).
 */
export function admitMagnumUpdate(r: KubeResource, stored: Stored, next: Stored): { resize: boolean } {
  const name = stored.metadata.name;
  for (const key of PINNED_LABELS) {
    if (stored.metadata.labels[key] !== next.metadata.labels[key])
      throw forbiddenField(
        r,
        name,
        `metadata.labels[${key}]`,
        'ties the object to its Magnum cluster and cannot change',
      );
  }
  const resize = isResizable(r) && replicasOf(next.spec) !== replicasOf(stored.spec);
  const rest = isResizable(r)
    ? sameJson(withoutReplicas(stored.spec), withoutReplicas(next.spec))
    : sameJson(stored.spec, next.spec);
  if (!rest || (!isResizable(r) && replicasOf(next.spec) !== replicasOf(stored.spec))) {
    const cluster = stored.metadata.labels[CapiLabels.clusterName] ?? '';
    throw forbiddenField(
      r,
      name,
      'spec',
      `managed by Magnum (cluster ${cluster}); ${isResizable(r) ? 'only spec.replicas can change here; ' : ''}${hint(r)}`,
    );
  }
  return { resize };
}

/** Deleting a Magnum-owned object other than a Machine is refused (403). */
export async function admitMagnumDelete(
  deps: KubeRoutesDeps,
  r: KubeResource,
  stored: Stored,
): Promise<void> {
  const uid = magnumClusterOf(stored);
  if (!uid || r.type === CapiTypes.Machine) return;
  const mc = await deps.store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, uid);
  if (!mc) return;
  const how =
    r.type === CapiTypes.MachineDeployment
      ? `openstack coe nodegroup delete ${mc.metadata.name} ${stored.metadata.annotations['magnum.magnetar.io/nodegroup'] ?? ''}`.trimEnd()
      : r.type === CapiTypes.Cluster
        ? `openstack coe cluster delete ${mc.metadata.name}`
        : `it is deleted with its cluster (openstack coe cluster delete ${mc.metadata.name}); to replace a node, kubectl delete machine`;
  throw new NotAllowedError(
    `${r.plural}.${r.group} "${stored.metadata.name}" is forbidden: it is managed by Magnum cluster "${mc.metadata.name}": ${how}`,
    { code: 'Forbidden', details: { name: stored.metadata.name, group: r.group, kind: r.plural } },
  );
}

async function nodeGroupOf(
  deps: KubeRoutesDeps,
  r: KubeResource,
  mc: MagnumClusterObject,
  stored: Stored,
): Promise<NodeGroupObject | undefined> {
  const ns = mc.metadata.namespace;
  if (r.type === CapiTypes.MachineDeployment) {
    const ng = stored.metadata.annotations['magnum.magnetar.io/nodegroup'];
    return ng
      ? deps.store.get<NodeGroupObject>(MagnumTypes.NodeGroup, ns, nodeGroupStoreName(mc.metadata.uid, ng))
      : undefined;
  }
  const all = await deps.store.list<NodeGroupObject>(MagnumTypes.NodeGroup, { namespace: ns });
  return all.items.find((g) => g.spec.clusterId === mc.metadata.uid && g.spec.role === 'master');
}

function resizeProblem(policy: OperatorPolicy, ng: NodeGroupObject, replicas: number): string | undefined {
  const g = ng.spec;
  if (g.role === 'master') return masterCountProblem(policy, replicas);
  if (replicas < g.minNodeCount)
    return `node group ${g.name} holds at least min_node_count = ${g.minNodeCount} nodes`;
  if (g.maxNodeCount !== null && g.maxNodeCount > 0 && replicas > g.maxNodeCount)
    return `node group ${g.name} holds at most max_node_count = ${g.maxNodeCount} nodes`;
  return nodeGroupSizeProblem(policy, replicas, g.name);
}

function operation<T extends MagnumClusterObject | NodeGroupObject>(
  obj: T,
  now: string,
  spec: Partial<T['spec']>,
): T {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [ANNOTATION_MAGNUM_UPDATED_AT]: now },
    },
    spec: { ...obj.spec, ...spec, action: 'UPDATE', operationId: randomUUID() },
  };
}

/**
 * Write `next` (a Magnum-owned MachineDeployment or KubeadmControlPlane whose replicas differ
 * from `stored`) as a Magnum resize: the node group's node_count, the cluster's UPDATE operation
 * and the object itself in one atomic commit, after the resize rules. Retries when the driver
 * wrote in between (unless the caller pinned a resourceVersion: then 409).
 */
export async function resizeThroughMagnum(
  deps: KubeRoutesDeps,
  r: KubeResource,
  stored: Stored,
  next: Stored,
  options: { dryRun: boolean; pinned: boolean },
): Promise<Stored> {
  const name = stored.metadata.name;
  const replicas = replicasOf(next.spec) ?? 1;
  for (let attempt = 0; ; attempt++) {
    const current =
      attempt === 0 ? stored : await deps.store.get<Stored>(r.type, stored.metadata.namespace, name);
    if (!current) throw notFound(r, name);
    const uid = magnumClusterOf(current)!;
    const mc = await deps.store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, uid);
    const ng = mc ? await nodeGroupOf(deps, r, mc, current) : undefined;
    if (!mc || !ng) throw conflict(r, name, 'its Magnum cluster or node group no longer exists');
    const problem = resizeProblem(deps.policy ?? defaultPolicy, ng, replicas);
    if (problem) throw invalid(r, name, [`spec.replicas: ${replicas}: ${problem}`]);
    if (mc.metadata.deletionTimestamp || ng.metadata.deletionTimestamp)
      throw conflict(
        r,
        name,
        `Magnum ${mc.metadata.deletionTimestamp ? `cluster ${mc.metadata.name}` : `node group ${ng.spec.name}`} is being deleted`,
      );
    const status = magnumStatus(mc);
    if (!RESIZABLE.has(status))
      throw conflict(
        r,
        name,
        `Magnum cluster ${mc.metadata.name} is ${status}; resize it once it reaches a *_COMPLETE status (openstack coe cluster show ${mc.metadata.name})`,
      );
    const write: Stored = {
      ...next,
      metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion },
      spec: { ...objectOf(current === stored ? next.spec : current.spec), replicas },
    };
    if (current !== stored && !sameJson(withoutReplicas(current.spec), withoutReplicas(stored.spec))) {
      // The driver changed the spec since the request was read: the caller's view is stale.
      throw conflict(r, name);
    }
    if (options.dryRun) return write;
    const now = new Date(deps.clock.now()).toISOString();
    const toRemove = { ...(mc.spec.nodesToRemove ?? {}) };
    delete toRemove[ng.metadata.uid];
    try {
      const [, , written] = await deps.store.commit([
        { op: 'update', object: operation(mc, now, { nodesToRemove: toRemove }) },
        { op: 'update', object: operation(ng, now, { nodeCount: replicas }) },
        { op: 'update', object: write },
      ]);
      return written as Stored;
    } catch (err) {
      if (err instanceof ConflictError && err.code === 'Conflict' && !options.pinned && attempt < 5) continue;
      if (err instanceof ConflictError) throw conflict(r, name);
      throw err;
    }
  }
}
