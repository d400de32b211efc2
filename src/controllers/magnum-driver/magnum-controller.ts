import {
  CapiAnnotations,
  CapiTypes,
  LABEL_MAGNUM_CLUSTER,
  MAGNUM_FINALIZER,
  MagnumTypes,
  kubeMinor,
  type ApiObject,
  type CapiClusterObject,
  type MachineDeploymentObject,
  type MachineObject,
  type MagnumClusterObject,
  type MagnumClusterStatus,
  type NodeGroupObject,
  type NodeGroupStatus,
  type OpenStackClusterObject,
} from '../../domain/index.ts';
import type { Env } from '../common/env.ts';
import { shortHash } from '../common/hash.ts';
import type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../common/runtime-types.ts';
import { deleteObject, iso, removeFinalizer, writeObject, writeStatus } from '../common/writes.ts';
import { machineMatchesNode } from '../machine-set/ms-deletion.ts';
import { preChangeSnapshot } from '../backup/pre-change-snapshot.ts';
import { applyObject } from './magnum-apply.ts';
import { cloudErrorMessage, isTerminalCloudError } from '../common/cloud-errors.ts';
import { checkReferences, ensureKeypairCopy } from './magnum-checks.ts';
import { reconcileMagnumDelete } from './magnum-delete.ts';
import { desiredVersion, findTemplate, isMaster, magnumNames, type MagnumNames } from './magnum-names.ts';
import {
  addressesOf,
  controlPlaneAt,
  exhaustedServerErrors,
  groupMachines,
  observeGroup,
  readClusterView,
  type ClusterView,
} from './magnum-observe.ts';
import { RenderCache, type DesiredCluster } from './magnum-render.ts';
import {
  clusterVerdict,
  createTimedOut,
  groupVerdict,
  healthOf,
  infraVerdict,
  type Verdict,
} from './magnum-status.ts';
import { healthCheckForMagnum, machineForMagnum, oscForMagnum } from '../common/views.ts';

/** Annotation on the CAPI Cluster: `<generation key>@<time>` of the operation in progress. */
export const OPERATION_ANNOTATION = 'magnum.magnetar.io/operation';
/** How many Magnum cluster uids the driver remembers the name of before it starts over. */
const MAX_KNOWN_CLUSTERS = 50_000;

/** Annotation on the CAPI Cluster: the operation key whose references were checked. */
const CHECKED_ANNOTATION = 'magnum.magnetar.io/checked';

/**
 * The Magnum driver: one Magnum cluster ⇄ a CAPI Cluster, an OpenStackCluster, a
 * KubeadmControlPlane (`default-master`) and one MachineDeployment per worker node group. It
 * checks references before building, writes the CAPI objects (resize with `nodes_to_remove`,
 * node group create/delete/flavor change, upgrades control plane first), and projects their
 * conditions back onto the Magnum status of the cluster and its node groups.
 */
export function magnumClusterReconciler(env: Env): Reconciler {
  // A uid always names the same cluster, so each is looked up once, not on every event of its
  // objects; a cluster deleted since maps to a key whose reconcile finds nothing.
  const refs = new Map<string, ObjectRef>();
  const toMagnum = async (obj: ApiObject): Promise<ObjectRef[]> => {
    const uid = obj.metadata.labels[LABEL_MAGNUM_CLUSTER];
    if (!uid) return [];
    const known = refs.get(uid);
    if (known) return [known];
    const mc = await env.store.getByUid(MagnumTypes.Cluster, uid);
    if (!mc) return [];
    if (refs.size >= MAX_KNOWN_CLUSTERS) refs.clear();
    const ref = { namespace: mc.metadata.namespace, name: mc.metadata.name };
    refs.set(uid, ref);
    return [ref];
  };
  const renders = new RenderCache();
  return {
    name: 'magnum-driver',
    coalesceMs: env.settings.coalesceMs,
    type: MagnumTypes.Cluster,
    watches: [
      { type: MagnumTypes.NodeGroup, map: toMagnum },
      { type: CapiTypes.Cluster, map: toMagnum },
      { type: CapiTypes.OpenStackCluster, map: toMagnum, view: oscForMagnum },
      { type: CapiTypes.KubeadmControlPlane, map: toMagnum },
      { type: CapiTypes.MachineDeployment, map: toMagnum },
      { type: CapiTypes.Machine, map: toMagnum, view: machineForMagnum },
      { type: CapiTypes.MachineHealthCheck, map: toMagnum, view: healthCheckForMagnum },
    ],
    reconcile: (ctx, ref) => reconcileMagnum(env, ctx, ref, renders),
  };
}

