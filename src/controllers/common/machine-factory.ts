import { randomUUID } from 'node:crypto';
import {
  BOOTSTRAP_API_VERSION,
  CAPI_API_VERSION,
  CapiGroups,
  CapiLabels,
  CapiTypes,
  INFRA_API_VERSION,
  type ApiObject,
  type KubeadmConfigSpec,
  type MachineDeletionSpec,
  type NewObject,
  type OpenStackMachineSpec,
  type OpenStackMachineTemplateObject,
} from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import { KUBEADM_CONFIG_FINALIZER } from '../kubeadm-config/kubeadm-config-controller.ts';
import { OPENSTACK_MACHINE_CLONED_FROM } from './annotations.ts';
import { ownerRef } from './writes.ts';

/** Everything needed to create one Machine with its bootstrap config and infrastructure. */
export interface NewMachineInput {
  namespace: string;
  name: string;
  clusterName: string;
  owner: ApiObject;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  version?: string;
  failureDomain?: string;
  deletion?: MachineDeletionSpec;
  minReadySeconds?: number;
  bootstrap: KubeadmConfigSpec;
  infraTemplate: OpenStackMachineTemplateObject;
}

/**
 * Create a Machine, its KubeadmConfig and its OpenStackMachine (all named alike) in one atomic
 * write, each owned by the next, so a crash never leaves half of a machine behind.
 */
export async function createMachine(store: ObjectStore, input: NewMachineInput): Promise<void> {
  const machineUid = randomUUID();
  const labels = { ...input.labels, [CapiLabels.clusterName]: input.clusterName };
  const machineOwner = {
    apiVersion: CAPI_API_VERSION,
    kind: 'Machine',
    name: input.name,
    uid: machineUid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const machine: NewObject = {
    apiVersion: CAPI_API_VERSION,
    kind: 'Machine',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      uid: machineUid,
      labels,
      annotations: input.annotations ?? {},
      ownerReferences: [ownerRef(input.owner)],
      finalizers: ['machine.cluster.x-k8s.io'],
    },
    spec: {
      clusterName: input.clusterName,
      bootstrap: { configRef: { apiGroup: CapiGroups.bootstrap, kind: 'KubeadmConfig', name: input.name } },
      infrastructureRef: { apiGroup: CapiGroups.infrastructure, kind: 'OpenStackMachine', name: input.name },
      ...(input.version ? { version: input.version } : {}),
      ...(input.failureDomain ? { failureDomain: input.failureDomain } : {}),
      ...(input.deletion ? { deletion: input.deletion } : {}),
      ...(input.minReadySeconds !== undefined ? { minReadySeconds: input.minReadySeconds } : {}),
    },
  };
  const config: NewObject = {
    apiVersion: BOOTSTRAP_API_VERSION,
    kind: 'KubeadmConfig',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels,
      ownerReferences: [machineOwner],
      finalizers: [KUBEADM_CONFIG_FINALIZER],
    },
    spec: input.bootstrap,
  };
  const osmSpec: OpenStackMachineSpec = structuredClone(input.infraTemplate.spec.template.spec);
  delete osmSpec.providerID;
  const infra: NewObject = {
    apiVersion: INFRA_API_VERSION,
    kind: 'OpenStackMachine',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels,
      annotations: { [OPENSTACK_MACHINE_CLONED_FROM]: input.infraTemplate.metadata.name },
      ownerReferences: [machineOwner],
    },
    spec: osmSpec,
  };
  await store.commit([
    { op: 'create', object: machine },
    { op: 'create', object: config },
    { op: 'create', object: infra },
  ]);
}

/** Read an OpenStackMachineTemplate by name. */
export async function getInfraTemplate(
  store: ObjectStore,
  namespace: string,
  name: string,
): Promise<OpenStackMachineTemplateObject | undefined> {
  return store.get<OpenStackMachineTemplateObject>(CapiTypes.OpenStackMachineTemplate, namespace, name);
}
