import {
  BOOTSTRAP_API_VERSION,
  CAPI_API_VERSION,
  CONTROLPLANE_API_VERSION,
  CapiAnnotations,
  CapiGroups,
  CapiLabels,
  INFRA_API_VERSION,
  type CapiClusterSpec,
  type ClusterTemplateObject,
  type KubeadmConfigSpec,
  type KubeadmControlPlaneSpec,
  type MachineDeploymentSpec,
  type MachineHealthCheckSpec,
  type MagnumClusterObject,
  type NewObject,
  type NodeGroupObject,
  type OpenStackClusterSpec,
  type OpenStackMachineSpec,
} from '../../domain/index.ts';
import { shortHash } from '../common/hash.ts';
import type { EngineSettings } from '../deps.ts';
import { isMaster, keypairCopyName, labelOf, magnumLabels, type MagnumNames } from './magnum-names.ts';

/**
 * The Cluster API objects a Magnum cluster should have, computed from the Magnum cluster, its
 * template and its node groups. Pure: the driver compares these with what exists and writes
 * the difference.
 */

/** One object to ensure. */
export interface DesiredObject {
  type: string;
  object: NewObject;
}

/** The desired objects of one worker node group. */
export interface DesiredGroup {
  nodeGroup: NodeGroupObject;
  machineDeployment: DesiredObject;
  configTemplate: DesiredObject;
  infraTemplate: DesiredObject;
  healthCheck?: DesiredObject;
}

/** Everything a Magnum cluster maps to. */
export interface DesiredCluster {
  cluster: DesiredObject;
  infraCluster: DesiredObject;
  controlPlane: DesiredObject;
  controlPlaneTemplate: DesiredObject;
  controlPlaneHealthCheck?: DesiredObject;
  groups: DesiredGroup[];
}

/** Inputs of {@link renderCluster}. */
export interface RenderInput {
  cluster: MagnumClusterObject;
  template: ClusterTemplateObject;
  nodeGroups: readonly NodeGroupObject[];
  names: MagnumNames;
  version: string;
  settings: EngineSettings;
  /** Health checks are paused (a failed cluster stops replacing machines until the next operation). */
  pauseHealthChecks: boolean;
}

const T = {
  Cluster: 'Cluster.cluster.x-k8s.io',
  OpenStackCluster: 'OpenStackCluster.infrastructure.cluster.x-k8s.io',
  KubeadmControlPlane: 'KubeadmControlPlane.controlplane.cluster.x-k8s.io',
  OpenStackMachineTemplate: 'OpenStackMachineTemplate.infrastructure.cluster.x-k8s.io',
  KubeadmConfigTemplate: 'KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io',
  MachineDeployment: 'MachineDeployment.cluster.x-k8s.io',
  MachineHealthCheck: 'MachineHealthCheck.cluster.x-k8s.io',
} as const;

function isUuid(s: string): boolean {
  return /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s);
}

/** An id-or-name reference as CAPO spells it. */
export function idOrName(v: string): { id: string } | { filter: { name: string } } {
  return isUuid(v) ? { id: v } : { filter: { name: v } };
}

/** Flavor of a node group: its own, else the cluster's (master/worker), else the template's. */
export function flavorOf(
  cluster: MagnumClusterObject,
  template: ClusterTemplateObject,
  ng: NodeGroupObject,
): string | null {
  if (isMaster(ng))
    return (
      ng.spec.flavorId ??
      cluster.spec.masterFlavorId ??
      template.spec.masterFlavorId ??
      template.spec.flavorId
    );
  return ng.spec.flavorId ?? cluster.spec.flavorId ?? template.spec.flavorId;
}

/** Image of a node group: its own, else the template's. */
export function imageOf(template: ClusterTemplateObject, ng: NodeGroupObject): string {
  return ng.spec.imageId ?? template.spec.imageId;
}

function machineSpec(input: RenderInput, ng: NodeGroupObject): OpenStackMachineSpec {
  const { cluster, template } = input;
  const keyCopy = keypairCopyName(cluster, template);
  const bootSize = labelOf('boot_volume_size', cluster, template, ng);
  const bootType = labelOf('boot_volume_type', cluster, template, ng);
  return {
    flavor: flavorOf(cluster, template, ng) ?? '',
    image: idOrName(imageOf(template, ng)),
    ...(keyCopy ? { sshKeyName: keyCopy } : {}),
    tags: [`magnum-cluster-${cluster.metadata.uid}`, `magnum-nodegroup-${ng.spec.name}`],
    serverMetadata: [
      { key: 'magnum_cluster', value: cluster.metadata.uid },
      { key: 'magnum_nodegroup', value: ng.spec.name },
    ],
    ...(bootSize && Number(bootSize) > 0
      ? { rootVolume: { sizeGiB: Number(bootSize), ...(bootType ? { type: bootType } : {}) } }
      : {}),
  };
}

