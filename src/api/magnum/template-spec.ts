import { InputError, type ClusterTemplateSpec, type OperatorPolicy } from '../../domain/index.ts';
import { toStringDict } from './python-literal.ts';
import type { TemplateCreateBody } from './schemas.ts';

/** Container orchestration engines served. */
export const COES = ['kubernetes'] as const;
/** Network drivers the Cluster API driver can install. */
export const NETWORK_DRIVERS = ['calico', 'cilium', 'flannel'] as const;
/** Network driver of a template that names none. */
export const DEFAULT_NETWORK_DRIVER = 'calico';
/** Volume drivers Magnum accepts for Kubernetes. */
export const VOLUME_DRIVERS = ['cinder'] as const;

/** Magnum's `cluster_distro` guess from an image name when no image service can be asked. */
export function guessDistro(image: string): string | null {
  const s = image.toLowerCase();
  for (const d of ['fedora-coreos', 'flatcar', 'ubuntu', 'debian', 'rockylinux', 'centos', 'coreos'])
    if (s.includes(d)) return d;
  return null;
}

/** Rules Magnum's create/update validators apply to a template's fields. */
export function checkTemplateFields(
  spec: Pick<
    ClusterTemplateSpec,
    'coe' | 'networkDriver' | 'volumeDriver' | 'dockerStorageDriver' | 'dockerVolumeSize'
  >,
): void {
  if (!(COES as readonly string[]).includes(spec.coe)) {
    throw new InputError(
      `Invalid input for field/attribute coe: value should be one of ${COES.join(', ')} (got '${spec.coe}').`,
      {
        code: 'Invalid',
      },
    );
  }
  if (spec.networkDriver !== null && !(NETWORK_DRIVERS as readonly string[]).includes(spec.networkDriver)) {
    throw new InputError(
      `Network driver type ${spec.networkDriver} is not supported, expecting a ${NETWORK_DRIVERS.join(', ')} network driver.`,
      { code: 'InvalidParameterValue' },
    );
  }
  if (spec.volumeDriver !== null && !(VOLUME_DRIVERS as readonly string[]).includes(spec.volumeDriver)) {
    throw new InputError(
      `Volume driver type ${spec.volumeDriver} is not supported, expecting a ${VOLUME_DRIVERS.join(', ')} volume driver.`,
      {
        code: 'InvalidParameterValue',
      },
    );
  }
  if (
    spec.dockerStorageDriver === 'devicemapper' &&
    (spec.dockerVolumeSize === null || spec.dockerVolumeSize < 3)
  ) {
    throw new InputError(
      `docker volume size ${spec.dockerVolumeSize ?? 'None'} GB is not valid, expecting minimum value 3GB for devicemapper storage`,
      { code: 'InvalidParameterValue' },
    );
  }
}

/** The stored spec of a template from a validated create (or patched) body. */
export function templateSpecFromBody(
  b: TemplateCreateBody,
  userId: string,
  policy: OperatorPolicy,
  name: string,
): ClusterTemplateSpec {
  const spec: ClusterTemplateSpec = {
    name,
    coe: b.coe,
    imageId: b.image_id,
    keypairId: b.keypair_id ?? null,
    externalNetworkId: b.external_network_id ?? null,
    fixedNetwork: b.fixed_network ?? null,
    fixedSubnet: b.fixed_subnet ?? null,
    networkDriver: b.network_driver ?? DEFAULT_NETWORK_DRIVER,
    volumeDriver: b.volume_driver ?? null,
    dnsNameserver: b.dns_nameserver ?? null,
    flavorId: b.flavor_id ?? null,
    masterFlavorId: b.master_flavor_id ?? null,
    dockerVolumeSize: b.docker_volume_size ?? null,
    dockerStorageDriver: b.docker_storage_driver ?? null,
    httpProxy: b.http_proxy ?? null,
    httpsProxy: b.https_proxy ?? null,
    noProxy: b.no_proxy ?? null,
    insecureRegistry: b.insecure_registry ?? null,
    labels: b.labels ? toStringDict(b.labels, 'labels') : {},
    tlsDisabled: b.tls_disabled ?? false,
    public: b.public ?? false,
    hidden: b.hidden ?? false,
    registryEnabled: b.registry_enabled ?? false,
    serverType: b.server_type ?? 'vm',
    masterLbEnabled: policy.requireMasterLoadBalancer ? true : (b.master_lb_enabled ?? false),
    floatingIpEnabled: b.floating_ip_enabled ?? true,
    apiserverPort: b.apiserver_port ?? null,
    clusterDistro: b.cluster_distro ?? guessDistro(b.image_id),
    tags: b.tags ?? null,
    driver: b.driver ?? null,
    userId,
  };
  checkTemplateFields(spec);
  return spec;
}
