import {
  CapiAnnotations,
  CapiTypes,
  MagnumTypes,
  type ApiObject,
  type CapiClusterObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import {
  DEFAULT_SETTINGS,
  type ControllerDeps,
  type EngineSettings,
  type WorkloadClientApi,
} from '../deps.ts';
import { CachedReads } from './cached-reads.ts';
import { Lookups } from './lookups.ts';
import { NodeSnapshots } from './node-snapshots.ts';
import { ObjectCache } from './object-cache.ts';

/**
 * What every reconciler of this package shares: the dependencies, resolved settings, the
 * object cache (lists by cluster and owner) and the node snapshots of workload clusters.
 */
export interface Env {
  /** The store, with reads of the cached kinds answered by the cache ({@link CachedReads}). */
  store: ObjectStore;
  deps: ControllerDeps;
  settings: EngineSettings;
  cache: ObjectCache;
  nodes: NodeSnapshots;
  /** Image and flavor lookups shared by a project's machines ({@link Lookups}). */
  lookups: Lookups;
  /** When this environment was made (the process's controllers started), on the deps' clock. */
  startedAt: number;
}

/** Kinds the cache indexes. */
export const CACHED_TYPES = [
  CapiTypes.Cluster,
  CapiTypes.Machine,
  CapiTypes.MachineSet,
  CapiTypes.MachineDeployment,
  CapiTypes.MachineHealthCheck,
  CapiTypes.KubeadmControlPlane,
  CapiTypes.KubeadmConfig,
  CapiTypes.OpenStackCluster,
  CapiTypes.OpenStackMachine,
  CapiTypes.OpenStackMachineTemplate,
  CapiTypes.KubeadmConfigTemplate,
  MagnumTypes.NodeGroup,
  MagnumTypes.Cluster,
  MagnumTypes.ClusterTemplate,
] as const;

/** Build the shared environment over a store. */
export function createEnv(store: ObjectStore, deps: ControllerDeps): Env {
  const cache = new ObjectCache(store, CACHED_TYPES);
  const env: Env = {
    store: new CachedReads(store, cache),
    deps,
    settings: { ...DEFAULT_SETTINGS, ...(deps.settings ?? {}) },
    cache,
    nodes: new NodeSnapshots((cluster) => workloadClient(env, cluster), deps.clock),
    lookups: new Lookups(deps.clock),
    startedAt: deps.clock.now(),
  };
  return env;
}

/**
 * True when `obj` was created since these controllers started. What such an object records is
 * all its reconcilers have done for it: no earlier run, and no store restored from an older
 * backup (which records less than the cloud holds), can have done more on its behalf. (An
 * object of an earlier run was created before this process started, in an earlier millisecond.)
 */
export function createdSinceStart(env: Env, obj: ApiObject): boolean {
  return Date.parse(obj.metadata.creationTimestamp) >= env.startedAt;
}

/** The CAPI Cluster an object belongs to, read fresh. */
export async function getCapiCluster(
  store: ObjectStore,
  namespace: string,
  name: string,
): Promise<CapiClusterObject | undefined> {
  return store.get<CapiClusterObject>(CapiTypes.Cluster, namespace, name);
}

/** True when reconciliation of objects of this cluster is paused. */
export function isPaused(
  cluster: CapiClusterObject | undefined,
  obj?: { metadata: { annotations: Record<string, string> } },
): boolean {
  if (cluster?.spec.paused) return true;
  if (cluster && 'cluster.x-k8s.io/paused' in cluster.metadata.annotations) return true;
  return obj !== undefined && 'cluster.x-k8s.io/paused' in obj.metadata.annotations;
}

/** A client of the cluster's workload API, when it can be reached (see `endpointAnnotationOnly`). */
export async function workloadClient(
  env: Env,
  cluster: CapiClusterObject,
): Promise<WorkloadClientApi | undefined> {
  if (env.settings.endpointAnnotationOnly && !cluster.metadata.annotations[CapiAnnotations.workloadEndpoint])
    return undefined;
  return env.deps.workload.forCluster(cluster);
}

/**
 * How long to wait before looking again at something in progress since `sinceMs`: half its age,
 * between 250 ms and `maxMs`, so fast clouds are seen quickly and slow ones are not hammered.
 */
export function pollDelay(sinceMs: number | undefined, nowMs: number, maxMs: number): number {
  if (sinceMs === undefined || Number.isNaN(sinceMs)) return maxMs;
  return Math.min(maxMs, Math.max(250, Math.floor((nowMs - sinceMs) / 2)));
}