function kubeletLabels(
  cluster: MagnumClusterObject,
  ng: NodeGroupObject,
): KubeadmConfigSpec['joinConfiguration'] {
  const labels = [
    `magnum.openstack.org/role=${ng.spec.role}`,
    `magnum.openstack.org/nodegroup=${ng.spec.name}`,
  ];
  for (const [k, v] of Object.entries(ng.spec.nodeLabels ?? {})) labels.push(`${k}=${v}`);
  void cluster;
  return {
    nodeRegistration: {
      kubeletExtraArgs: [{ name: 'node-labels', value: labels.join(',') }],
      ...(ng.spec.nodeTaints?.length ? { taints: ng.spec.nodeTaints } : {}),
    },
  };
}

/** Compute the desired Cluster API objects of a Magnum cluster. */
export function renderCluster(input: RenderInput): DesiredCluster {
  const { cluster, template, names, version, settings } = input;
  const ns = cluster.metadata.namespace;
  const base = magnumLabels(cluster, names.capi);
  const keyCopy = keypairCopyName(cluster, template);
  const master = input.nodeGroups.find(isMaster);
  const workers = input.nodeGroups.filter((ng) => !isMaster(ng));
  const label = (k: string) => labelOf(k, cluster, template);

  const clusterSpec: CapiClusterSpec = {
    clusterNetwork: {
      pods: { cidrBlocks: [label('calico_ipv4pool') ?? label('cilium_ipv4pool') ?? '10.100.0.0/16'] },
      services: { cidrBlocks: [label('service_cluster_ip_range') ?? '10.254.0.0/16'] },
      serviceDomain: label('dns_cluster_domain') ?? 'cluster.local',
      apiServerPort: template.spec.apiserverPort ?? 6443,
    },
    infrastructureRef: { apiGroup: CapiGroups.infrastructure, kind: 'OpenStackCluster', name: names.capi },
    controlPlaneRef: {
      apiGroup: CapiGroups.controlPlane,
      kind: 'KubeadmControlPlane',
      name: names.controlPlane,
    },
  };
  const fixedNetwork = cluster.spec.fixedNetwork ?? template.spec.fixedNetwork;
  const fixedSubnet = cluster.spec.fixedSubnet ?? template.spec.fixedSubnet;
  const oscSpec: OpenStackClusterSpec = {
    ...(fixedNetwork
      ? { network: idOrName(fixedNetwork), ...(fixedSubnet ? { subnets: [idOrName(fixedSubnet)] } : {}) }
      : {
          managedSubnets: [
            {
              cidr: label('fixed_subnet_cidr') ?? settings.defaultSubnetCidr,
              ...(template.spec.dnsNameserver ? { dnsNameservers: [template.spec.dnsNameserver] } : {}),
            },
          ],
        }),
    externalNetwork: idOrName(template.spec.externalNetworkId ?? 'public'),
    apiServerLoadBalancer: { enabled: true },
    disableAPIServerFloatingIP: label('master_lb_floating_ip_enabled') === 'false',
    apiServerPort: template.spec.apiserverPort ?? 6443,
    managedSecurityGroups: { allowAllInClusterTraffic: true },
    ...(label('control_plane_availability_zones')
      ? {
          controlPlaneAvailabilityZones: label('control_plane_availability_zones')!
            .split(/[,;]/)
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    tags: [`magnum-cluster-${cluster.metadata.uid}`],
  };

  const cpMachine = master ? machineSpec(input, master) : machineSpec(input, fakeMaster(cluster));
  const cpTemplateName = `${names.controlPlane}-${shortHash(cpMachine, 8)}`;
  const kubeadmConfigSpec: KubeadmConfigSpec = {
    clusterConfiguration: {
      clusterName: names.capi,
      networking: {
        podSubnet: clusterSpec.clusterNetwork!.pods!.cidrBlocks[0]!,
        serviceSubnet: clusterSpec.clusterNetwork!.services!.cidrBlocks[0]!,
        dnsDomain: clusterSpec.clusterNetwork!.serviceDomain!,
      },
      ...(label('api_server_cert_sans')
        ? {
            apiServer: {
              certSANs: label('api_server_cert_sans')!
                .split(',')
                .map((s) => s.trim()),
            },
          }
        : {}),
    },
    initConfiguration: kubeletLabels(cluster, master ?? fakeMaster(cluster)),
    joinConfiguration: kubeletLabels(cluster, master ?? fakeMaster(cluster)),
  };
  const kcpSpec: KubeadmControlPlaneSpec = {
    replicas: master?.spec.nodeCount ?? 1,
    version,
    machineTemplate: {
      metadata: { labels: magnumLabels(cluster, names.capi, 'default-master') },
      spec: {
        infrastructureRef: {
          apiGroup: CapiGroups.infrastructure,
          kind: 'OpenStackMachineTemplate',
          name: cpTemplateName,
        },
        deletion: { nodeDrainTimeoutSeconds: settings.nodeDrainTimeoutSeconds },
      },
    },
    kubeadmConfigSpec,
    rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
  };

  const autoHealing = (label('auto_healing_enabled') ?? 'true') !== 'false';
  const healthCheck = (name: string, nodeGroup: string): DesiredObject => {
    const spec: MachineHealthCheckSpec = {
      clusterName: names.capi,
      selector: {
        matchLabels: {
          [CapiLabels.clusterName]: names.capi,
          [CapiLabels.nodeGroup]: magnumLabels(cluster, names.capi, nodeGroup)[CapiLabels.nodeGroup]!,
        },
      },
      checks: {
        nodeStartupTimeoutSeconds: settings.nodeStartupTimeoutSeconds,
        unhealthyNodeConditions: [
          { type: 'Ready', status: 'False', timeoutSeconds: settings.unhealthyNodeTimeoutSeconds },
          { type: 'Ready', status: 'Unknown', timeoutSeconds: settings.unhealthyNodeTimeoutSeconds },
        ],
      },
      remediation: { triggerIf: { unhealthyLessThanOrEqualTo: settings.maxUnhealthy } },
    };
    return {
      type: T.MachineHealthCheck,
      object: {
        apiVersion: CAPI_API_VERSION,
        kind: 'MachineHealthCheck',
        metadata: {
          name,
          namespace: ns,
          labels: magnumLabels(cluster, names.capi, nodeGroup),
          annotations: input.pauseHealthChecks ? { [CapiAnnotations.paused]: 'true' } : {},
        },
        spec: spec,
      },
    };
  };

  const groups: DesiredGroup[] = workers.map((ng) => {
    const groupName = names.group(ng.spec.name);
    const spec = machineSpec(input, ng);
    const osmtName = `${groupName}-${shortHash(spec, 8)}`;
    const az = ng.spec.labels.availability_zone ?? cluster.spec.labels.availability_zone;
    const groupLabels = magnumLabels(cluster, names.capi, ng.spec.name);
    const mdSpec: MachineDeploymentSpec = {
      clusterName: names.capi,
      replicas: ng.spec.nodeCount,
      selector: { matchLabels: { [CapiLabels.deploymentName]: groupName } },
      template: {
        metadata: { labels: groupLabels },
        spec: {
          clusterName: names.capi,
          version,
          ...(az ? { failureDomain: az } : {}),
          bootstrap: {
            configRef: { apiGroup: CapiGroups.bootstrap, kind: 'KubeadmConfigTemplate', name: groupName },
          },
          infrastructureRef: {
            apiGroup: CapiGroups.infrastructure,
            kind: 'OpenStackMachineTemplate',
            name: osmtName,
          },
          deletion: { nodeDrainTimeoutSeconds: settings.nodeDrainTimeoutSeconds },
        },
      },
      rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
      deletion: { order: 'Oldest' },
    };
    return {
      nodeGroup: ng,
      machineDeployment: {
        type: T.MachineDeployment,
        object: {
          apiVersion: CAPI_API_VERSION,
          kind: 'MachineDeployment',
          metadata: {
            name: groupName,
            namespace: ns,
            labels: groupLabels,
            annotations: { 'magnum.magnetar.io/nodegroup': ng.spec.name },
          },
          spec: mdSpec,
        },
      },
      configTemplate: {
        type: T.KubeadmConfigTemplate,
        object: {
          apiVersion: BOOTSTRAP_API_VERSION,
          kind: 'KubeadmConfigTemplate',
          metadata: { name: groupName, namespace: ns, labels: groupLabels },
          spec: { template: { spec: { joinConfiguration: kubeletLabels(cluster, ng) } } },
        },
      },
      infraTemplate: {
        type: T.OpenStackMachineTemplate,
        object: {
          apiVersion: INFRA_API_VERSION,
          kind: 'OpenStackMachineTemplate',
          metadata: { name: osmtName, namespace: ns, labels: groupLabels },
          spec: { template: { spec } },
        },
      },
      ...(autoHealing ? { healthCheck: healthCheck(groupName, ng.spec.name) } : {}),
    };
  });

  return {
    cluster: {
      type: T.Cluster,
      object: {
        apiVersion: CAPI_API_VERSION,
        kind: 'Cluster',
        metadata: {
          name: names.capi,
          namespace: ns,
          labels: {
            ...base,
            ...(keyCopy ? { [CapiLabels.keypairCopy]: keyCopy } : {}),
          },
          annotations: { [CapiAnnotations.displayName]: cluster.metadata.name },
        },
        spec: clusterSpec,
      },
    },
    infraCluster: {
      type: T.OpenStackCluster,
      object: {
        apiVersion: INFRA_API_VERSION,
        kind: 'OpenStackCluster',
        metadata: { name: names.capi, namespace: ns, labels: base },
        spec: oscSpec,
      },
    },
    controlPlane: {
      type: T.KubeadmControlPlane,
      object: {
        apiVersion: CONTROLPLANE_API_VERSION,
        kind: 'KubeadmControlPlane',
        metadata: { name: names.controlPlane, namespace: ns, labels: base },
        spec: kcpSpec,
      },
    },
    controlPlaneTemplate: {
      type: T.OpenStackMachineTemplate,
      object: {
        apiVersion: INFRA_API_VERSION,
        kind: 'OpenStackMachineTemplate',
        metadata: {
          name: cpTemplateName,
          namespace: ns,
          labels: magnumLabels(cluster, names.capi, 'default-master'),
        },
        spec: { template: { spec: cpMachine } },
      },
    },
    ...(autoHealing ? { controlPlaneHealthCheck: healthCheck(names.controlPlane, 'default-master') } : {}),
    groups,
  };
}

/** A stand-in master node group when the store has none (never expected; keeps rendering total). */
function fakeMaster(cluster: MagnumClusterObject): NodeGroupObject {
  return {
    apiVersion: 'magnum.magnetar.io/v1',
    kind: 'NodeGroup',
    metadata: { ...cluster.metadata, name: `${cluster.metadata.uid}.default-master` },
    spec: {
      action: 'CREATE',
      operationId: '',
      clusterId: cluster.metadata.uid,
      name: 'default-master',
      role: 'master',
      nodeCount: 1,
      minNodeCount: 1,
      maxNodeCount: null,
      flavorId: null,
      imageId: null,
      dockerVolumeSize: null,
      labels: {},
      isDefault: true,
      id: 0,
    },
    status: {},
  };
}

/**
 * The last render of each Magnum cluster. The driver reconciles a cluster on every change of
 * its Cluster API objects (about 40 times in a create), but what it renders from changes only
 * with an operation: a new generation of the cluster or of a node group, a template edit, the
 * version it steps to, health checks paused or not. Those make the key; anything else gives the
 * kept render back. Each caller gets its own copy of the little the driver changes in place
 * (the Cluster's annotations) and the node groups it was called with.
 */
export class RenderCache {
  private readonly last = new Map<string, { key: string; desired: DesiredCluster }>();

  constructor(private readonly max = 10_000) {}

  render(input: RenderInput): DesiredCluster {
    const uid = input.cluster.metadata.uid;
    const key = [
      input.cluster.metadata.generation,
      input.template.metadata.uid,
      input.template.metadata.resourceVersion,
      input.nodeGroups.map((g) => `${g.metadata.uid}:${g.metadata.generation}`).join(','),
      input.version,
      input.pauseHealthChecks,
    ].join('|');
    let hit = this.last.get(uid);
    if (hit?.key !== key) {
      hit = { key, desired: renderCluster(input) };
      if (this.last.size >= this.max) this.last.clear();
      this.last.set(uid, hit);
    }
    const d = hit.desired;
    const groups = new Map(input.nodeGroups.map((g) => [g.metadata.uid, g]));
    const meta = d.cluster.object.metadata;
    return {
      ...d,
      cluster: {
        ...d.cluster,
        object: { ...d.cluster.object, metadata: { ...meta, annotations: { ...meta.annotations } } },
      },
      groups: d.groups.map((g) => ({ ...g, nodeGroup: groups.get(g.nodeGroup.metadata.uid) ?? g.nodeGroup })),
    };
  }

  /** Drop a cluster's render (the cluster is gone). */
  forget(uid: string): void {
    this.last.delete(uid);
  }
}
