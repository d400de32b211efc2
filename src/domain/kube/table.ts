import { age } from './duration.ts';
import type {
  KubeConfigMap,
  KubeMeta,
  KubeNamespace,
  KubeNode,
  KubeObject,
  KubePod,
  KubePodDisruptionBudget,
  KubeSecret,
} from './wire.ts';

/**
 * Server-side printing: the `Table` (meta.k8s.io/v1) answers `kubectl get` asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Each row carries its cells and
 * the object's metadata (`PartialObjectMetadata`), from which kubectl adds the NAMESPACE
 * column for `-A`. Columns with priority 1 show only with `-o wide`.
 */

/** One column of a Table. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

/** One row. */
export interface TableRow {
  cells: (string | number | boolean)[];
  object?: KubeObject;
}

/** A `Table` response. */
export interface KubeTable {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion: string; continue?: string };
  columnDefinitions: TableColumn[];
  rows: TableRow[];
}

/** What a row embeds (`includeObject` query parameter). @default Metadata */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A printer: columns and how to compute one row's cells. */
export interface Printer<T extends KubeObject = KubeObject> {
  columns: TableColumn[];
  cells(obj: T, nowMs: number): (string | number | boolean)[];
}

function col(
  name: string,
  description: string,
  options: { type?: TableColumn['type']; format?: string; priority?: number } = {},
): TableColumn {
  return {
    name,
    type: options.type ?? 'string',
    format: options.format ?? '',
    description,
    priority: options.priority ?? 0,
  };
}

const NAME = col('Name', 'Name must be unique within a namespace.', { format: 'name' });
const AGE = col('Age', 'CreationTimestamp is when the object was created.');

/** True when an Accept header asks for a meta.k8s.io Table. */
export function acceptsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const params = part.split(';').map((p) => p.trim());
    return (
      params.includes('as=Table') &&
      params.includes('g=meta.k8s.io') &&
      (params.includes('v=v1') || params.includes('v=v1beta1'))
    );
  });
}

/** Build a Table from objects with a printer. */
export function buildTable<T extends KubeObject>(
  printer: Printer<T>,
  items: T[],
  options: { resourceVersion: string; nowMs: number; includeObject?: IncludeObject; continue?: string },
): KubeTable {
  const include = options.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      resourceVersion: options.resourceVersion,
      ...(options.continue ? { continue: options.continue } : {}),
    },
    columnDefinitions: printer.columns,
    rows: items.map((obj) => ({
      cells: printer.cells(obj, options.nowMs),
      ...(include === 'None' ? {} : { object: include === 'Object' ? obj : partialMetadata(obj.metadata) }),
    })),
  };
}

/** The `PartialObjectMetadata` a Table row carries by default. */
export function partialMetadata(metadata: KubeMeta): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

/** Name and Age: the printer of kinds without a dedicated one. */
export const defaultPrinter: Printer = {
  columns: [NAME, AGE],
  cells: (o, now) => [o.metadata.name ?? '', age(o.metadata.creationTimestamp, now)],
};

/** Node roles from `node-role.kubernetes.io/<role>` and `kubernetes.io/role` labels. */
export function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role !== '') roles.add(role);
    } else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
  }
  return [...roles].sort();
}

