import { CapiConditions, CapiReasons, type ApiObject, type Condition } from '../../domain/index.ts';

/**
 * Views: the part of a watched object a reconciler reads (see `WatchSpec.view`). Each status
 * write of a busy object (a Machine is written about a dozen times while it comes up) would
 * otherwise wake every controller watching that kind, and each of those reconciles reads its
 * whole cluster again. A view leaves out what its readers never look at: status counters,
 * observed generations, transition times.
 */

/** Metadata that steers a reader (owners, labels, pause annotations, deletion) and the spec, by generation. */
function metadataView(o: ApiObject): unknown[] {
  const m = o.metadata;
  return [
    m.uid,
    m.generation,
    m.deletionTimestamp ?? null,
    m.labels,
    m.annotations,
    m.ownerReferences,
    m.finalizers,
  ];
}

type StatusOf = { status?: Record<string, unknown> & { conditions?: Condition[] } };

function conditionsView(o: ApiObject, messages: boolean, except?: string): unknown[] {
  const conditions = ((o as StatusOf).status?.conditions ?? []).filter((c) => c.type !== except);
  return conditions.map((c) =>
    messages ? [c.type, c.status, c.reason ?? '', c.message ?? ''] : [c.type, c.status, c.reason ?? ''],
  );
}

function statusFields(o: ApiObject, fields: readonly string[]): unknown[] {
  const status = (o as StatusOf).status ?? {};
  return fields.map((f) => status[f] ?? null);
}

/** Metadata and spec only: for readers that never look at the object's status. */
export const specView = (o: ApiObject): unknown => metadataView(o);

/**
 * A CAPI Cluster as the objects of the cluster read it: metadata, spec, whether its
 * infrastructure is provisioned and its control plane initialized, the failure domains, and
 * whether the workload cluster's API answers (the probe's status and reason). Not the probe's
 * message, which counts ready nodes and changes with every node that joins: a machine hears of
 * its own node from the node watch (`NodeSnapshots.onNodeChange`). Nor the replica counters and
 * other conditions the Cluster controller rewrites on every machine change.
 */
export const clusterForMembers = (o: ApiObject): unknown => {
  const probe = (o as StatusOf).status?.conditions?.find(
    (c) => c.type === CapiConditions.RemoteConnectionProbe,
  );
  return [
    metadataView(o),
    statusFields(o, ['initialization', 'failureDomains']),
    probe ? [probe.status, probe.reason ?? ''] : null,
  ];
};

/**
 * A Machine as the controllers that count machines read it (its Cluster, control plane, set):
 * metadata, spec, phase, node, addresses and conditions without their messages and transition
 * times, and without the health check's verdict (`HealthCheckSucceeded`, which the health check
 * writes on every machine it watches and no owner reads; `OwnerRemediated` is kept).
 */
export const machineForOwners = (o: ApiObject): unknown => machineView(o, false);

/**
 * A Machine as its health check reads it: the metadata that selects and exempts it, its node,
 * and the infrastructure and node readiness it judges (with the transition time a timeout counts
 * from). Not its spec, phase, addresses or the other conditions the Machine controller writes
 * while the machine comes up, nor the conditions the health check writes itself.
 */
export const machineForHealthChecks = (o: ApiObject): unknown => {
  const m = o.metadata;
  const conditions = (o as StatusOf).status?.conditions ?? [];
  const infra = conditions.find((c) => c.type === CapiConditions.InfrastructureReady);
  const node = conditions.find((c) => c.type === CapiConditions.NodeReady);
  return [
    [m.labels, m.annotations, m.ownerReferences, m.deletionTimestamp ?? null],
    statusFields(o, ['nodeRef']),
    // a server in ERROR is judged at once, its message quoted; otherwise readiness counts from its start
    infra?.reason === CapiReasons.InstanceStateError
      ? [infra.message ?? '']
      : [infra?.status === 'True' ? infra.lastTransitionTime : null],
    node ? [node.status, node.reason ?? '', node.lastTransitionTime] : null,
  ];
};

/** A MachineHealthCheck as the Magnum driver reads it: its spec and the remediations it made. */
export const healthCheckForMagnum = (o: ApiObject): unknown => [
  metadataView(o),
  statusFields(o, ['remediations']),
];

const MACHINE_STATUS_FIELDS = [
  'phase',
  'nodeRef',
  'addresses',
  'failureDomain',
  'initialization',
  'deletion',
];

function machineView(o: ApiObject, messages: boolean): unknown {
  return [
    metadataView(o),
    statusFields(o, MACHINE_STATUS_FIELDS),
    conditionsView(o, messages, CapiConditions.HealthCheckSucceeded),
  ];
}

/**
 * An object whose status another controller mirrors (a machine's infrastructure or bootstrap
 * object, a cluster's infrastructure, control plane and machine deployments): metadata, spec,
 * the named status fields and one condition, message included (Ready unless named).
 */
export function mirroredView(
  fields: readonly string[],
  condition: string = CapiConditions.Ready,
): (o: ApiObject) => unknown {
  return (o) => {
    const mirrored = (o as StatusOf).status?.conditions?.find((c) => c.type === condition);
    return [
      metadataView(o),
      statusFields(o, fields),
      mirrored ? [mirrored.status, mirrored.reason ?? '', mirrored.message ?? ''] : null,
    ];
  };
}

