import type { Clock, Logger, OperatorPolicy, PkiClusterRef } from '../domain/index.ts';
import type { CloudClients } from '../cloud/index.ts';
import type { KubeadmMaterial } from '../workload/index.ts';
import type { ApiObject } from '../domain/index.ts';
import type { ObjectStore } from '../store/index.ts';
import type { BackupDeps } from './backup/backup-deps.ts';

/**
 * Everything the provisioning controllers use besides the store: cloud clients per project,
 * the cluster PKI, access to workload clusters, the operator policy and engine settings.
 * Passed to {@link createControllers}; no module singletons.
 */
export interface ControllerDeps {
  /** The object store the controllers' manager runs on (their lists and watch mappings read it). */
  store: ObjectStore;
  /** OpenStack clients acting in a tenant project (Magnetar's service identity, scoped to it). */
  cloud: (projectId: string) => CloudClients | Promise<CloudClients>;
  /** Cluster CA material for the kubeadm bootstrap data. */
  pki: ControllerPki;
  /** Clients of workload clusters' Kubernetes APIs. */
  workload: WorkloadAccessApi;
  /** Operator policy (the user guide's rules). */
  policy: OperatorPolicy;
  /** Engine settings; every field has a default. */
  settings?: Partial<EngineSettings>;
  clock: Clock;
  log: Logger;
  /** Region name, embedded in provider IDs (`openstack://<region>/<uuid>`). */
  region: string;
  /**
   * Public key of a keypair owned by a user (Nova keypairs are per user; an admin reads another
   * user's with `user_id`), or undefined when it does not exist. When absent, the controllers
   * look the keypair up as their own identity.
   */
  userKeypair?: (projectId: string, userId: string, name: string) => Promise<string | undefined>;
  /**
   * etcd backups (snapshots, schedules, restores, the snapshot before upgrades and control-plane
   * scale-downs). Without it no backup controller runs and upgrades take no snapshot.
   */
  backup?: BackupDeps;
}

/** The part of the cluster PKI the controllers use. */
export interface ControllerPki {
  kubeadmMaterial(cluster: PkiClusterRef): Promise<KubeadmMaterial>;
  deleteCluster(cluster: Pick<PkiClusterRef, 'namespace' | 'name'>): Promise<void>;
}

/** Engine settings with their defaults ({@link DEFAULT_SETTINGS}). */
export interface EngineSettings {
  /**
   * How many machines whose server went to ERROR (e.g. "No valid host was found") are replaced
   * within one operation of a Magnum cluster before the operation fails with the cloud's
   * message. 0 fails at the first one. @default 1
   */
  serverErrorRetries: number;
  /** Node drain timeout before a machine's server is deleted, seconds (0: no limit). @default 300 */
  nodeDrainTimeoutSeconds: number;
  /** Node startup timeout of the health checks the magnum driver creates, seconds. @default 600 */
  nodeStartupTimeoutSeconds: number;
  /** How long a node may stay NotReady/Unknown before it is replaced, seconds. @default 300 */
  unhealthyNodeTimeoutSeconds: number;
  /** Short-circuit of those health checks: no remediation when more are unhealthy. @default "80%" */
  maxUnhealthy: string;
  /** Bootstrap token lifetime, seconds; refreshed while the machine has not joined. @default 900 */
  bootstrapTokenTtlSeconds: number;
  /** How often the Cluster controller probes a workload cluster's nodes, seconds. @default 60 */
  workloadProbeSeconds: number;
  /** Kubernetes version when neither the cluster nor its template has a `kube_tag`. @default v1.31.4 */
  defaultKubernetesVersion: string;
  /** Subnet CIDR of clusters' managed networks (Magnum's `fixed_subnet_cidr`). @default 10.0.0.0/24 */
  defaultSubnetCidr: string;
  /** Requeue interval while waiting on the cloud (servers building, load balancers pending), ms. @default 2000 */
  cloudPollMs: number;
  /**
   * How long the controllers that sum up many objects (Cluster, control plane, machine sets and
   * deployments, health checks, the Magnum driver) gather their children's changes before they
   * reconcile, ms: one pass per burst instead of one per machine write. @default 200
   */
  coalesceMs: number;
  /**
   * Reach a workload cluster only through the `workload.magnetar.io/endpoint` annotation (the
   * embedded cloud's addresses are not routable, so the load balancer's floating IP is never
   * tried). @default false
   */
  endpointAnnotationOnly: boolean;
}

/** Defaults of {@link EngineSettings}. */
export const DEFAULT_SETTINGS: EngineSettings = Object.freeze({
  serverErrorRetries: 1,
  nodeDrainTimeoutSeconds: 300,
  nodeStartupTimeoutSeconds: 600,
  unhealthyNodeTimeoutSeconds: 300,
  maxUnhealthy: '80%',
  bootstrapTokenTtlSeconds: 900,
  workloadProbeSeconds: 60,
  defaultKubernetesVersion: 'v1.31.4',
  defaultSubnetCidr: '10.0.0.0/24',
  cloudPollMs: 2000,
  coalesceMs: 200,
  endpointAnnotationOnly: false,
});

/** A Node of a workload cluster, as far as the controllers read it. */
export interface WorkloadNode {
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  spec?: { providerID?: string; unschedulable?: boolean };
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    nodeInfo?: { kubeletVersion?: string; osImage?: string };
    addresses?: { type: string; address: string }[];
  };
}

/** The calls the controllers make on a workload cluster's Kubernetes API. */
export interface WorkloadClientApi {
  listNodes(): Promise<WorkloadNode[]>;
  /** The nodes and the list's resourceVersion, where a watch starts. */
  listNodesAt(): Promise<{ items: WorkloadNode[]; resourceVersion: string }>;
  /** Follow node changes after `resourceVersion` until the server ends the watch (resolves) or it fails (rejects). */
  watchNodes(
    resourceVersion: string,
    onEvent: (
      event:
        | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: WorkloadNode }
        | { type: 'BOOKMARK'; resourceVersion: string },
    ) => void,
    options: { timeoutSeconds: number; signal?: AbortSignal },
  ): Promise<void>;
  /** Cordon and evict (respecting disruption budgets) for at most `timeoutMs`. */
  drain(
    name: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<{ done: boolean; remaining: string[] }>;
  deleteNode(name: string): Promise<void>;
  createBootstrapToken(token: { id: string; secret: string; ttlSeconds: number }): Promise<void>;
}

/** Access to workload clusters: a client when the cluster's API endpoint is known. */
export interface WorkloadAccessApi {
  forCluster(capiCluster: ApiObject): Promise<WorkloadClientApi | undefined>;
}
