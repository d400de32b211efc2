import type { ApiObject } from './object.ts';

/**
 * Magnum-facing objects as stored (domain form, camelCase). The Magnum v1 façade maps them
 * to and from Magnum's snake_case wire form; the magnum driver controller reads their spec
 * and writes their status.
 *
 * Status model: the façade never writes a Magnum status string. An accepted create/update
 * bumps `metadata.generation` (by changing spec, always including a new `spec.operationId`), a delete sets
 * `metadata.deletionTimestamp`; the driver records in `status.observedGeneration` the
 * generation it finished (with `status.outcome`). {@link magnumStatus} derives Magnum's
 * status from these, so a read right after a 202 already says `*_IN_PROGRESS`.
 */

/** API group/version of Magnum-facing kinds. */
export const MAGNUM_API_VERSION = 'magnum.magnetar.io/v1';
/** Store type keys of the Magnum-facing kinds. */
export const MagnumTypes = {
  ClusterTemplate: 'ClusterTemplate.magnum.magnetar.io',
  Cluster: 'Cluster.magnum.magnetar.io',
  NodeGroup: 'NodeGroup.magnum.magnetar.io',
  Quota: 'Quota.magnum.magnetar.io',
  MService: 'MService.magnum.magnetar.io',
} as const;

/** Finalizer the magnum driver keeps on Magnum clusters/nodegroups until their cloud resources are gone. */
export const MAGNUM_FINALIZER = 'magnum.magnetar.io/driver';
/** Label on NodeGroup objects: the owning Magnum cluster uuid. */
export const LABEL_MAGNUM_CLUSTER = 'magnum.magnetar.io/cluster-uuid';

/** Magnum's status strings (clusters and nodegroups). */
export type MagnumStatus =
  | 'CREATE_IN_PROGRESS'
  | 'CREATE_FAILED'
  | 'CREATE_COMPLETE'
  | 'UPDATE_IN_PROGRESS'
  | 'UPDATE_FAILED'
  | 'UPDATE_COMPLETE'
  | 'DELETE_IN_PROGRESS'
  | 'DELETE_FAILED'
  | 'DELETE_COMPLETE'
  | 'RESUME_COMPLETE'
  | 'RESUME_FAILED'
  | 'RESTORE_COMPLETE'
  | 'ROLLBACK_IN_PROGRESS'
  | 'ROLLBACK_FAILED'
  | 'ROLLBACK_COMPLETE'
  | 'SNAPSHOT_COMPLETE'
  | 'CHECK_COMPLETE'
  | 'ADOPT_COMPLETE';

/** Magnum's health values. */
export type HealthStatus = 'HEALTHY' | 'UNHEALTHY' | 'UNKNOWN';

/** The operation a generation of a Magnum cluster or nodegroup asks for. */
export type MagnumAction = 'CREATE' | 'UPDATE';

/** How the driver finished the generation recorded in `observedGeneration`. */
export type MagnumOutcome = 'Complete' | 'Failed';

/** Status fields shared by Magnum clusters and nodegroups, written by the driver only. */
export interface MagnumOperationStatus {
  /** Last generation the driver finished (complete or failed). */
  observedGeneration?: number;
  /** Action of that generation. */
  observedAction?: MagnumAction;
  outcome?: MagnumOutcome;
  /** Human-readable reason: progress while in progress, the cause when failed. */
  reason?: string;
  /** True when a delete failed terminally (DELETE_FAILED); cleared on retry. */
  deleteFailed?: boolean;
}

/** Cluster template spec (Magnum ClusterTemplate fields, camelCase). */
export interface ClusterTemplateSpec {
  /**
   * Magnum name. Template names are not unique in Magnum, so the store name of a template is its
   * uuid and the Magnum name lives here; absent (objects created through the kube façade) means
   * `metadata.name`.
   */
  name?: string;
  coe: string;
  imageId: string;
  keypairId: string | null;
  externalNetworkId: string | null;
  fixedNetwork: string | null;
  fixedSubnet: string | null;
  networkDriver: string | null;
  volumeDriver: string | null;
  dnsNameserver: string | null;
  flavorId: string | null;
  masterFlavorId: string | null;
  dockerVolumeSize: number | null;
  dockerStorageDriver: string | null;
  httpProxy: string | null;
  httpsProxy: string | null;
  noProxy: string | null;
  insecureRegistry: string | null;
  labels: Record<string, string>;
  tlsDisabled: boolean;
  public: boolean;
  hidden: boolean;
  registryEnabled: boolean;
  serverType: string;
  masterLbEnabled: boolean;
  floatingIpEnabled: boolean;
  apiserverPort: number | null;
  clusterDistro: string | null;
  tags: string | null;
  driver: string | null;
  /** Owner (Magnum `user_id`); project is `metadata.namespace`. */
  userId: string;
}
export type ClusterTemplateObject = ApiObject<ClusterTemplateSpec, Record<string, never>>;

/** Magnum cluster spec: what the user asked for. Node counts live on the NodeGroups. */
export interface MagnumClusterSpec {
  /** Action of the current generation. */
  action: MagnumAction;
  /** Fresh id per accepted request, so every accepted operation bumps the generation. */
  operationId: string;
  clusterTemplateId: string;
  keypair: string | null;
  dockerVolumeSize: number | null;
  labels: Record<string, string>;
  masterFlavorId: string | null;
  flavorId: string | null;
  fixedNetwork: string | null;
  fixedSubnet: string | null;
  floatingIpEnabled: boolean;
  masterLbEnabled: boolean;
  /** Minutes. */
  createTimeout: number;
  discoveryUrl: string | null;
  /** Creator (Magnum `user_id`). */
  userId: string;
  /** Fields the operator policy requires that were missing at create time; the driver fails the create with them. */
  missingRequiredFields?: string[];
  /** Health as set through PATCH by an external healer (Magnum `health_status`), if any. */
  healthStatusOverride?: HealthStatus | null;
  healthStatusReasonOverride?: Record<string, string> | null;
  /** Server uuids (or machine names) to remove on the next scale-down, keyed by nodegroup uuid. */
  nodesToRemove?: Record<string, string[]>;
}