interface Pending {
  cluster: boolean;
  groups: NodeGroupObject[];
  deleting: NodeGroupObject[];
  /** Identifies the set of operations in progress (cluster and node group generations). */
  key: string;
}

async function reconcileMagnum(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
  renders: RenderCache,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let mc = await store.get<MagnumClusterObject>(MagnumTypes.Cluster, ref.namespace, ref.name);
  if (!mc) return;
  const ns = mc.metadata.namespace;
  const allGroups = await env.cache.listByCluster<NodeGroupObject>(
    MagnumTypes.NodeGroup,
    ns,
    mc.metadata.uid,
  );
  const names = magnumNames(mc);
  if (mc.metadata.deletionTimestamp) {
    renders.forget(mc.metadata.uid);
    return reconcileMagnumDelete(env, ctx, mc, allGroups, names);
  }
  // Created without required fields: already CREATE_FAILED by the API; nothing to build.
  if (mc.spec.missingRequiredFields?.length) return;
  if (!mc.metadata.finalizers.includes(MAGNUM_FINALIZER)) {
    mc = await store.update<MagnumClusterObject>({
      ...mc,
      metadata: { ...mc.metadata, finalizers: [...mc.metadata.finalizers, MAGNUM_FINALIZER] },
    });
  }
  const groups = allGroups.filter((g) => !g.metadata.deletionTimestamp).sort((a, b) => a.spec.id - b.spec.id);
  const pending: Pending = {
    cluster: mc.metadata.generation > (mc.status.observedGeneration ?? 0),
    groups: groups.filter((g) => g.metadata.generation > (g.status.observedGeneration ?? 0)),
    deleting: allGroups.filter((g) => g.metadata.deletionTimestamp),
    key: '',
  };
  pending.key = shortHash(
    [mc.metadata.generation, ...groups.map((g) => [g.metadata.uid, g.metadata.generation])],
    10,
  );
  const busy = pending.cluster || pending.groups.length > 0 || pending.deleting.length > 0;
  const now = env.deps.clock.now();

  const template = await findTemplate(store, mc);
  if (!template) {
    if (busy)
      await failOperations(
        env,
        ctx,
        mc,
        pending,
        `Cluster template ${mc.spec.clusterTemplateId} could not be found`,
      );
    return;
  }
  const version = desiredVersion(mc, template, env.settings.defaultKubernetesVersion);
  let capi = await store.get<CapiClusterObject>(CapiTypes.Cluster, ns, names.capi);
  let view = await readClusterView(env, ns, names);

  // Check references once per operation, before building anything for it.
  if (busy && capi?.metadata.annotations[CHECKED_ANNOTATION] !== pending.key) {
    const cloud = await env.deps.cloud(ns);
    let problem: string | undefined;
    try {
      problem =
        versionProblem(view, version) ??
        (await checkReferences(cloud, env.lookups, mc, template, groups)) ??
        (await ensureKeypairCopy(env.deps, cloud, mc, template));
    } catch (err) {
      // A refusal that will not fix itself (quota, bad request, policy) is the operation's
      // reason, in the cloud's words; anything else is retried.
      if (!isTerminalCloudError(err)) throw err;
      problem = cloudErrorMessage(err);
    }
    if (problem) {
      await failOperations(env, ctx, mc, pending, problem);
      return;
    }
  }

  // An upgrade or a control-plane scale-down waits for its etcd snapshot (ADR 0007).
  if (busy) {
    const master = groups.find((g) => isMaster(g));
    const snap = await preChangeSnapshot(store, env.deps.backup, {
      cluster: mc,
      kcp: view.kcp,
      version,
      masterCount: master?.spec.nodeCount,
      operationKey: pending.key,
      now,
    });
    if (snap.action === 'fail') {
      await failOperations(env, ctx, mc, pending, snap.reason);
      return;
    }
    if (snap.action === 'wait') {
      await writeStatus(store, mc, { ...mc.status, reason: snap.reason });
      return { requeueAfterMs: 1000 };
    }
  }

  // Node groups being deleted: remove their deployment, then let them go.
  for (const ng of pending.deleting) {
    const group = names.group(ng.spec.name);
    await deleteObject(store, CapiTypes.MachineHealthCheck, ns, group);
    const gone = await deleteObject(store, CapiTypes.MachineDeployment, ns, group);
    if (gone && groupMachines(view, ng).length === 0) {
      await deleteObject(store, CapiTypes.KubeadmConfigTemplate, ns, group);
      await removeFinalizer(store, ng, MAGNUM_FINALIZER);
    }
  }

  // Build or update the CAPI objects.
  const failedIdle = !busy && mc.status.outcome === 'Failed';
  const desired = renders.render({
    cluster: mc,
    template,
    nodeGroups: groups,
    names,
    version,
    settings: env.settings,
    pauseHealthChecks: failedIdle,
  });
  if (!failedIdle) {
    capi = await applyAll(
      env,
      ctx,
      mc,
      desired,
      view,
      names,
      version,
      capi,
      busy ? pending.key : undefined,
      now,
    );
    view = await readClusterView(env, ns, names);
  }

  // Project the CAPI objects onto the Magnum status.
  const osc = await store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, ns, names.capi);
  const opStart = capi?.metadata.annotations[OPERATION_ANNOTATION]?.split('@')[1];
  const infra = infraVerdict(osc, capi);
  const perGroup = groups.map((ng) => {
    const machines = groupMachines(view, ng);
    const checks = view.healthChecks.filter(
      (h) => h.metadata.name === (isMaster(ng) ? names.controlPlane : names.group(ng.spec.name)),
    );
    const exhausted = busy
      ? exhaustedServerErrors(checks, machines, opStart, env.settings.serverErrorRetries)
      : undefined;
    const obs = observeGroup(view, ng, desired, version, names, exhausted);
    return { ng, verdict: groupVerdict(obs), machines };
  });
  let verdict = clusterVerdict(
    infra,
    perGroup.map((g) => ({ name: g.ng.spec.name, verdict: g.verdict })),
  );
  if (verdict.state === 'Complete' && pending.deleting.length > 0) {
    verdict = {
      state: 'InProgress',
      reason: `deleting node group(s) ${pending.deleting.map((g) => g.spec.name).join(', ')}`,
    };
  }
  let requeueAfterMs: number | undefined;
  if (pending.cluster && mc.spec.action === 'CREATE' && verdict.state === 'InProgress') {
    const minutes = mc.spec.createTimeout > 0 ? mc.spec.createTimeout : env.deps.policy.createTimeoutMinutes;
    const created = Date.parse(mc.metadata.creationTimestamp);
    const timedOut = createTimedOut(created, minutes, now, verdict.reason);
    if (timedOut) verdict = { state: 'Failed', reason: timedOut };
    else requeueAfterMs = created + minutes * 60_000 - now;
  }

  for (const g of perGroup) await writeGroupStatus(ctx, g.ng, g.verdict, verdict, g.machines, version, names);
  await writeClusterStatus(env, ctx, mc, pending, verdict, view, capi, osc, version, names, perGroup);
  return requeueAfterMs === undefined ? undefined : { requeueAfterMs: Math.max(1000, requeueAfterMs) };
}

