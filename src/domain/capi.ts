import type { ApiObject, Condition } from './object.ts';
import type { SelectorSpec } from './labels.ts';

/**
 * Cluster API (v1beta2) and Cluster API Provider OpenStack (v1beta1) objects as Magnetar stores
 * them: the same field names as upstream, restricted to what Magnetar reads or writes. The
 * controllers own their status; the magnum driver and `kubectl apply` (through the kube façade)
 * write their spec. Unknown spec fields sent by users are kept as they are (see capi-schemas.ts).
 */

/** apiVersions served. */
export const CAPI_API_VERSION = 'cluster.x-k8s.io/v1beta2';
export const CONTROLPLANE_API_VERSION = 'controlplane.cluster.x-k8s.io/v1beta2';
export const BOOTSTRAP_API_VERSION = 'bootstrap.cluster.x-k8s.io/v1beta2';
export const INFRA_API_VERSION = 'infrastructure.cluster.x-k8s.io/v1beta1';

/** API groups (the `apiGroup` of v1beta2 object references). */
export const CapiGroups = {
  core: 'cluster.x-k8s.io',
  controlPlane: 'controlplane.cluster.x-k8s.io',
  bootstrap: 'bootstrap.cluster.x-k8s.io',
  infrastructure: 'infrastructure.cluster.x-k8s.io',
} as const;

/** Store type keys (`Kind.group`, `Secret` for the core group). */
export const CapiTypes = {
  Cluster: 'Cluster.cluster.x-k8s.io',
  Machine: 'Machine.cluster.x-k8s.io',
  MachineSet: 'MachineSet.cluster.x-k8s.io',
  MachineDeployment: 'MachineDeployment.cluster.x-k8s.io',
  MachineHealthCheck: 'MachineHealthCheck.cluster.x-k8s.io',
  KubeadmControlPlane: 'KubeadmControlPlane.controlplane.cluster.x-k8s.io',
  KubeadmConfig: 'KubeadmConfig.bootstrap.cluster.x-k8s.io',
  KubeadmConfigTemplate: 'KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io',
  OpenStackCluster: 'OpenStackCluster.infrastructure.cluster.x-k8s.io',
  OpenStackMachine: 'OpenStackMachine.infrastructure.cluster.x-k8s.io',
  OpenStackMachineTemplate: 'OpenStackMachineTemplate.infrastructure.cluster.x-k8s.io',
  Secret: 'Secret',
} as const;
export type CapiTypeKey = (typeof CapiTypes)[keyof typeof CapiTypes];

/** Labels. */
export const CapiLabels = {
  /** On every object of a cluster: the CAPI Cluster name. */
  clusterName: 'cluster.x-k8s.io/cluster-name',
  /** On control-plane Machines (value ""). */
  controlPlane: 'cluster.x-k8s.io/control-plane',
  /** On control-plane Machines: the KubeadmControlPlane name. */
  controlPlaneName: 'cluster.x-k8s.io/control-plane-name',
  /** On MachineSets and Machines of a MachineDeployment. */
  deploymentName: 'cluster.x-k8s.io/deployment-name',
  /** On Machines of a MachineSet. */
  setName: 'cluster.x-k8s.io/set-name',
  /** Hash of a MachineSet's template, telling MachineSets of different templates apart. */
  templateHash: 'machine-template-hash',
  /** Magnetar: the Magnum node group name an object belongs to. */
  nodeGroup: 'magnum.magnetar.io/nodegroup',
  /** Magnetar: the Magnum cluster uuid (same key as {@link LABEL_MAGNUM_CLUSTER} in magnum.ts). */
  magnumCluster: 'magnum.magnetar.io/cluster-uuid',
  /** Magnetar, on the CAPI Cluster: the service identity's keypair copy its servers carry. */
  keypairCopy: 'magnum.magnetar.io/keypair-copy',
} as const;

