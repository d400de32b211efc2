import { randomUUID } from 'node:crypto';
import {
  CAPI_API_VERSION,
  CapiGroups,
  CapiLabels,
  CapiTypes,
  type CapiClusterObject,
  type Clock,
  type MachineObject,
  type SecretObject,
} from '../../src/domain/index.ts';
import type { ObjectStore } from '../../src/store/index.ts';
import { renderCloudInit } from '../../src/controllers/kubeadm-config/cloud-init.ts';
import type { StorePki } from '../../src/workload/index.ts';

/**
 * Hand-written Cluster API objects for the workload tests: what the controllers would have
 * stored by the time a machine's server is up. The bootstrap data is rendered with the kubeadm
 * bootstrap controller's own renderer, so the emulator is tested against the real format.
 */

export const PROJECT = 'proj-7f3a';

export async function createCapiCluster(
  store: ObjectStore,
  name: string,
  options: { host?: string; displayName?: string } = {},
): Promise<CapiClusterObject> {
  return store.create<CapiClusterObject>({
    apiVersion: CAPI_API_VERSION,
    kind: 'Cluster',
    metadata: {
      name,
      namespace: PROJECT,
      annotations: { 'magnetar.io/display-name': options.displayName ?? name },
    },
    spec: {
      clusterNetwork: {
        pods: { cidrBlocks: ['10.100.0.0/16'] },
        services: { cidrBlocks: ['10.254.0.0/16'] },
        serviceDomain: 'cluster.local',
      },
      controlPlaneEndpoint: { host: options.host ?? '172.24.4.10', port: 6443 },
    },
    status: {},
  });
}

export interface MachineParams {
  cluster: string;
  name: string;
  controlPlane: boolean;
  version?: string;
  zone?: string;
  ip?: string;
  /** `init`, or `join` with this token (undefined: no token at all in the data). */
  boot: { role: 'init' } | { role: 'join'; token: string };
  provisioned?: boolean;
  nodeRef?: boolean;
}

/** A Machine with its bootstrap data Secret, as the controllers leave it once the server is ACTIVE. */
export async function createMachine(
  store: ObjectStore,
  pki: StorePki,
  p: MachineParams,
): Promise<MachineObject> {
  const version = p.version ?? 'v1.31.4';
  const ca = await pki.caPem({ namespace: PROJECT, name: p.cluster, displayName: p.cluster });
  const data = renderCloudInit({
    role: p.boot.role === 'init' ? 'init' : p.controlPlane ? 'join-control-plane' : 'join-worker',
    kubernetesVersion: version,
    clusterName: p.cluster,
    controlPlaneEndpoint: { host: '172.24.4.10', port: 6443 },
    caCertPem: ca,
    ...(p.boot.role === 'join' ? { token: p.boot.token } : {}),
    spec: {},
  });
  await store.create<SecretObject>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: p.name, namespace: PROJECT, labels: { [CapiLabels.clusterName]: p.cluster } },
    spec: { type: 'cluster.x-k8s.io/secret', data: { value: Buffer.from(data).toString('base64') } },
  });
  const provisioned = p.provisioned ?? true;
  return store.create<MachineObject>({
    apiVersion: CAPI_API_VERSION,
    kind: 'Machine',
    metadata: {
      name: p.name,
      namespace: PROJECT,
      labels: {
        [CapiLabels.clusterName]: p.cluster,
        ...(p.controlPlane ? { [CapiLabels.controlPlane]: '' } : {}),
      },
    },
    spec: {
      clusterName: p.cluster,
      bootstrap: {
        configRef: { apiGroup: CapiGroups.bootstrap, kind: 'KubeadmConfig', name: p.name },
        dataSecretName: p.name,
      },
      infrastructureRef: { apiGroup: CapiGroups.infrastructure, kind: 'OpenStackMachine', name: p.name },
      version,
      ...(provisioned ? { providerID: `openstack://RegionOne/${randomUUID()}` } : {}),
      ...(p.zone ? { failureDomain: p.zone } : {}),
    },
    status: {
      initialization: { infrastructureProvisioned: provisioned, bootstrapDataSecretCreated: true },
      addresses: [{ type: 'InternalIP', address: p.ip ?? '10.0.0.10' }],
      ...(p.nodeRef ? { nodeRef: { name: p.name } } : {}),
    },
  });
}

/** Mark a machine provisioned (server ACTIVE) now. */
export async function provision(store: ObjectStore, name: string): Promise<void> {
  const m = (await store.get<MachineObject>(CapiTypes.Machine, PROJECT, name))!;
  await store.update({ ...m, spec: { ...m.spec, providerID: `openstack://RegionOne/${randomUUID()}` } });
  const m2 = (await store.get<MachineObject>(CapiTypes.Machine, PROJECT, name))!;
  await store.updateStatus({
    ...m2,
    status: {
      ...m2.status,
      initialization: { infrastructureProvisioned: true, bootstrapDataSecretCreated: true },
    },
  });
}

/** Record the nodeRef the Machine controller would have written. */
export async function setNodeRef(store: ObjectStore, name: string): Promise<void> {
  const m = (await store.get<MachineObject>(CapiTypes.Machine, PROJECT, name))!;
  await store.updateStatus({
    ...m,
    status: { ...m.status, nodeRef: { name: m.spec.infrastructureRef.name } },
  });
}

/** Let the store feed reach the emulator and everything it triggers settle. */
export async function settle(
  clock: Clock & { advance(ms: number): Promise<void> },
  emulator: { idle(): Promise<void> },
  ms = 0,
): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await clock.advance(i === 0 ? ms : 0);
    await emulator.idle();
  }
}