/** Minor versions must move one at a time and never back. */
function versionProblem(view: ClusterView, version: string): string | undefined {
  const current = view.kcp?.spec.version;
  if (!current) return undefined;
  const from = kubeMinor(current);
  const to = kubeMinor(version);
  if (from === undefined || to === undefined) return undefined;
  if (to < from) return `Cannot downgrade Kubernetes from ${current} to ${version}`;
  if (to > from + 1)
    return `Cannot upgrade Kubernetes from ${current} to ${version}: upgrade one minor version at a time (next: v1.${from + 1}.x)`;
  return undefined;
}

async function applyAll(
  env: Env,
  ctx: ReconcileContext,
  mc: MagnumClusterObject,
  desired: DesiredCluster,
  view: ClusterView,
  names: MagnumNames,
  version: string,
  capi: CapiClusterObject | undefined,
  opKey: string | undefined,
  now: number,
): Promise<CapiClusterObject> {
  const { store } = ctx;
  // Templates first: the objects below refer to them.
  await applyObject(store, desired.controlPlaneTemplate);
  for (const g of desired.groups) {
    await applyObject(store, g.infraTemplate);
    await applyObject(store, g.configTemplate);
  }
  const c = desired.cluster;
  const ann = c.object.metadata.annotations!;
  const prevOp = capi?.metadata.annotations[OPERATION_ANNOTATION];
  if (opKey) {
    ann[OPERATION_ANNOTATION] = prevOp?.startsWith(`${opKey}@`) ? prevOp : `${opKey}@${iso(now)}`;
    ann[CHECKED_ANNOTATION] = opKey;
  } else {
    if (prevOp) ann[OPERATION_ANNOTATION] = prevOp;
    const checked = capi?.metadata.annotations[CHECKED_ANNOTATION];
    if (checked) ann[CHECKED_ANNOTATION] = checked;
  }
  const stored = await applyObject<CapiClusterObject>(store, c, {
    keep: ['controlPlaneEndpoint', 'paused'],
    existing: capi,
    lookedUp: true,
  });
  await applyObject(store, desired.infraCluster, { keep: ['controlPlaneEndpoint'] });

  // nodes_to_remove: mark the named machines before any replica count drops.
  const byUid = new Map(desired.groups.map((g) => [g.nodeGroup.metadata.uid, g.nodeGroup]));
  for (const [ngUid, nodes] of Object.entries(mc.spec.nodesToRemove ?? {})) {
    const ng = byUid.get(ngUid);
    if (!ng || nodes.length === 0) continue;
    for (const m of groupMachines(view, ng)) {
      if (m.metadata.deletionTimestamp || CapiAnnotations.deleteMachine in m.metadata.annotations) continue;
      if (machineMatchesNode(m, nodes, m.metadata.name)) {
        await writeObject(store, m, {
          ...m,
          metadata: {
            ...m.metadata,
            annotations: { ...m.metadata.annotations, [CapiAnnotations.deleteMachine]: 'yes' },
          },
        });
      }
    }
  }

  // `rollout` is kept: a restore sets `rollout.after` to rebuild the control plane from a snapshot.
  await applyObject(store, desired.controlPlane, { keep: ['rollout'] });
  // Workers follow the control plane: while it is not yet at the new version, a deployment keeps
  // its machine template (only its size changes).
  const cpReady = controlPlaneAt(view, version);
  for (const g of desired.groups) {
    const existing = view.mds.get(g.machineDeployment.object.metadata.name!);
    const d = g.machineDeployment;
    if (existing && !cpReady && existing.spec.template.spec.version !== version) {
      const spec = {
        ...(d.object.spec as MachineDeploymentObject['spec']),
        template: existing.spec.template,
      };
      await applyObject(store, { type: d.type, object: { ...d.object, spec } });
    } else {
      await applyObject(store, d);
    }
  }
  if (desired.controlPlaneHealthCheck) await applyObject(store, desired.controlPlaneHealthCheck);
  for (const g of desired.groups) if (g.healthCheck) await applyObject(store, g.healthCheck);
  return stored;
}

