import { CapiGroups, CapiTypes, type ApiResource } from '../../domain/index.ts';

/**
 * The Cluster API resources the kube façade serves: which store type backs each, its
 * group/version, names as kubectl knows them (plural, singular, short names, categories) and
 * its subresources. Short names and categories are those of the upstream CRDs.
 */

/** One served resource. */
export interface KubeResource {
  group: string;
  /** The one version served (the stored objects' apiVersion). */
  version: string;
  plural: string;
  singular: string;
  kind: string;
  /** Store type key. */
  type: string;
  shortNames: string[];
  /** `spec.replicas` can be read and written through `/scale`. */
  scale: boolean;
  /** Field paths `fieldSelector` accepts besides metadata.name/namespace. */
  fields: string[];
}

const CATEGORY = 'cluster-api';
const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

function res(
  group: string,
  version: string,
  kind: string,
  type: string,
  shortNames: string[],
  options: { scale?: boolean; fields?: string[] } = {},
): KubeResource {
  const singular = kind.toLowerCase();
  return {
    group,
    version,
    plural: `${singular}s`,
    singular,
    kind,
    type,
    shortNames,
    scale: options.scale ?? false,
    fields: options.fields ?? [],
  };
}

/** Every served resource. */
export const RESOURCES: readonly KubeResource[] = [
  res(CapiGroups.core, 'v1beta2', 'Cluster', CapiTypes.Cluster, ['cl'], { fields: ['status.phase'] }),
  res(CapiGroups.core, 'v1beta2', 'Machine', CapiTypes.Machine, ['ma'], {
    fields: ['spec.clusterName', 'status.phase', 'status.nodeRef.name', 'spec.providerID'],
  }),
  res(CapiGroups.core, 'v1beta2', 'MachineSet', CapiTypes.MachineSet, ['ms'], {
    scale: true,
    fields: ['spec.clusterName'],
  }),
  res(CapiGroups.core, 'v1beta2', 'MachineDeployment', CapiTypes.MachineDeployment, ['md'], {
    scale: true,
    fields: ['spec.clusterName', 'status.phase'],
  }),
  res(CapiGroups.core, 'v1beta2', 'MachineHealthCheck', CapiTypes.MachineHealthCheck, ['mhc', 'mhcs'], {
    fields: ['spec.clusterName'],
  }),
  res(CapiGroups.controlPlane, 'v1beta2', 'KubeadmControlPlane', CapiTypes.KubeadmControlPlane, ['kcp'], {
    scale: true,
  }),
  res(CapiGroups.bootstrap, 'v1beta2', 'KubeadmConfig', CapiTypes.KubeadmConfig, []),
  res(CapiGroups.bootstrap, 'v1beta2', 'KubeadmConfigTemplate', CapiTypes.KubeadmConfigTemplate, []),
  res(CapiGroups.infrastructure, 'v1beta1', 'OpenStackCluster', CapiTypes.OpenStackCluster, ['osc']),
  res(CapiGroups.infrastructure, 'v1beta1', 'OpenStackMachine', CapiTypes.OpenStackMachine, ['osm'], {
    fields: ['spec.providerID', 'status.instanceState'],
  }),
  res(CapiGroups.infrastructure, 'v1beta1', 'OpenStackMachineTemplate', CapiTypes.OpenStackMachineTemplate, [
    'osmt',
  ]),
];

/** The groups served, each with its one version. */
export function servedGroups(): { name: string; versions: string[] }[] {
  const out = new Map<string, string>();
  for (const r of RESOURCES) out.set(r.group, r.version);
  return [...out].map(([name, version]) => ({ name, versions: [version] }));
}

/** The resource at `/apis/<group>/<version>/…/<plural>`, or undefined. */
export function findResource(group: string, version: string, plural: string): KubeResource | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** The resource backing a store type key, or undefined. */
export function resourceOfType(type: string): KubeResource | undefined {
  return RESOURCES.find((r) => r.type === type);
}

/** `APIResourceList` entries of one group/version: resources, `/status`, and `/scale` where served. */
export function discoveryResources(group: string, version: string): ApiResource[] | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const out: ApiResource[] = [];
  for (const r of rs) {
    out.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: true,
      kind: r.kind,
      verbs: VERBS,
      ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
      categories: [CATEGORY],
    });
    out.push({
      name: `${r.plural}/status`,
      singularName: '',
      namespaced: true,
      kind: r.kind,
      verbs: ['get'],
    });
    if (r.scale) {
      out.push({
        name: `${r.plural}/scale`,
        singularName: '',
        namespaced: true,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
  }
  return out;
}

/** `<plural>.<group>`, as Kubernetes names a resource in messages. */
export function qualifiedName(r: KubeResource): string {
  return `${r.plural}.${r.group}`;
}
