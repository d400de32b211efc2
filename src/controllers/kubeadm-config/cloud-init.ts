import { createHash, X509Certificate } from 'node:crypto';
import { blockYaml } from './block-yaml.ts';
import {
  kubeMinor,
  type KubeadmConfigSpec,
  type KubeadmFile,
  type NodeRegistration,
} from '../../domain/index.ts';

/**
 * Bootstrap data for a machine, as Cluster API's kubeadm bootstrap provider writes it: a
 * cloud-config that drops the cluster certificates (control plane only) and a kubeadm
 * configuration on disk, then runs `kubeadm init` (first control-plane machine) or
 * `kubeadm join` (other control-plane machines with `controlPlane`, workers without), and
 * finally writes the sentinel file `/run/cluster-api/bootstrap-success.complete`.
 * A real VM booting this user data would become a Kubernetes node.
 */

/** Which kubeadm command the machine runs. */
export type BootstrapRole = 'init' | 'join-control-plane' | 'join-worker';

/** A file holding one CA certificate or key, relative to /etc/kubernetes/pki. */
export interface PkiFile {
  /** e.g. `ca.crt`, `ca.key`, `etcd/ca.crt`, `front-proxy-ca.key`, `sa.pub`, `sa.key`. */
  path: string;
  content: string;
}

/** Inputs of {@link renderCloudInit}. */
export interface CloudInitInput {
  role: BootstrapRole;
  /** Kubernetes version, e.g. v1.31.4. */
  kubernetesVersion: string;
  clusterName: string;
  controlPlaneEndpoint: { host: string; port: number };
  podSubnet?: string;
  serviceSubnet?: string;
  dnsDomain?: string;
  /** Cluster CA material (control-plane machines). */
  pki?: PkiFile[];
  /** PEM of the cluster CA, for the discovery hash of joins. */
  caCertPem?: string;
  /** `<id>.<secret>` for joins. */
  token?: string;
  spec: KubeadmConfigSpec;
}

const KUBEADM_CONFIG_PATH = '/run/kubeadm/kubeadm.yaml';
const JOIN_CONFIG_PATH = '/run/kubeadm/kubeadm-join-config.yaml';
const SENTINEL = '/run/cluster-api/bootstrap-success.complete';

/** kubeadm API version for a Kubernetes version: v1beta4 from 1.31, v1beta3 before. */
export function kubeadmApiVersion(version: string): string {
  return (kubeMinor(version) ?? 31) >= 31 ? 'kubeadm.k8s.io/v1beta4' : 'kubeadm.k8s.io/v1beta3';
}

/**
 * The hashes of the CAs used last: every joining machine of a cluster renders the same one. A
 * region builds many clusters at once and their joins interleave, so enough are kept for a
 * thousand clusters in progress: at most about 1.5 MB of certificates.
 */
const caHashes = new Map<string, string>();
const CA_HASHES_KEPT = 2048;

/** `sha256:<hex>` of the CA's public key, as `kubeadm join --discovery-token-ca-cert-hash` wants it. */
export function caCertHash(caPem: string): string {
  let hash = caHashes.get(caPem);
  if (hash !== undefined) {
    // the most recently used last, so the map drops the least recently used first
    caHashes.delete(caPem);
  } else {
    const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
    hash = `sha256:${createHash('sha256').update(spki).digest('hex')}`;
    if (caHashes.size >= CA_HASHES_KEPT) caHashes.delete(caHashes.keys().next().value!);
  }
  caHashes.set(caPem, hash);
  return hash;
}

function nodeRegistration(
  apiVersion: string,
  reg: NodeRegistration | undefined,
  extraArgs: Record<string, string>,
) {
  const merged: Record<string, string> = { ...extraArgs };
  for (const a of reg?.kubeletExtraArgs ?? []) merged[a.name] = a.value;
  const args = apiVersion.endsWith('v1beta4')
    ? Object.entries(merged).map(([name, value]) => ({ name, value }))
    : merged;
  return {
    name: reg?.name ?? '{{ local_hostname }}',
    criSocket: 'unix:///var/run/containerd/containerd.sock',
    kubeletExtraArgs: args,
    ...(reg?.taints ? { taints: reg.taints } : {}),
  };
}