/** Annotations. */
export const CapiAnnotations = {
  /** On a Machine (any value, Magnetar writes "yes"): remove this one first on scale-down. */
  deleteMachine: 'cluster.x-k8s.io/delete-machine',
  /** On a Cluster or any object: stop reconciling. */
  paused: 'cluster.x-k8s.io/paused',
  /** On a Machine: never remediate. */
  skipRemediation: 'cluster.x-k8s.io/skip-remediation',
  /** On a Machine: remediate now. */
  remediateMachine: 'cluster.x-k8s.io/remediate-machine',
  /** On a Machine: do not drain its node on delete. */
  excludeNodeDraining: 'machine.cluster.x-k8s.io/exclude-node-draining',
  /** On a replacement control-plane Machine: the remediation it answers (JSON). */
  remediationFor: 'controlplane.cluster.x-k8s.io/remediation-for',
  /** On MachineDeployments and MachineSets: rollout revision. */
  revision: 'machinedeployment.clusters.x-k8s.io/revision',
  /**
   * On the CAPI Cluster, set by the workload side once a control-plane machine booted: the URL of
   * the cluster's Kubernetes API (`https://host:port`).
   */
  workloadEndpoint: 'workload.magnetar.io/endpoint',
  /** On a MachineSet/KCP Machine: the reason the owner chose to replace it (for status messages). */
  replacedBecause: 'magnetar.io/replaced-because',
  /** On the CAPI Cluster: the Magnum cluster's name (kubeconfig contexts, the CA's subject). */
  displayName: 'magnetar.io/display-name',
} as const;

/** Finalizers. */
export const CapiFinalizers = {
  cluster: 'cluster.cluster.x-k8s.io',
  machine: 'machine.cluster.x-k8s.io',
  machineSet: 'cluster.x-k8s.io/machineset',
  machineDeployment: 'cluster.x-k8s.io/machinedeployment',
  kubeadmControlPlane: 'kubeadm.controlplane.cluster.x-k8s.io',
  openStackCluster: 'openstackcluster.infrastructure.cluster.x-k8s.io',
  openStackMachine: 'openstackmachine.infrastructure.cluster.x-k8s.io',
} as const;

/** Condition types (v1beta2 names). */
export const CapiConditions = {
  Available: 'Available',
  Ready: 'Ready',
  Paused: 'Paused',
  Deleting: 'Deleting',
  InfrastructureReady: 'InfrastructureReady',
  ControlPlaneInitialized: 'ControlPlaneInitialized',
  ControlPlaneAvailable: 'ControlPlaneAvailable',
  WorkersAvailable: 'WorkersAvailable',
  ControlPlaneMachinesReady: 'ControlPlaneMachinesReady',
  WorkerMachinesReady: 'WorkerMachinesReady',
  ControlPlaneMachinesUpToDate: 'ControlPlaneMachinesUpToDate',
  WorkerMachinesUpToDate: 'WorkerMachinesUpToDate',
  RemoteConnectionProbe: 'RemoteConnectionProbe',
  RollingOut: 'RollingOut',
  ScalingUp: 'ScalingUp',
  ScalingDown: 'ScalingDown',
  Remediating: 'Remediating',
  MachinesReady: 'MachinesReady',
  MachinesUpToDate: 'MachinesUpToDate',
  Initialized: 'Initialized',
  CertificatesAvailable: 'CertificatesAvailable',
  UpToDate: 'UpToDate',
  BootstrapConfigReady: 'BootstrapConfigReady',
  NodeHealthy: 'NodeHealthy',
  NodeReady: 'NodeReady',
  HealthCheckSucceeded: 'HealthCheckSucceeded',
  OwnerRemediated: 'OwnerRemediated',
  RemediationAllowed: 'RemediationAllowed',
  DataSecretAvailable: 'DataSecretAvailable',
  /** CAPO OpenStackCluster. */
  NetworkReady: 'NetworkReady',
  RouterReady: 'RouterReady',
  SecurityGroupsReady: 'SecurityGroupsReady',
  APIEndpointReady: 'APIEndpointReady',
  /** CAPO OpenStackMachine. */
  InstanceReady: 'InstanceReady',
  APIServerIngressReady: 'APIServerIngressReady',
} as const;

/** Reasons used in conditions that other modules (the magnum driver, the dashboard) interpret. */
export const CapiReasons = {
  /** A failure a retry will not fix; the message carries the cloud's text. */
  Failed: 'Failed',
  /** CAPO: a cloud error while reconciling. */
  OpenStackError: 'OpenStackError',
  /** CAPO: the server went to ERROR. */
  InstanceStateError: 'InstanceStateError',
  /** CAPO: a spec that cannot work (missing image, flavor, keypair). */
  InvalidMachineSpec: 'InvalidMachineSpec',
  Provisioning: 'Provisioning',
  WaitingForInfrastructure: 'WaitingForInfrastructure',
  WaitingForBootstrapData: 'WaitingForBootstrapData',
  WaitingForControlPlane: 'WaitingForControlPlane',
  WaitingForLoadBalancer: 'WaitingForLoadBalancer',
  DrainingNode: 'DrainingNode',
  WaitingForInfrastructureDeletion: 'WaitingForInfrastructureDeletion',
  WaitingForBootstrapDeletion: 'WaitingForBootstrapDeletion',
  DeletingNode: 'DeletingNode',
  DeletionCompleted: 'DeletionCompleted',
  NodeStartupTimeout: 'NodeStartupTimeout',
  UnhealthyNode: 'UnhealthyNode',
  UnhealthyMachine: 'UnhealthyMachine',
  TooManyUnhealthy: 'TooManyUnhealthy',
} as const;