/** The STATUS kubectl shows for a node: Ready/NotReady/Unknown, plus SchedulingDisabled when cordoned. */
export function nodeStatusText(node: KubeNode): string {
  const ready = node.status.conditions?.find((c) => c.type === 'Ready');
  const parts = [ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown'];
  if (node.spec.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function address(node: KubeNode, type: string): string {
  return node.status.addresses?.find((a) => a.type === type)?.address ?? '<none>';
}

export const nodePrinter: Printer<KubeNode> = {
  columns: [
    NAME,
    col('Status', 'The status of the node'),
    col('Roles', 'The roles of the node'),
    AGE,
    col('Version', 'Kubelet Version reported by the node.'),
    col('Internal-IP', 'List of internal IPs for the node.', { priority: 1 }),
    col('External-IP', 'List of external IPs for this node.', { priority: 1 }),
    col(
      'OS-Image',
      'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
      { priority: 1 },
    ),
    col(
      'Kernel-Version',
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      { priority: 1 },
    ),
    col(
      'Container-Runtime',
      'Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
      { priority: 1 },
    ),
  ],
  cells: (n, now) => {
    const roles = nodeRoles(n.metadata.labels);
    const info = n.status.nodeInfo ?? {};
    return [
      n.metadata.name ?? '',
      nodeStatusText(n),
      roles.length > 0 ? roles.join(',') : '<none>',
      age(n.metadata.creationTimestamp, now),
      info.kubeletVersion ?? '',
      address(n, 'InternalIP'),
      address(n, 'ExternalIP'),
      info.osImage ?? '<unknown>',
      info.kernelVersion ?? '<unknown>',
      info.containerRuntimeVersion ?? '<unknown>',
    ];
  },
};

/** The STATUS kubectl shows for a pod (phase, a waiting reason, or Terminating). */
export function podStatusText(pod: KubePod): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const waiting = pod.status.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting?.reason;
  return waiting ?? pod.status.reason ?? pod.status.phase ?? 'Unknown';
}

export const podPrinter: Printer<KubePod> = {
  columns: [
    NAME,
    col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE,
    col('IP', 'IP address allocated to the pod.', { priority: 1 }),
    col('Node', 'Name of the Node this pod is assigned to.', { priority: 1 }),
    col('Nominated Node', 'Name of the node this pod is nominated to.', { priority: 1 }),
    col('Readiness Gates', 'Readiness gates of the pod.', { priority: 1 }),
  ],
  cells: (p, now) => {
    const statuses = p.status.containerStatuses ?? [];
    const ready = statuses.filter((c) => c.ready).length;
    const restarts = statuses.reduce((n, c) => n + c.restartCount, 0);
    return [
      p.metadata.name ?? '',
      `${ready}/${p.spec.containers.length}`,
      podStatusText(p),
      String(restarts),
      age(p.metadata.creationTimestamp, now),
      p.status.podIP ?? '<none>',
      p.spec.nodeName ?? '<none>',
      '<none>',
      '<none>',
    ];
  },
};

export const namespacePrinter: Printer<KubeNamespace> = {
  columns: [NAME, col('Status', 'The status of the namespace'), AGE],
  cells: (ns, now) => [
    ns.metadata.name ?? '',
    ns.status?.phase ?? 'Active',
    age(ns.metadata.creationTimestamp, now),
  ],
};

export const secretPrinter: Printer<KubeSecret> = {
  columns: [
    NAME,
    col('Type', 'The type of the secret'),
    col('Data', 'The number of entries in the secret', { type: 'integer' }),
    AGE,
  ],
  cells: (s, now) => [
    s.metadata.name ?? '',
    s.type ?? 'Opaque',
    Object.keys(s.data ?? {}).length,
    age(s.metadata.creationTimestamp, now),
  ],
};

export const configMapPrinter: Printer<KubeConfigMap> = {
  columns: [NAME, col('Data', 'The number of entries in the configmap', { type: 'integer' }), AGE],
  cells: (c, now) => [
    c.metadata.name ?? '',
    Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length,
    age(c.metadata.creationTimestamp, now),
  ],
};

export const podDisruptionBudgetPrinter: Printer<KubePodDisruptionBudget> = {
  columns: [
    NAME,
    col('Min Available', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', {
      type: 'integer',
    }),
    AGE,
  ],
  cells: (p, now) => [
    p.metadata.name ?? '',
    p.spec.minAvailable === undefined ? 'N/A' : String(p.spec.minAvailable),
    p.spec.maxUnavailable === undefined ? 'N/A' : String(p.spec.maxUnavailable),
    p.status.disruptionsAllowed,
    age(p.metadata.creationTimestamp, now),
  ],
};

interface WorkloadCounts extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { nodeSelector?: Record<string, string> } } };
  status?: Record<string, number | undefined>;
}

const n = (v: number | undefined) => v ?? 0;

export const daemonSetPrinter: Printer<WorkloadCounts> = {
  columns: [
    NAME,
    col('Desired', 'The desired number of pods.', { type: 'integer' }),
    col('Current', 'The current number of pods.', { type: 'integer' }),
    col('Ready', 'The number of pods ready.', { type: 'integer' }),
    col('Up-to-date', 'The number of pods updated.', { type: 'integer' }),
    col('Available', 'The number of pods available.', { type: 'integer' }),
    col('Node Selector', 'Which nodes will the pod be scheduled to.'),
    AGE,
  ],
  cells: (d, now) => {
    const s = d.status ?? {};
    const sel = Object.entries(d.spec?.template?.spec?.nodeSelector ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    return [
      d.metadata.name ?? '',
      n(s.desiredNumberScheduled),
      n(s.currentNumberScheduled),
      n(s.numberReady),
      n(s.updatedNumberScheduled),
      n(s.numberAvailable),
      sel === '' ? '<none>' : sel,
      age(d.metadata.creationTimestamp, now),
    ];
  },
};

export const deploymentPrinter: Printer<WorkloadCounts> = {
  columns: [
    NAME,
    col('Ready', 'Number of the pod with ready state'),
    col(
      'Up-to-date',
      'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      { type: 'integer' },
    ),
    col(
      'Available',
      'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      { type: 'integer' },
    ),
    AGE,
  ],
  cells: (d, now) => {
    const s = d.status ?? {};
    return [
      d.metadata.name ?? '',
      `${n(s.readyReplicas)}/${n(d.spec?.replicas)}`,
      n(s.updatedReplicas),
      n(s.availableReplicas),
      age(d.metadata.creationTimestamp, now),
    ];
  },
};

export const replicaSetPrinter: Printer<WorkloadCounts> = {
  columns: [
    NAME,
    col('Desired', 'Number of desired pods.', { type: 'integer' }),
    col('Current', 'Number of actual replicas.', { type: 'integer' }),
    col('Ready', 'The number of ready replicas for this replica set.', { type: 'integer' }),
    AGE,
  ],
  cells: (r, now) => {
    const s = r.status ?? {};
    return [
      r.metadata.name ?? '',
      n(r.spec?.replicas),
      n(s.replicas),
      n(s.readyReplicas),
      age(r.metadata.creationTimestamp, now),
    ];
  },
};