/** The cloud-config user data. */
export function renderCloudInit(input: CloudInitInput): string {
  const apiVersion = kubeadmApiVersion(input.kubernetesVersion);
  const endpoint = `${input.controlPlaneEndpoint.host}:${input.controlPlaneEndpoint.port}`;
  const kubeletArgs = { 'cloud-provider': 'external', 'provider-id': 'openstack:///{{ ds.meta_data.uuid }}' };
  const docs: Record<string, unknown>[] = [];
  const cc = input.spec.clusterConfiguration;
  if (input.role === 'init') {
    docs.push({
      apiVersion,
      kind: 'ClusterConfiguration',
      clusterName: input.clusterName,
      kubernetesVersion: input.kubernetesVersion,
      controlPlaneEndpoint: endpoint,
      ...(cc?.imageRepository ? { imageRepository: cc.imageRepository } : {}),
      networking: {
        dnsDomain: input.dnsDomain ?? cc?.networking?.dnsDomain ?? 'cluster.local',
        podSubnet: input.podSubnet ?? cc?.networking?.podSubnet ?? '10.100.0.0/16',
        serviceSubnet: input.serviceSubnet ?? cc?.networking?.serviceSubnet ?? '10.254.0.0/16',
      },
      apiServer: {
        certSANs: [...new Set([input.controlPlaneEndpoint.host, ...(cc?.apiServer?.certSANs ?? [])])],
        ...(cc?.apiServer?.extraArgs ? { extraArgs: cc.apiServer.extraArgs } : {}),
      },
      controllerManager: apiVersion.endsWith('v1beta4')
        ? { extraArgs: [{ name: 'cloud-provider', value: 'external' }] }
        : { extraArgs: { 'cloud-provider': 'external' } },
    });
    docs.push({
      apiVersion,
      kind: 'InitConfiguration',
      nodeRegistration: nodeRegistration(
        apiVersion,
        input.spec.initConfiguration?.nodeRegistration,
        kubeletArgs,
      ),
    });
  } else {
    if (!input.token || !input.caCertPem)
      throw new Error('a join needs a bootstrap token and the cluster CA');
    const join = input.spec.joinConfiguration;
    docs.push({
      apiVersion,
      kind: 'JoinConfiguration',
      discovery: {
        bootstrapToken: {
          apiServerEndpoint: endpoint,
          token: input.token,
          caCertHashes: [caCertHash(input.caCertPem)],
        },
      },
      nodeRegistration: nodeRegistration(apiVersion, join?.nodeRegistration, kubeletArgs),
      ...(input.role === 'join-control-plane'
        ? {
            controlPlane: {
              localAPIEndpoint: {
                advertiseAddress: join?.controlPlane?.localAPIEndpoint?.advertiseAddress ?? '',
                bindPort: join?.controlPlane?.localAPIEndpoint?.bindPort ?? 6443,
              },
            },
          }
        : {}),
    });
  }
  const configPath = input.role === 'init' ? KUBEADM_CONFIG_PATH : JOIN_CONFIG_PATH;
  const files: KubeadmFile[] = [];
  for (const f of input.pki ?? []) {
    files.push({
      path: `/etc/kubernetes/pki/${f.path}`,
      owner: 'root:root',
      permissions: f.path.endsWith('.key') ? '0600' : '0640',
      content: f.content.endsWith('\n') ? f.content : `${f.content}\n`,
    });
  }
  files.push(...(input.spec.files ?? []));
  files.push({
    path: configPath,
    owner: 'root:root',
    permissions: '0640',
    content: docs.map((d) => blockYaml(d)).join('---\n'),
  });
  const command =
    input.role === 'init' ? `kubeadm init --config ${configPath}` : `kubeadm join --config ${configPath}`;
  const cloudConfig: Record<string, unknown> = {
    write_files: files.map((f) => ({
      path: f.path,
      ...(f.owner ? { owner: f.owner } : {}),
      ...(f.permissions ? { permissions: f.permissions } : {}),
      ...(f.encoding
        ? { encoding: f.encoding === 'gzip+base64' ? 'gz+b64' : f.encoding === 'base64' ? 'b64' : 'gzip' }
        : {}),
      content: f.content,
    })),
    runcmd: [
      ...(input.spec.preKubeadmCommands ?? []),
      `${command} && echo success > ${SENTINEL}`,
      ...(input.spec.postKubeadmCommands ?? []),
    ],
  };
  if (input.spec.users?.length) {
    cloudConfig.users = input.spec.users.map((u) => ({
      name: u.name,
      ...(u.sudo ? { sudo: u.sudo } : {}),
      ...(u.sshAuthorizedKeys ? { ssh_authorized_keys: u.sshAuthorizedKeys } : {}),
    }));
  }
  if (input.spec.ntp?.servers?.length)
    cloudConfig.ntp = { enabled: input.spec.ntp.enabled ?? true, servers: input.spec.ntp.servers };
  return `## template: jinja\n#cloud-config\n${blockYaml(cloudConfig)}`;
}