/** A v1beta2 reference to an object in the same namespace. */
export type ObjectReference = {
  apiGroup: string;
  kind: string;
  name: string;
};

/** Typed conditions-bearing status. */
export type WithConditions = {
  conditions?: Condition[];
  observedGeneration?: number;
};

// ---------------------------------------------------------------- Cluster

export type ClusterNetwork = {
  pods?: { cidrBlocks: string[] };
  services?: { cidrBlocks: string[] };
  /** @default cluster.local */
  serviceDomain?: string;
  /** @default 6443 */
  apiServerPort?: number;
};

export type ApiEndpoint = {
  host: string;
  port: number;
};

export type CapiClusterSpec = {
  clusterNetwork?: ClusterNetwork;
  controlPlaneEndpoint?: ApiEndpoint;
  controlPlaneRef?: ObjectReference;
  infrastructureRef?: ObjectReference;
  paused?: boolean;
  availabilityGates?: { conditionType: string }[];
};

export type FailureDomain = {
  name: string;
  controlPlane?: boolean;
  attributes?: Record<string, string>;
};

export type ClusterPhase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Deleting' | 'Failed' | 'Unknown';

export type ReplicaCounts = {
  desiredReplicas?: number;
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  upToDateReplicas?: number;
};

export type CapiClusterStatus = WithConditions & {
  phase?: ClusterPhase;
  initialization?: { infrastructureProvisioned?: boolean; controlPlaneInitialized?: boolean };
  controlPlane?: ReplicaCounts;
  workers?: ReplicaCounts;
  failureDomains?: FailureDomain[];
};
export type CapiClusterObject = ApiObject<CapiClusterSpec, CapiClusterStatus>;

// ---------------------------------------------------------------- Machine

export type MachineDeletionSpec = {
  /** 0 or unset: no timeout. */
  nodeDrainTimeoutSeconds?: number;
  nodeVolumeDetachTimeoutSeconds?: number;
  /** @default 10 */
  nodeDeletionTimeoutSeconds?: number;
};

export type MachineSpec = {
  clusterName: string;
  bootstrap: { configRef?: ObjectReference; dataSecretName?: string };
  infrastructureRef: ObjectReference;
  /** Kubernetes version, e.g. `v1.31.4`. */
  version?: string;
  providerID?: string;
  failureDomain?: string;
  minReadySeconds?: number;
  deletion?: MachineDeletionSpec;
};

export type MachinePhase =
  | 'Pending'
  | 'Provisioning'
  | 'Provisioned'
  | 'Running'
  | 'Updating'
  | 'Deleting'
  | 'Deleted'
  | 'Failed'
  | 'Unknown';

export type MachineAddress = {
  type: 'Hostname' | 'ExternalIP' | 'InternalIP' | 'ExternalDNS' | 'InternalDNS';
  address: string;
};

export type MachineStatus = WithConditions & {
  phase?: MachinePhase;
  initialization?: { infrastructureProvisioned?: boolean; bootstrapDataSecretCreated?: boolean };
  nodeRef?: { name: string };
  nodeInfo?: { kubeletVersion?: string; osImage?: string };
  addresses?: MachineAddress[];
  failureDomain?: string;
  deletion?: { nodeDrainStartTime?: string; waitForNodeVolumeDetachStartTime?: string };
  /** Magnetar: when the node was first seen Ready (drives `Available` after minReadySeconds). */
  nodeReadySince?: string;
};
export type MachineObject = ApiObject<MachineSpec, MachineStatus>;

/** A Machine template as embedded in MachineSets and MachineDeployments. */
export type MachineTemplateSpec = {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Omit<MachineSpec, 'providerID'>;
};

// ---------------------------------------------------------------- MachineSet / MachineDeployment

export type DeletionOrder = 'Random' | 'Newest' | 'Oldest';

