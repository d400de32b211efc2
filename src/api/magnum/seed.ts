import { randomUUID } from 'node:crypto';
import {
  MAGNUM_API_VERSION,
  MagnumTypes,
  parseKubeTag,
  templateName,
  type ClusterTemplateObject,
  type ClusterTemplateSpec,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { TypedStore } from './typed-store.ts';

/** Kubernetes versions of the operator's public templates when none are given. */
export const DEFAULT_KUBE_TAGS = ['v1.31.9', 'v1.32.5', 'v1.33.1'];

/** Options of {@link seedPublicTemplates}. */
export interface SeedTemplatesOptions {
  /** The operator's project (owner of the templates). */
  projectId: string;
  /** The operator user recorded as the templates' owner. */
  userId: string;
  /** One template per tag, named `k8s-v<major>.<minor>`. @default DEFAULT_KUBE_TAGS */
  kubeTags?: string[];
  /** Glance image the templates boot; the embedded cloud seeds it with `os_distro`. @default 'ubuntu-22.04-kube' */
  image?: string;
  /** `os_distro` of that image. @default 'ubuntu' */
  distro?: string;
}

/**
 * Create (idempotently: an existing template of the same name in the operator's project is left
 * as it is) the public templates the operator maintains, so a newcomer's
 * `openstack coe cluster template list` is not empty. Returns the templates created now.
 */
export async function seedPublicTemplates(
  rawStore: ObjectStore,
  options: SeedTemplatesOptions,
): Promise<ClusterTemplateObject[]> {
  const store = new TypedStore(rawStore);
  const existing = await store.list<ClusterTemplateObject>(MagnumTypes.ClusterTemplate, {
    namespace: options.projectId,
  });
  const names = new Set(existing.items.map((t) => templateName(t)));
  const created: ClusterTemplateObject[] = [];
  for (const tag of options.kubeTags ?? DEFAULT_KUBE_TAGS) {
    const v = parseKubeTag(tag);
    if (!v) throw new Error(`seedPublicTemplates: "${tag}" is not a Kubernetes version tag like v1.32.5`);
    const name = `k8s-v${v.major}.${v.minor}`;
    if (names.has(name)) continue;
    const spec: ClusterTemplateSpec = {
      name,
      coe: 'kubernetes',
      imageId: options.image ?? 'ubuntu-22.04-kube',
      keypairId: null,
      externalNetworkId: 'public',
      fixedNetwork: null,
      fixedSubnet: null,
      networkDriver: 'calico',
      volumeDriver: 'cinder',
      dnsNameserver: '8.8.8.8',
      flavorId: 'm1.medium',
      masterFlavorId: 'm1.medium',
      dockerVolumeSize: null,
      dockerStorageDriver: 'overlay2',
      httpProxy: null,
      httpsProxy: null,
      noProxy: null,
      insecureRegistry: null,
      labels: { kube_tag: tag, container_runtime: 'containerd', auto_healing_enabled: 'true' },
      tlsDisabled: false,
      public: true,
      hidden: false,
      registryEnabled: false,
      serverType: 'vm',
      masterLbEnabled: true,
      floatingIpEnabled: false,
      apiserverPort: null,
      clusterDistro: options.distro ?? 'ubuntu',
      tags: `kubernetes-${v.major}.${v.minor}`,
      driver: null,
      userId: options.userId,
    };
    const uid = randomUUID();
    created.push(
      await store.create<ClusterTemplateObject>({
        apiVersion: MAGNUM_API_VERSION,
        kind: 'ClusterTemplate',
        metadata: { name: uid, namespace: options.projectId, uid },
        spec,
        status: {},
      }),
    );
    names.add(name);
  }
  return created;
}