/** Magnum cluster status: observed by the driver. */
export interface MagnumClusterStatus extends MagnumOperationStatus {
  healthStatus?: HealthStatus | null;
  healthStatusReason?: Record<string, string> | null;
  apiAddress?: string | null;
  masterAddresses?: string[];
  nodeAddresses?: string[];
  coeVersion?: string | null;
  containerVersion?: string | null;
  /** Backend id: the CAPI Cluster name. */
  stackId?: string | null;
  /** Per-nodegroup failure reasons (Magnum `faults`). */
  faults?: Record<string, string>;
}
export type MagnumClusterObject = ApiObject<MagnumClusterSpec, MagnumClusterStatus>;

/** Node group spec. */
export interface NodeGroupSpec {
  action: MagnumAction;
  /** Fresh id per accepted request, so every accepted operation bumps the generation. */
  operationId: string;
  /** Owning cluster uuid. */
  clusterId: string;
  /** Magnum name, unique in the cluster (the store name is `<cluster uuid>.<name>`). */
  name: string;
  role: string;
  nodeCount: number;
  minNodeCount: number;
  maxNodeCount: number | null;
  flavorId: string | null;
  imageId: string | null;
  dockerVolumeSize: number | null;
  labels: Record<string, string>;
  isDefault: boolean;
  nodeLabels?: Record<string, string>;
  nodeTaints?: { key: string; value?: string; effect: string }[];
  /** Magnum integer id. */
  id: number;
}

export interface NodeGroupStatus extends MagnumOperationStatus {
  nodeAddresses?: string[];
  /** Kubernetes version running on the group. */
  version?: string | null;
  stackId?: string | null;
}
export type NodeGroupObject = ApiObject<NodeGroupSpec, NodeGroupStatus>;

/** Store name of a nodegroup. */
export function nodeGroupStoreName(clusterUid: string, name: string): string {
  return `${clusterUid}.${name}`;
}

/** Per-project quota row (`resource` is `Cluster`). Store name: `<project>.<resource>`. */
export interface QuotaSpec {
  id: number;
  projectId: string;
  resource: string;
  hardLimit: number;
}
export type QuotaObject = ApiObject<QuotaSpec, Record<string, never>>;

/** A controller/API process heartbeat, listed by `coe service list`. */
export interface MServiceSpec {
  id: number;
  host: string;
  binary: string;
  disabled: boolean;
  disabledReason: string | null;
}
export interface MServiceStatus {
  reportCount: number;
  lastSeen: string;
}
export type MServiceObject = ApiObject<MServiceSpec, MServiceStatus>;

/** Anything with Magnum's operation model. */
interface OperationView {
  metadata: { generation: number; deletionTimestamp?: string };
  spec: { action: MagnumAction };
  status: MagnumOperationStatus;
}

/**
 * Magnum's status string of a cluster or nodegroup, derived from generation bookkeeping.
 * - marked for deletion: DELETE_FAILED when the driver says so, else DELETE_IN_PROGRESS;
 * - a generation newer than the observed one: `<action>_IN_PROGRESS`;
 * - otherwise `<observed action>_COMPLETE` or `_FAILED`.
 */
export function magnumStatus(obj: OperationView): MagnumStatus {
  if (obj.metadata.deletionTimestamp) return obj.status.deleteFailed ? 'DELETE_FAILED' : 'DELETE_IN_PROGRESS';
  const observed = obj.status.observedGeneration ?? 0;
  if (obj.metadata.generation > observed) return `${obj.spec.action}_IN_PROGRESS`;
  const action = obj.status.observedAction ?? obj.spec.action;
  return obj.status.outcome === 'Failed' ? `${action}_FAILED` : `${action}_COMPLETE`;
}

/** Statuses in which Magnum reports `faults`. */
export const FAILED_STATUSES: readonly MagnumStatus[] = [
  'CREATE_FAILED',
  'UPDATE_FAILED',
  'DELETE_FAILED',
  'ROLLBACK_FAILED',
  'RESUME_FAILED',
];

/**
 * Name of the Cluster API `Cluster` (and prefix of its other objects) for a Magnum cluster:
 * a DNS-1123 label from the Magnum name (lowercase, other characters → '-', at most 30) plus
 * the first 8 characters of the uuid. Stable for the cluster's life; Magnum's `stack_id`.
 */
export function capiClusterName(cluster: { metadata: { uid: string; name: string } }): string {
  const base = cluster.metadata.name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30)
    .replace(/-+$/g, '');
  const id = cluster.metadata.uid.replace(/-/g, '').slice(0, 8);
  return `${base === '' ? 'cluster' : base}-${id}`;
}

/** Annotation with the time (ISO) of the last change accepted through the Magnum API (Magnum `updated_at`). */
export const ANNOTATION_MAGNUM_UPDATED_AT = 'magnum.magnetar.io/updated-at';

/** The Magnum name of a cluster template (see {@link ClusterTemplateSpec.name}). */
export function templateName(t: { metadata: { name: string }; spec: { name?: string } }): string {
  return t.spec.name ?? t.metadata.name;
}