export type MachineSetSpec = {
  clusterName: string;
  replicas?: number;
  selector: SelectorSpec;
  template: MachineTemplateSpec;
  deletion?: { order?: DeletionOrder };
};

export type MachineSetStatus = WithConditions &
  ReplicaCounts & {
    selector?: string;
  };
export type MachineSetObject = ApiObject<MachineSetSpec, MachineSetStatus>;

export type RollingUpdate = {
  /** Integer or percentage. @default 1 */
  maxSurge?: number | string;
  /** Integer or percentage. @default 0 */
  maxUnavailable?: number | string;
};

export type MachineDeploymentSpec = {
  clusterName: string;
  /** @default 1 */
  replicas?: number;
  selector: SelectorSpec;
  template: MachineTemplateSpec;
  rollout?: {
    after?: string;
    strategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: RollingUpdate };
  };
  deletion?: { order?: DeletionOrder };
  paused?: boolean;
};

export type MachineDeploymentPhase = 'ScalingUp' | 'ScalingDown' | 'Running' | 'Failed' | 'Unknown';

export type MachineDeploymentStatus = WithConditions &
  ReplicaCounts & {
    phase?: MachineDeploymentPhase;
    selector?: string;
  };
export type MachineDeploymentObject = ApiObject<MachineDeploymentSpec, MachineDeploymentStatus>;

// ---------------------------------------------------------------- MachineHealthCheck

export type UnhealthyNodeCondition = {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  timeoutSeconds: number;
};

export type MachineHealthCheckSpec = {
  clusterName: string;
  selector: SelectorSpec;
  checks?: {
    /** 0 disables. @default 600 */
    nodeStartupTimeoutSeconds?: number;
    unhealthyNodeConditions?: UnhealthyNodeCondition[];
    unhealthyMachineConditions?: UnhealthyNodeCondition[];
  };
  remediation?: {
    triggerIf?: {
      /** Integer or percentage. @default "100%" */
      unhealthyLessThanOrEqualTo?: number | string;
      /** e.g. "[1-3]" */
      unhealthyInRange?: string;
    };
  };
};

export type MachineHealthCheckStatus = WithConditions & {
  expectedMachines?: number;
  currentHealthy?: number;
  remediationsAllowed?: number;
  targets?: string[];
};
export type MachineHealthCheckObject = ApiObject<MachineHealthCheckSpec, MachineHealthCheckStatus>;

// ---------------------------------------------------------------- Kubeadm bootstrap

export type KubeadmFile = {
  path: string;
  content: string;
  owner?: string;
  permissions?: string;
  encoding?: 'base64' | 'gzip' | 'gzip+base64';
};

export type KubeadmConfigSpec = {
  clusterConfiguration?: {
    kubernetesVersion?: string;
    controlPlaneEndpoint?: string;
    clusterName?: string;
    imageRepository?: string;
    networking?: { podSubnet?: string; serviceSubnet?: string; dnsDomain?: string };
    apiServer?: { certSANs?: string[]; extraArgs?: { name: string; value: string }[] };
  };
  initConfiguration?: {
    nodeRegistration?: NodeRegistration;
  };
  joinConfiguration?: {
    nodeRegistration?: NodeRegistration;
    controlPlane?: { localAPIEndpoint?: { advertiseAddress?: string; bindPort?: number } };
  };
  files?: KubeadmFile[];
  preKubeadmCommands?: string[];
  postKubeadmCommands?: string[];
  users?: { name: string; sshAuthorizedKeys?: string[]; sudo?: string }[];
  ntp?: { servers?: string[]; enabled?: boolean };
  /** @default cloud-config */
  format?: 'cloud-config' | 'ignition';
};

export type NodeRegistration = {
  name?: string;
  kubeletExtraArgs?: { name: string; value: string }[];
  taints?: { key: string; value?: string; effect: string }[];
};

export type KubeadmConfigStatus = WithConditions & {
  initialization?: { dataSecretCreated?: boolean };
  dataSecretName?: string;
  /** Magnetar: the bootstrap token id embedded in the data (for refresh and cleanup). */
  bootstrapTokenId?: string;
  /** Magnetar: when the token expires (ISO). */
  bootstrapTokenExpires?: string;
};
export type KubeadmConfigObject = ApiObject<KubeadmConfigSpec, KubeadmConfigStatus>;

export type KubeadmConfigTemplateSpec = {
  template: { spec: KubeadmConfigSpec };
};
export type KubeadmConfigTemplateObject = ApiObject<KubeadmConfigTemplateSpec, Record<string, never>>;

