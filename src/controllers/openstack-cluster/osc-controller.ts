import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiReasons,
  CapiTypes,
  type ApiObject,
  type CapiClusterObject,
  type OpenStackClusterObject,
  type OpenStackClusterStatus,
} from '../../domain/index.ts';
import { cloudErrorMessage, isTerminalCloudError } from '../common/cloud-errors.ts';
import { buildConditions, falseCondition, trueCondition, type ConditionInput } from '../common/conditions.ts';
import { createdSinceStart, isPaused, pollDelay, type Env } from '../common/env.ts';
import {
  TerminalError,
  type ObjectRef,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../common/runtime-types.ts';
import { iso, writeObject, writeStatus } from '../common/writes.ts';
import { reconcileOscDelete } from './osc-delete.ts';
import { reconcileLoadBalancer } from './osc-load-balancer.ts';
import {
  oscNames,
  reconcileExternalNetwork,
  reconcileNetwork,
  reconcileRouter,
  type RecordStatus,
} from './osc-network.ts';
import { reconcileSecurityGroups } from './osc-security-groups.ts';
import { clusterForInfrastructure, deletionView, specViewExcept } from '../common/views.ts';

/**
 * The OpenStackCluster controller (the OpenStack provider's cluster half): network, subnet,
 * router to the external network, security groups, and the control-plane load balancer with
 * listener, pool, health monitor and floating IP; then the API endpoint and the availability
 * zones as failure domains. The finalizer is written before any cloud call; every new
 * resource id is recorded at once; names are deterministic, so a retry finds what an earlier
 * try made.
 */
export function openStackClusterReconciler(env: Env): Reconciler {
  return {
    name: 'openstackcluster',
    // the API endpoint it writes into its spec when done is not read back: status is derived each pass
    view: specViewExcept('controlPlaneEndpoint'),
    type: CapiTypes.OpenStackCluster,
    watches: [
      {
        type: CapiTypes.Cluster,
        view: clusterForInfrastructure,
        map: (obj: ApiObject) => {
          const ref = (obj as CapiClusterObject).spec.infrastructureRef;
          return ref?.kind === 'OpenStackCluster'
            ? [{ namespace: obj.metadata.namespace, name: ref.name }]
            : [];
        },
      },
      {
        // Deletion waits for the cluster's machines to be gone.
        type: CapiTypes.Machine,
        view: deletionView,
        map: async (obj: ApiObject) => {
          if (obj.metadata.deletionTimestamp === undefined && !(await isGone(env, obj))) return [];
          const cluster = obj.metadata.labels[CapiLabels.clusterName];
          if (!cluster) return [];
          return (
            await env.cache.listByCluster<OpenStackClusterObject>(
              CapiTypes.OpenStackCluster,
              obj.metadata.namespace,
              cluster,
            )
          )
            .filter((o) => o.metadata.deletionTimestamp)
            .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name }));
        },
      },
    ],
    reconcile: (ctx, ref) => reconcileOsc(env, ctx, ref),
  };
}

async function isGone(env: Env, obj: ApiObject): Promise<boolean> {
  return (await env.store.get(CapiTypes.Machine, obj.metadata.namespace, obj.metadata.name)) === undefined;
}

const NET_CONDITIONS = [
  CapiConditions.NetworkReady,
  CapiConditions.RouterReady,
  CapiConditions.SecurityGroupsReady,
  CapiConditions.APIEndpointReady,
] as const;

/**
 * The cluster's subnet when the last pass left the network, router and security groups ready and
 * stopped at the load balancer (its build is under way); undefined otherwise.
 */
function followingLoadBalancer(osc: OpenStackClusterObject): { subnetId: string } | undefined {
  const cond = (type: string) => osc.status.conditions?.find((c) => c.type === type);
  const subnetId = osc.status.network?.subnets?.[0]?.id;
  const endpoint = cond(CapiConditions.APIEndpointReady);
  if (
    !subnetId ||
    !osc.status.router?.interfaceAdded ||
    endpoint?.status !== 'False' ||
    endpoint.reason !== CapiReasons.WaitingForLoadBalancer ||
    NET_CONDITIONS.slice(0, 3).some((t) => cond(t)?.status !== 'True')
  )
    return undefined;
  return { subnetId };
}