/**
 * An OpenStackCluster as its Cluster reads it: whether it is provisioned, its failure domains,
 * its Ready condition (mirrored as InfrastructureReady) and its spec (the endpoint). Not the
 * network, router, security group and load balancer IDs it records one by one while it builds.
 */
export const oscForCluster = mirroredView(['initialization', 'ready', 'failureDomains']);

/**
 * An OpenStackCluster as the Magnum driver reads it: its conditions with their messages (the
 * cluster's status reason while it builds and while it is deleted), whether it is provisioned,
 * and the load balancer address Magnum reports. Not the IDs it records one by one.
 */
export const oscForMagnum = (o: ApiObject): unknown => {
  const lb = (o as { status?: { apiServerLoadBalancer?: { ip?: string } } }).status?.apiServerLoadBalancer;
  return [
    metadataView(o),
    statusFields(o, ['initialization', 'ready']),
    lb?.ip ?? null,
    conditionsView(o, true),
  ];
};

/**
 * A control plane as its Cluster reads it: initialized or not, the replica counters the Cluster
 * reports, and its Available condition (mirrored as ControlPlaneAvailable).
 */
export const controlPlaneForCluster = mirroredView(
  ['initialization', 'replicas', 'readyReplicas', 'availableReplicas', 'upToDateReplicas'],
  CapiConditions.Available,
);

/**
 * A MachineDeployment as its Cluster reads it: the replicas it wants (spec), has available and
 * up to date, and its Available condition.
 */
export const deploymentForCluster = mirroredView(
  ['availableReplicas', 'upToDateReplicas'],
  CapiConditions.Available,
);

/** A Machine as the Magnum driver reads it: {@link machineForOwners} with the condition messages it reports. */
export const machineForMagnum = (o: ApiObject): unknown => machineView(o, true);

/** Metadata, spec and status without conditions: for readers of an object's results, not its progress. */
export const statusView = (o: ApiObject): unknown => {
  const { conditions: _conditions, observedGeneration: _observed, ...rest } = (o as StatusOf).status ?? {};
  return [metadataView(o), rest];
};

/**
 * An OpenStackCluster as its machines read it: they wait until it is ready and then use what
 * it built, so the steps of its construction do not wake them.
 */
export const oscForMachines = (o: ApiObject): unknown => {
  const status = (o as StatusOf).status ?? {};
  const ready =
    status.ready === true ||
    (status.initialization as { provisioned?: boolean } | undefined)?.provisioned === true;
  return ready ? statusView(o) : [metadataView(o), false];
};

/**
 * A CAPI Cluster as its infrastructure object reads it: which object it points at, whether it
 * is paused, and whether it is being deleted. Not the endpoint, annotations and finalizers the
 * Cluster gains while it comes up: each woke the infrastructure for a full pass of cloud checks.
 */
export const clusterForInfrastructure = (o: ApiObject): unknown => {
  const spec = (o as { spec?: { paused?: boolean; infrastructureRef?: unknown } }).spec ?? {};
  const m = o.metadata;
  return [
    m.uid,
    m.deletionTimestamp ?? null,
    spec.paused ?? false,
    'cluster.x-k8s.io/paused' in m.annotations,
    spec.infrastructureRef ?? null,
  ];
};

/** A copy of `spec` without the field at `path` (dot-separated), sharing everything else. */
function specWithout(spec: unknown, path: readonly string[]): unknown {
  if (!spec || typeof spec !== 'object' || path.length === 0) return spec;
  const [head, ...rest] = path as [string, ...string[]];
  const { [head]: inner, ...others } = spec as Record<string, unknown>;
  return rest.length === 0 || inner === undefined ? others : { ...others, [head]: specWithout(inner, rest) };
}

/**
 * Metadata and spec without some spec fields, for the readers of an object who do not read
 * those fields: results its own controller writes into the spec (a server's provider ID, the
 * bootstrap data's Secret name, the API endpoint). The pass that writes one of them goes on to
 * finish its work, so the write does not need to wake the controller for a pass of checks (for
 * the OpenStack controllers, a GET of every server or the whole load balancer), nor wake the
 * watchers of that field's owner that read other fields.
 */
export function specViewExcept(...fields: readonly string[]): (o: ApiObject) => unknown {
  const paths = fields.map((f) => f.split('.'));
  return (o) => {
    let spec: unknown = (o as { spec?: unknown }).spec ?? {};
    for (const path of paths) spec = specWithout(spec, path);
    const m = o.metadata;
    return [
      m.uid,
      m.deletionTimestamp ?? null,
      m.labels,
      m.annotations,
      m.ownerReferences,
      m.finalizers,
      spec,
    ];
  };
}

/**
 * A watched object as a reader that only waits for its deletion reads it: which object it is
 * and whether it is being deleted (additions and removals always count).
 */
export const deletionView = (o: ApiObject): unknown => [o.metadata.uid, o.metadata.deletionTimestamp ?? null];