// ---------------------------------------------------------------- KubeadmControlPlane

export type KubeadmControlPlaneSpec = {
  /** Odd. @default 1 */
  replicas?: number;
  version: string;
  machineTemplate: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: { infrastructureRef: ObjectReference; deletion?: MachineDeletionSpec };
  };
  kubeadmConfigSpec: KubeadmConfigSpec;
  rollout?: {
    after?: string;
    strategy?: { type?: 'RollingUpdate'; rollingUpdate?: { maxSurge?: number } };
  };
  remediation?: { maxRetry?: number; retryPeriodSeconds?: number; minHealthyPeriodSeconds?: number };
};

export type KubeadmControlPlaneStatus = WithConditions &
  ReplicaCounts & {
    initialization?: { controlPlaneInitialized?: boolean };
    version?: string;
    selector?: string;
    lastRemediation?: { machine: string; time: string; retryCount: number };
  };
export type KubeadmControlPlaneObject = ApiObject<KubeadmControlPlaneSpec, KubeadmControlPlaneStatus>;

// ---------------------------------------------------------------- OpenStack provider (CAPO v1beta1)

/** A resource by id or by name filter. */
export type IdOrFilter = {
  id?: string;
  filter?: { name?: string; tags?: string[] };
};

export type OpenStackClusterSpec = {
  identityRef?: { type?: 'Secret' | 'ClusterIdentity'; name: string; cloudName?: string; region?: string };
  managedSubnets?: { cidr: string; dnsNameservers?: string[] }[];
  /** Existing network to use instead of a managed one. */
  network?: IdOrFilter;
  subnets?: IdOrFilter[];
  externalNetwork?: IdOrFilter;
  disableExternalNetwork?: boolean;
  apiServerLoadBalancer?: {
    enabled?: boolean;
    provider?: string;
    availabilityZone?: string;
    allowedCIDRs?: string[];
    monitor?: { delay?: number; timeout?: number; maxRetries?: number; maxRetriesDown?: number };
  };
  disableAPIServerFloatingIP?: boolean;
  apiServerFloatingIP?: string;
  /** @default 6443 */
  apiServerPort?: number;
  managedSecurityGroups?: { allowAllInClusterTraffic?: boolean };
  controlPlaneAvailabilityZones?: string[];
  tags?: string[];
  controlPlaneEndpoint?: ApiEndpoint;
};

export type OpenStackLoadBalancerStatus = {
  name: string;
  id: string;
  /** Floating IP (or VIP when no floating IP). */
  ip?: string;
  internalIP?: string;
  /** Magnetar: provisioning status last seen. */
  provisioningStatus?: string;
  /** Magnetar: ids of the API listener, pool, health monitor and floating IP. */
  listenerID?: string;
  poolID?: string;
  monitorID?: string;
  floatingIPID?: string;
  allowedCIDRs?: string[];
  tags?: string[];
};

export type OpenStackClusterStatus = WithConditions & {
  /** v1beta1 readiness. */
  ready?: boolean;
  initialization?: { provisioned?: boolean };
  network?: {
    id: string;
    name: string;
    tags?: string[];
    subnets?: { id: string; name: string; cidr: string }[];
  };
  externalNetwork?: { id: string; name: string };
  router?: { id: string; name: string; ips?: string[]; interfaceAdded?: boolean };
  apiServerLoadBalancer?: OpenStackLoadBalancerStatus;
  failureDomains?: FailureDomain[];
  controlPlaneSecurityGroup?: { id: string; name: string };
  workerSecurityGroup?: { id: string; name: string };
};
export type OpenStackClusterObject = ApiObject<OpenStackClusterSpec, OpenStackClusterStatus>;

export type OpenStackMachineSpec = {
  providerID?: string;
  /** Flavor name. */
  flavor?: string;
  flavorID?: string;
  image: IdOrFilter;
  sshKeyName?: string;
  ports?: { network?: IdOrFilter; nameSuffix?: string; description?: string; tags?: string[] }[];
  securityGroups?: IdOrFilter[];
  tags?: string[];
  serverMetadata?: { key: string; value: string }[];
  configDrive?: boolean;
  rootVolume?: { sizeGiB: number; type?: string; availabilityZone?: string };
};

/** Nova server status: BUILD, ACTIVE, ERROR, STOPPED, SHUTOFF, DELETED, SOFT_DELETED, … */
export type InstanceState = string;

