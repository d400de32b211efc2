/**
 * Kubernetes wire shapes (JSON as the Kubernetes API serves it), kept to the fields Magnetar
 * reads or serves: object metadata, lists, the `Status` error body, watch events, and the
 * core kinds a workload cluster shows (Node, Pod, Namespace, Secret, ConfigMap,
 * PodDisruptionBudget). Used by the workload emulator, the workload client and the kube façade.
 */

/** `metadata` of a served object (everything optional, as on the wire). */
export interface KubeMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  finalizers?: string[];
}

/** Any served object. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: KubeMeta;
  [field: string]: unknown;
}

/** A `<Kind>List`. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

/** One watch event, as streamed (one JSON object per line). */
export interface KubeWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | KubeStatus;
}

/** The `Status` object Kubernetes answers errors (and some deletes) with. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
  code: number;
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A failure `Status` with the reason Kubernetes uses for `code` unless one is given. */
export function kubeStatus(
  code: number,
  message: string,
  reason?: string,
  details?: KubeStatus['details'],
): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reason ?? REASONS[code] ?? 'Unknown',
    ...(details ? { details } : {}),
    code,
  };
}

/** A success `Status` (e.g. the answer to a delete or an eviction). */
export function kubeSuccess(details?: KubeStatus['details']): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    ...(details ? { details } : {}),
    code: 200,
  };
}

/** True when `value` looks like a `Status` body. */
export function isKubeStatus(value: unknown): value is KubeStatus {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

/** A node condition. */
export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** A Node (the fields Magnetar serves and reads). */
export interface KubeNode extends KubeObject {
  spec: {
    providerID?: string;
    unschedulable?: boolean;
    podCIDR?: string;
    taints?: { key: string; value?: string; effect: string; timeAdded?: string }[];
  };
  status: {
    conditions?: NodeCondition[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: {
      kubeletVersion?: string;
      kubeProxyVersion?: string;
      osImage?: string;
      kernelVersion?: string;
      containerRuntimeVersion?: string;
      operatingSystem?: string;
      architecture?: string;
      machineID?: string;
      systemUUID?: string;
      bootID?: string;
    };
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
  };
}

/** A container status of a pod. */
export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  image?: string;
  imageID?: string;
  started?: boolean;
  state?: {
    running?: { startedAt: string };
    waiting?: { reason: string; message?: string };
    terminated?: { exitCode: number; reason?: string };
  };
}

/** A Pod (the fields Magnetar serves and reads). */
export interface KubePod extends KubeObject {
  spec: {
    nodeName?: string;
    containers: { name: string; image: string }[];
    volumes?: { name: string; emptyDir?: Record<string, unknown>; hostPath?: { path: string } }[];
    tolerations?: { key?: string; operator?: string; effect?: string }[];
    priorityClassName?: string;
    hostNetwork?: boolean;
    nodeSelector?: Record<string, string>;
  };
  status: {
    phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    conditions?: {
      type: string;
      status: 'True' | 'False' | 'Unknown';
      lastTransitionTime?: string;
      reason?: string;
      message?: string;
    }[];
    hostIP?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    startTime?: string;
    containerStatuses?: ContainerStatus[];
    reason?: string;
    message?: string;
  };
}

/** A Secret. */
export interface KubeSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

/** A ConfigMap. */
export interface KubeConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** A Namespace. */
export interface KubeNamespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating' };
}

/** A PodDisruptionBudget (policy/v1). */
export interface KubePodDisruptionBudget extends KubeObject {
  spec: {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    selector?: { matchLabels?: Record<string, string> };
  };
  status: {
    currentHealthy: number;
    desiredHealthy: number;
    disruptionsAllowed: number;
    expectedPods: number;
    observedGeneration?: number;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
  };
}

/** The body of `POST .../pods/<name>/eviction`. */
export interface KubeEviction extends KubeObject {
  deleteOptions?: { gracePeriodSeconds?: number; dryRun?: string[] };
}

/** `/version`. */
export interface KubeVersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
  emulationMajor?: string;
  emulationMinor?: string;
}