async function failOperations(
  env: Env,
  ctx: ReconcileContext,
  mc: MagnumClusterObject,
  pending: Pending,
  reason: string,
): Promise<void> {
  for (const ng of pending.groups) {
    await writeStatus(ctx.store, ng, {
      ...ng.status,
      observedGeneration: ng.metadata.generation,
      observedAction: ng.spec.action,
      outcome: 'Failed',
      reason,
    });
  }
  if (pending.cluster) {
    await writeStatus(ctx.store, mc, {
      ...mc.status,
      stackId: magnumNames(mc).capi,
      observedGeneration: mc.metadata.generation,
      observedAction: mc.spec.action,
      outcome: 'Failed',
      reason,
      faults: { ...(mc.status.faults ?? {}), cluster: reason },
    });
  }
  env.deps.log.info({ cluster: mc.metadata.name, reason }, 'magnum operation failed');
}

async function writeGroupStatus(
  ctx: ReconcileContext,
  ng: NodeGroupObject,
  group: Verdict,
  cluster: Verdict,
  machines: readonly MachineObject[],
  version: string,
  names: MagnumNames,
): Promise<void> {
  const pending = ng.metadata.generation > (ng.status.observedGeneration ?? 0);
  const next: NodeGroupStatus = {
    ...ng.status,
    nodeAddresses: addressesOf(machines),
    stackId: names.capi,
    version: lowest(machines) ?? version,
  };
  if (pending) {
    const v = group.state === 'Complete' && cluster.state === 'Failed' ? cluster : group;
    if (v.state === 'InProgress') next.reason = v.reason;
    else {
      next.observedGeneration = ng.metadata.generation;
      next.observedAction = ng.spec.action;
      next.outcome = v.state === 'Complete' ? 'Complete' : 'Failed';
      next.reason = v.state === 'Complete' ? `${ng.spec.action} completed: ${v.reason}` : v.reason;
    }
  }
  await writeStatus(ctx.store, ng, next);
}

