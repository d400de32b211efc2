import {
  age,
  CapiTypes,
  defaultPrinter,
  type Condition,
  type KubeObject,
  type Printer,
  type TableColumn,
} from '../../domain/index.ts';

/**
 * `kubectl get` columns of the Cluster API resources: the `additionalPrinterColumns` of the
 * upstream CRDs (NAME and AGE first/last as kubectl shows them). Cells are computed from the
 * served object; missing values print as empty cells, as for CRDs.
 */

function col(
  name: string,
  description: string,
  type: TableColumn['type'] = 'string',
  priority = 0,
): TableColumn {
  return { name, type, format: name === 'Name' ? 'name' : '', description, priority };
}

const NAME = col('Name', 'Name must be unique within a namespace.');
const AGE = col('Age', 'Time duration since creation of the object.');
const CLUSTER = col('Cluster', 'Cluster');

type Cell = string | number | boolean;

/** A dotted path of the object (`spec.replicas`), or undefined. */
function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function str(obj: unknown, path: string): string {
  const v = at(obj, path);
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

function num(obj: unknown, path: string): Cell {
  const v = at(obj, path);
  return typeof v === 'number' ? v : '';
}

function condition(obj: unknown, type: string): string {
  const list = at(obj, 'status.conditions');
  if (!Array.isArray(list)) return '';
  return (list as Condition[]).find((c) => c.type === type)?.status ?? '';
}

function clusterOf(o: KubeObject): string {
  return str(o, 'spec.clusterName') || (o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '');
}

function printer(columns: TableColumn[], cells: (o: KubeObject) => Cell[]): Printer {
  return {
    columns: [NAME, ...columns, AGE],
    cells: (o, now) => [o.metadata.name ?? '', ...cells(o), age(o.metadata.creationTimestamp, now)],
  };
}

/** AGE is not last for some kinds (VERSION follows it). */
function printerWithTail(
  columns: TableColumn[],
  tail: TableColumn[],
  cells: (o: KubeObject) => Cell[],
  tailCells: (o: KubeObject) => Cell[],
): Printer {
  return {
    columns: [NAME, ...columns, AGE, ...tail],
    cells: (o, now) => [
      o.metadata.name ?? '',
      ...cells(o),
      age(o.metadata.creationTimestamp, now),
      ...tailCells(o),
    ],
  };
}

const VERSION = col('Version', 'Kubernetes version');
const phaseCol = (what: string) =>
  col('Phase', `${what} status such as Pending/Provisioning/Running/Deleting`);

const PRINTERS: Record<string, Printer> = {
  [CapiTypes.Cluster]: printerWithTail(
    [col('ClusterClass', 'ClusterClass of this Cluster, empty if not using one'), phaseCol('Cluster')],
    [VERSION],
    (o) => [str(o, 'spec.topology.classRef.name') || str(o, 'spec.topology.class'), str(o, 'status.phase')],
    (o) => [str(o, 'spec.topology.version')],
  ),
  [CapiTypes.Machine]: printerWithTail(
    [
      CLUSTER,
      col('NodeName', 'Node name associated with this machine'),
      col('ProviderID', 'Provider ID'),
      phaseCol('Machine'),
    ],
    [VERSION],
    (o) => [clusterOf(o), str(o, 'status.nodeRef.name'), str(o, 'spec.providerID'), str(o, 'status.phase')],
    (o) => [str(o, 'spec.version')],
  ),
  [CapiTypes.MachineSet]: printerWithTail(
    [
      CLUSTER,
      col('Replicas', 'Total number of machines desired by this MachineSet', 'integer'),
      col('Ready', 'Total number of ready machines targeted by this MachineSet', 'integer'),
      col('Available', 'Total number of available machines targeted by this MachineSet', 'integer'),
    ],
    [VERSION],
    (o) => [
      clusterOf(o),
      num(o, 'spec.replicas'),
      num(o, 'status.readyReplicas'),
      num(o, 'status.availableReplicas'),
    ],
    (o) => [str(o, 'spec.template.spec.version')],
  ),
  [CapiTypes.MachineDeployment]: printerWithTail(
    [
      CLUSTER,
      col('Replicas', 'Total number of machines desired by this MachineDeployment', 'integer'),
      col('Ready', 'Total number of ready machines targeted by this MachineDeployment', 'integer'),
      col('Updated', 'Total number of machines with the desired template spec', 'integer'),
      col(
        'Unavailable',
        'Total number of unavailable machines targeted by this MachineDeployment',
        'integer',
      ),
      phaseCol('MachineDeployment'),
    ],
    [VERSION],
    (o) => {
      const desired = at(o, 'spec.replicas');
      const available = at(o, 'status.availableReplicas');
      const current = at(o, 'status.replicas');
      const unavailable =
        typeof current === 'number'
          ? Math.max(0, current - (typeof available === 'number' ? available : 0))
          : '';
      return [
        clusterOf(o),
        typeof desired === 'number' ? desired : '',
        num(o, 'status.readyReplicas'),
        num(o, 'status.upToDateReplicas'),
        unavailable,
        str(o, 'status.phase'),
      ];
    },
    (o) => [str(o, 'spec.template.spec.version')],
  ),
  [CapiTypes.MachineHealthCheck]: printer(
    [
      CLUSTER,
      col('ExpectedMachines', 'Number of machines currently monitored', 'integer'),
      col('MaxUnhealthy', 'Maximum number of unhealthy machines allowed'),
      col('CurrentHealthy', 'Current observed healthy machines', 'integer'),
    ],
    (o) => [
      clusterOf(o),
      num(o, 'status.expectedMachines'),
      str(o, 'spec.remediation.triggerIf.unhealthyLessThanOrEqualTo') || '100%',
      num(o, 'status.currentHealthy'),
    ],
  ),
  [CapiTypes.KubeadmControlPlane]: printerWithTail(
    [
      CLUSTER,
      col(
        'Initialized',
        'This denotes whether or not the control plane has the uploaded kubeadm-config configmap',
      ),
      col('API Server Available', 'KubeadmControlPlane API Server is ready to receive requests'),
      col('Replicas', 'Total number of machines desired by this control plane', 'integer'),
      col('Ready', 'Total number of fully running and ready control plane machines', 'integer'),
      col(
        'Updated',
        'Total number of non-terminated machines that have the desired template spec',
        'integer',
      ),
      col('Unavailable', 'Total number of unavailable machines targeted by this control plane', 'integer'),
    ],
    [VERSION],
    (o) => {
      const current = at(o, 'status.replicas');
      const available = at(o, 'status.availableReplicas');
      return [
        o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '',
        str(o, 'status.initialization.controlPlaneInitialized') || 'false',
        condition(o, 'Available') === 'True' ? 'true' : 'false',
        num(o, 'spec.replicas') === '' ? 1 : num(o, 'spec.replicas'),
        num(o, 'status.readyReplicas'),
        num(o, 'status.upToDateReplicas'),
        typeof current === 'number'
          ? Math.max(0, current - (typeof available === 'number' ? available : 0))
          : '',
      ];
    },
    (o) => [str(o, 'spec.version')],
  ),
  [CapiTypes.KubeadmConfig]: printer(
    [CLUSTER, col('Data Secret Created', 'Boostrap secret is created')],
    (o) => [
      o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '',
      str(o, 'status.initialization.dataSecretCreated') || 'false',
    ],
  ),
  [CapiTypes.KubeadmConfigTemplate]: printer([], () => []),
  [CapiTypes.OpenStackCluster]: printer(
    [
      CLUSTER,
      col('Ready', 'Cluster infrastructure is ready for OpenStack instances'),
      col('Network', 'Network the cluster is using'),
      col('Endpoint', 'API Endpoint'),
    ],
    (o) => {
      const host = str(o, 'spec.controlPlaneEndpoint.host');
      const port = str(o, 'spec.controlPlaneEndpoint.port');
      return [
        o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '',
        str(o, 'status.ready') || 'false',
        str(o, 'status.network.id'),
        host ? `${host}:${port || '6443'}` : '',
      ];
    },
  ),
  [CapiTypes.OpenStackMachine]: printer(
    [
      CLUSTER,
      col('InstanceState', 'OpenStack instance state'),
      col('Ready', 'OpenStack instance ready status'),
      col('ProviderID', 'OpenStack instance ID'),
      col('Machine', 'Machine object which owns with this OpenStackMachine'),
    ],
    (o) => [
      o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? '',
      str(o, 'status.instanceState'),
      str(o, 'status.ready') || 'false',
      str(o, 'spec.providerID'),
      o.metadata.ownerReferences?.find((r) => r.kind === 'Machine')?.name ?? '',
    ],
  ),
  [CapiTypes.OpenStackMachineTemplate]: printer([], () => []),
};

/** The printer of a store type (Name/Age for kinds without columns). */
export function printerOf(type: string): Printer {
  return PRINTERS[type] ?? defaultPrinter;
}