export type OpenStackMachineStatus = WithConditions & {
  ready?: boolean;
  initialization?: { provisioned?: boolean };
  instanceID?: string;
  instanceState?: InstanceState;
  addresses?: MachineAddress[];
  failureDomain?: string;
  /** What the spec resolved to, persisted before any resource is created. */
  resolved?: {
    imageID: string;
    flavorID: string;
    networkID: string;
    subnetID?: string;
    securityGroupIDs: string[];
  };
  /** Resources created for this machine, recorded as soon as they exist. */
  resources?: { ports?: { id: string }[]; volumeID?: string; loadBalancerMemberID?: string };
};
export type OpenStackMachineObject = ApiObject<OpenStackMachineSpec, OpenStackMachineStatus>;

export type OpenStackMachineTemplateSpec = {
  template: { spec: OpenStackMachineSpec };
};
export type OpenStackMachineTemplateObject = ApiObject<OpenStackMachineTemplateSpec, Record<string, never>>;

// ---------------------------------------------------------------- Secret (core group)

/**
 * A Secret as stored: Kubernetes' `type` and `data` (base64 values) live under `spec`.
 * Bootstrap data Secrets hold cloud-init in `data.value`; their type is `cluster.x-k8s.io/secret`.
 */
export type SecretSpec = {
  type?: string;
  data?: Record<string, string>;
};
export type SecretObject = ApiObject<SecretSpec, Record<string, never>>;

/** Type of Secrets Cluster API writes. */
export const CAPI_SECRET_TYPE = 'cluster.x-k8s.io/secret';

/** Decoded `data[key]` of a Secret (UTF-8), or undefined. */
export function secretValue(secret: SecretObject | undefined, key = 'value'): string | undefined {
  const v = secret?.spec.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

// ---------------------------------------------------------------- helpers

/** A v1beta2 reference to `obj`. */
export function refTo(obj: {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}): ObjectReference {
  const slash = obj.apiVersion.indexOf('/');
  return {
    apiGroup: slash < 0 ? '' : obj.apiVersion.slice(0, slash),
    kind: obj.kind,
    name: obj.metadata.name,
  };
}

/** Store type key of a v1beta2 reference. */
export function refTypeKey(ref: ObjectReference): string {
  return ref.apiGroup === '' ? ref.kind : `${ref.kind}.${ref.apiGroup}`;
}

/** apiVersion Magnetar serves for a group. */
export function apiVersionOfGroup(group: string): string {
  switch (group) {
    case CapiGroups.core:
      return CAPI_API_VERSION;
    case CapiGroups.controlPlane:
      return CONTROLPLANE_API_VERSION;
    case CapiGroups.bootstrap:
      return BOOTSTRAP_API_VERSION;
    case CapiGroups.infrastructure:
      return INFRA_API_VERSION;
    default:
      return group === '' ? 'v1' : `${group}/v1`;
  }
}

/** Provider ID of an OpenStack server, as CAPO writes it. */
export function openstackProviderId(region: string, serverId: string): string {
  return `openstack://${region}/${serverId}`;
}

/** Server uuid from a provider ID (`openstack://<region>/<uuid>` or the legacy `openstack:///<uuid>`). */
export function serverIdFromProviderId(providerID: string | undefined): string | undefined {
  if (!providerID?.startsWith('openstack://')) return undefined;
  const id = providerID.slice(providerID.lastIndexOf('/') + 1);
  return id === '' ? undefined : id;
}

/** Kubernetes minor version number of `v1.31.4` (31), or undefined. */
export function kubeMinor(version: string | undefined): number | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return m ? Number(m[2]) : undefined;
}

/**
 * The kubeadm bootstrap token (`<id>.<secret>`) a join's cloud-init carries in its
 * JoinConfiguration (`discovery.bootstrapToken.token`), or undefined (`kubeadm init` needs none).
 * The workload emulator uses it to decide whether a booted machine can join its cluster.
 */
export function bootstrapTokenOf(cloudInit: string): string | undefined {
  return /\btoken:\s*['"]?([a-z0-9]{6}\.[a-z0-9]{16})['"]?/.exec(cloudInit)?.[1];
}

/** Which kubeadm command a bootstrap cloud-init runs. */
export function bootstrapCommandOf(cloudInit: string): 'init' | 'join' | undefined {
  if (/\bkubeadm init\b/.test(cloudInit)) return 'init';
  if (/\bkubeadm join\b/.test(cloudInit)) return 'join';
  return undefined;
}