async function reconcileOsc(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let osc = await store.get<OpenStackClusterObject>(CapiTypes.OpenStackCluster, ref.namespace, ref.name);
  if (!osc) return;
  const clusterName = osc.metadata.labels[CapiLabels.clusterName];
  const cluster = clusterName
    ? await store.get<CapiClusterObject>(CapiTypes.Cluster, osc.metadata.namespace, clusterName)
    : undefined;
  if (osc.metadata.deletionTimestamp) return reconcileOscDelete(env, ctx, osc);
  // Wait for the Cluster to adopt us (it sets the cluster-name label); never build orphans.
  if (!cluster || isPaused(cluster, osc)) return;
  if (!osc.metadata.finalizers.includes(CapiFinalizers.openStackCluster)) {
    osc = await store.update<OpenStackClusterObject>({
      ...osc,
      metadata: {
        ...osc.metadata,
        finalizers: [...osc.metadata.finalizers, CapiFinalizers.openStackCluster],
      },
    });
  }
  const now = env.deps.clock.now();
  const failed = osc.status.conditions?.find(
    (c) => c.type === CapiConditions.Ready && c.status === 'False' && c.reason === CapiReasons.Failed,
  );
  if (failed && (osc.status.observedGeneration ?? 0) >= osc.metadata.generation) return; // terminal until the spec changes

  const record: RecordStatus = async (patch) => {
    osc = await writeStatus(store, osc!, { ...osc!.status, ...patch });
  };
  const conds: ConditionInput[] = [];
  const progress = async (type: string, reason: string, message: string, terminal = false) => {
    const done = NET_CONDITIONS.slice(0, NET_CONDITIONS.indexOf(type as (typeof NET_CONDITIONS)[number]));
    const list: ConditionInput[] = [
      ...done.map((t) => trueCondition(t)),
      falseCondition(type, reason, message),
    ];
    list.push(falseCondition(CapiConditions.Ready, terminal ? CapiReasons.Failed : reason, message));
    await record({
      ...(terminal ? { observedGeneration: osc!.metadata.generation } : {}),
      conditions: buildConditions(osc!.status.conditions, list, iso(now)),
    });
  };

  let step: (typeof NET_CONDITIONS)[number] = CapiConditions.NetworkReady;
  try {
    const cloud = await env.deps.cloud(osc.metadata.namespace);
    const tags = [...new Set([...(osc.spec.tags ?? []), oscNames(osc).tag])];
    // The external network is recorded before anything is created: a cluster created since
    // these controllers started that has none has asked the cloud for nothing yet, and the
    // pass that records it creates its network, router, security groups and load balancer
    // without looking them up by name first. Later passes, and every cluster older than the
    // process (a restart, or a store restored from a backup), look up what they have not
    // recorded.
    const fresh = !osc.status.externalNetwork?.id && createdSinceStart(env, osc);
    const externalNetworkId = await reconcileExternalNetwork(cloud, osc, record);
    // While the load balancer is being built, a pass only follows it: the network and router
    // were checked by the pass that found them ready.
    const built = followingLoadBalancer(osc);
    const { subnetId } = built ?? (await reconcileNetwork(cloud, osc, tags, record, fresh));
    conds.push(trueCondition(CapiConditions.NetworkReady));
    step = CapiConditions.RouterReady;
    if (!built) await reconcileRouter(cloud, osc, externalNetworkId, subnetId, tags, record, fresh);
    conds.push(trueCondition(CapiConditions.RouterReady));
    step = CapiConditions.SecurityGroupsReady;
    if (
      osc.status.conditions?.find((c) => c.type === CapiConditions.SecurityGroupsReady)?.status !== 'True' ||
      !osc.status.workerSecurityGroup
    ) {
      await reconcileSecurityGroups(cloud, osc, tags, record, fresh);
    }
    conds.push(trueCondition(CapiConditions.SecurityGroupsReady));
    step = CapiConditions.APIEndpointReady;
    const lb = await reconcileLoadBalancer(cloud, osc, { subnetId, externalNetworkId }, tags, record, fresh);
    if (!lb.done) {
      const since = osc.status.conditions?.find(
        (c) => c.type === CapiConditions.APIEndpointReady && c.status === 'False',
      )?.lastTransitionTime;
      await progress(CapiConditions.APIEndpointReady, CapiReasons.WaitingForLoadBalancer, lb.waiting);
      return {
        requeueAfterMs: pollDelay(
          since ? Date.parse(since) : now,
          env.deps.clock.now(),
          env.settings.cloudPollMs,
        ),
      };
    }
    conds.push(trueCondition(CapiConditions.APIEndpointReady));
    const port = osc.spec.apiServerPort ?? 6443;
    if (osc.spec.controlPlaneEndpoint?.host !== lb.host || osc.spec.controlPlaneEndpoint.port !== port) {
      osc = await writeObject(store, osc, {
        ...osc,
        spec: { ...osc.spec, controlPlaneEndpoint: { host: lb.host, port } },
      });
    }
    if (!osc.status.failureDomains?.length) {
      const zones = (await cloud.compute.listAvailabilityZones())
        .filter((z) => z.available)
        .map((z) => z.name)
        .sort();
      const cpZones = osc.spec.controlPlaneAvailabilityZones;
      await record({
        failureDomains: zones.map((name) => ({
          name,
          controlPlane: cpZones ? cpZones.includes(name) : true,
        })),
      });
    }
  } catch (err) {
    const terminal = err instanceof TerminalError || isTerminalCloudError(err);
    const message = err instanceof TerminalError ? err.message : cloudErrorMessage(err);
    await progress(step, terminal ? CapiReasons.Failed : CapiReasons.OpenStackError, message, terminal);
    if (terminal)
      throw err instanceof TerminalError
        ? err
        : new TerminalError(message, CapiReasons.Failed, { cause: err });
    throw err;
  }
  const status: OpenStackClusterStatus = {
    ...osc.status,
    ready: true,
    initialization: { provisioned: true },
    conditions: buildConditions(
      osc.status.conditions,
      [...conds, trueCondition(CapiConditions.Ready)],
      iso(now),
    ),
    observedGeneration: osc.metadata.generation,
  };
  await writeStatus(store, osc, status);
}