function lowest(machines: readonly MachineObject[]): string | undefined {
  const versions = machines
    .filter((m) => !m.metadata.deletionTimestamp && m.status.nodeRef)
    .map((m) => m.spec.version)
    .filter((v): v is string => !!v);
  return versions.sort((a, b) => (kubeMinor(a) ?? 0) - (kubeMinor(b) ?? 0) || a.localeCompare(b))[0];
}

async function writeClusterStatus(
  env: Env,
  ctx: ReconcileContext,
  mc: MagnumClusterObject,
  pending: Pending,
  verdict: Verdict,
  view: ClusterView,
  capi: CapiClusterObject | undefined,
  osc: OpenStackClusterObject | undefined,
  version: string,
  names: MagnumNames,
  perGroup: readonly { ng: NodeGroupObject; verdict: Verdict; machines: MachineObject[] }[],
): Promise<void> {
  const masters = perGroup.filter((g) => isMaster(g.ng)).flatMap((g) => g.machines);
  const workers = perGroup.filter((g) => !isMaster(g.ng)).flatMap((g) => g.machines);
  const endpoint = capi?.metadata.annotations[CapiAnnotations.workloadEndpoint];
  const lbIp = osc?.status.apiServerLoadBalancer?.ip ?? capi?.spec.controlPlaneEndpoint?.host;
  const port = capi?.spec.controlPlaneEndpoint?.port ?? osc?.spec.apiServerPort ?? 6443;
  const faults: Record<string, string> = {};
  for (const g of perGroup) if (g.verdict.state === 'Failed') faults[g.ng.spec.name] = g.verdict.reason;
  const everComplete =
    (mc.status.observedGeneration ?? 0) > 0 &&
    (mc.status.outcome === 'Complete' || mc.status.observedAction === 'UPDATE');
  const health =
    everComplete || (pending.cluster && verdict.state === 'Complete')
      ? healthOf(
          view.kcp?.status.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false,
          [...masters, ...workers],
        )
      : undefined;
  const next: MagnumClusterStatus = {
    ...mc.status,
    stackId: names.capi,
    apiAddress: endpoint ?? (lbIp ? `https://${lbIp}:${port}` : null),
    masterAddresses: addressesOf(masters),
    nodeAddresses: addressesOf(workers),
    coeVersion: view.kcp?.status.version ?? version,
    healthStatus: health?.status ?? 'UNKNOWN',
    healthStatusReason: health?.reason ?? {},
    faults,
  };
  if (pending.cluster) {
    if (verdict.state === 'InProgress') next.reason = verdict.reason;
    else {
      next.observedGeneration = mc.metadata.generation;
      next.observedAction = mc.spec.action;
      next.outcome = verdict.state === 'Complete' ? 'Complete' : 'Failed';
      next.reason =
        verdict.state === 'Complete'
          ? `${mc.spec.action === 'CREATE' ? 'Cluster create' : 'Cluster update'} completed`
          : verdict.reason;
      if (verdict.state === 'Failed' && Object.keys(faults).length === 0)
        next.faults = { cluster: verdict.reason };
    }
  } else if (mc.status.outcome === 'Failed' && mc.status.faults && Object.keys(faults).length === 0) {
    next.faults = mc.status.faults;
  }
  void env;
  await writeStatus(ctx.store, mc, next);
}
