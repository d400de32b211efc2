import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { KubeNode, KubePod, NodeCondition } from '../../domain/index.ts';

/**
 * Builders of the objects kubeadm and the kubelet would have produced on a real node, as the
 * emulation shows them: the Node, the control-plane static pods (mirror pods), kube-proxy
 * (a DaemonSet pod per node) and CoreDNS (a two-replica Deployment). Everything is marked as
 * emulated: the OS image reads "Magnetar emulated node" and nothing runs.
 */

/** What the emulation knows about a node from its Machine. */
export interface NodeInput {
  name: string;
  machineName: string;
  providerID: string;
  controlPlane: boolean;
  /** Kubelet version, e.g. v1.31.4 (the Machine's `spec.version`). */
  version: string;
  zone?: string;
  addresses: { type: string; address: string }[];
}

/** The OS image every emulated node reports. */
export const EMULATED_OS_IMAGE = 'Magnetar emulated node';
/** Annotation on every emulated object saying what it is. */
export const EMULATED_ANNOTATION = 'workload.magnetar.io/emulated';
const EMULATED_NOTE = 'emulated by Magnetar for the embedded cloud: no kubelet or container runs';

export const CONTROL_PLANE_TAINT = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' };
export const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
export const UNSCHEDULABLE_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** Five random characters, as Kubernetes appends to generated names. */
export function suffix(length = 5): string {
  let s = '';
  for (const b of randomBytes(length)) s += NAME_CHARS[b % NAME_CHARS.length];
  return s;
}

/** A stable short hash (pod-template-hash style). */
export function stableHash(text: string, length = 10): string {
  const digest = createHash('sha256').update(text).digest();
  let s = '';
  for (let i = 0; i < length; i++) s += NAME_CHARS[digest[i]! % NAME_CHARS.length];
  return s;
}

/** The node's InternalIP (or its first address, or 127.0.0.1). */
export function nodeIp(node: KubeNode): string {
  const a = node.status.addresses ?? [];
  return (
    a.find((x) => x.type === 'InternalIP')?.address ??
    a.find((x) => x.type !== 'Hostname')?.address ??
    '127.0.0.1'
  );
}

function readyCondition(ready: boolean, now: string): NodeCondition {
  return ready
    ? {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status (emulated)',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      }
    : {
        type: 'Ready',
        status: 'False',
        reason: 'KubeletNotReady',
        message: 'container runtime network not ready: NetworkReady=false (emulated node starting)',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
}

/** A freshly registered Node (NotReady unless `ready`). */
export function buildNode(
  input: NodeInput,
  options: { ready: boolean; now: string; podCIDR: string },
): KubeNode {
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': input.name,
    'kubernetes.io/os': 'linux',
  };
  if (input.zone) {
    labels['topology.kubernetes.io/zone'] = input.zone;
    labels['topology.cinder.csi.openstack.org/zone'] = input.zone;
  }
  if (input.controlPlane) {
    labels['node-role.kubernetes.io/control-plane'] = '';
    labels['node.kubernetes.io/exclude-from-external-load-balancers'] = '';
  }
  const pressure = (type: string, reason: string, message: string): NodeCondition => ({
    type,
    status: 'False',
    reason,
    message,
    lastHeartbeatTime: options.now,
    lastTransitionTime: options.now,
  });
  const node: KubeNode = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: input.name,
      uid: randomUUID(),
      creationTimestamp: options.now,
      labels,
      annotations: {
        [EMULATED_ANNOTATION]: EMULATED_NOTE,
        'cluster.x-k8s.io/machine': input.machineName,
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      providerID: input.providerID,
      podCIDR: options.podCIDR,
      taints: [],
    },
    status: {
      conditions: [
        pressure('MemoryPressure', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        pressure('DiskPressure', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        pressure('PIDPressure', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        readyCondition(options.ready, options.now),
      ],
      addresses: [
        ...input.addresses.filter((a) => a.type !== 'Hostname'),
        { type: 'Hostname', address: input.name },
      ],
      nodeInfo: {
        kubeletVersion: input.version,
        kubeProxyVersion: input.version,
        osImage: EMULATED_OS_IMAGE,
        kernelVersion: 'emulated',
        containerRuntimeVersion: 'emulated://0',
        operatingSystem: 'linux',
        architecture: 'amd64',
        machineID: createHash('md5').update(input.providerID).digest('hex'),
        systemUUID: input.providerID.slice(input.providerID.lastIndexOf('/') + 1),
        bootID: randomUUID(),
      },
      capacity: { cpu: '2', memory: '4026532Ki', pods: '110', 'ephemeral-storage': '20134592Ki' },
      allocatable: { cpu: '2', memory: '3924132Ki', pods: '110', 'ephemeral-storage': '18556039957' },
    },
  };
  syncTaints(node, input.controlPlane);
  return node;
}

/** Set the Ready condition. */
export function setNodeReady(node: KubeNode, ready: boolean, now: string): void {
  node.status.conditions = (node.status.conditions ?? []).map((c) =>
    c.type === 'Ready' ? readyCondition(ready, now) : c,
  );
  syncTaints(node, 'node-role.kubernetes.io/control-plane' in (node.metadata.labels ?? {}));
}

/** True when the node's Ready condition is True. */
export function isNodeReady(node: KubeNode): boolean {
  return node.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Keep the node lifecycle taints (not-ready, unschedulable) in line with the node's state, as the node controller does. */
export function syncTaints(node: KubeNode, controlPlane: boolean): void {
  const others = (node.spec.taints ?? []).filter(
    (t) => ![CONTROL_PLANE_TAINT.key, NOT_READY_TAINT.key, UNSCHEDULABLE_TAINT.key].includes(t.key),
  );
  const taints = [...others];
  if (controlPlane) taints.push({ ...CONTROL_PLANE_TAINT });
  if (!isNodeReady(node)) taints.push({ ...NOT_READY_TAINT });
  if (node.spec.unschedulable) taints.push({ ...UNSCHEDULABLE_TAINT });
  node.spec.taints = taints;
}

/** The control-plane components kubeadm runs as static pods. */
export const STATIC_COMPONENTS = [
  'kube-apiserver',
  'etcd',
  'kube-controller-manager',
  'kube-scheduler',
] as const;
export type StaticComponent = (typeof STATIC_COMPONENTS)[number];

const ETCD_IMAGE = 'registry.k8s.io/etcd:3.5.16-0';
const COREDNS_IMAGE = 'registry.k8s.io/coredns/coredns:v1.11.3';

function runningStatus(
  now: string,
  hostIP: string,
  podIP: string,
  containers: string[],
  images: string[],
): KubePod['status'] {
  return {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      (type) => ({ type, status: 'True' as const, lastTransitionTime: now }),
    ),
    hostIP,
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: now,
    containerStatuses: containers.map((name, i) => ({
      name,
      ready: true,
      restartCount: 0,
      started: true,
      image: images[i]!,
      imageID: '',
      state: { running: { startedAt: now } },
    })),
  };
}

/** Mark a pod as running on its node (containers started). */
export function setPodRunning(pod: KubePod, now: string, hostIP: string, podIP: string): void {
  pod.status = runningStatus(
    now,
    hostIP,
    podIP,
    pod.spec.containers.map((c) => c.name),
    pod.spec.containers.map((c) => c.image),
  );
}

/** Mark a pod as bound to a node, containers being created. */
export function setPodStarting(pod: KubePod, nodeName: string, now: string, hostIP: string): void {
  pod.spec.nodeName = nodeName;
  pod.status = {
    phase: 'Pending',
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      { type: 'Initialized', status: 'True', lastTransitionTime: now },
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: now },
    ],
    hostIP,
    startTime: now,
    containerStatuses: pod.spec.containers.map((c) => ({
      name: c.name,
      ready: false,
      restartCount: 0,
      image: c.image,
      imageID: '',
      state: { waiting: { reason: 'ContainerCreating' } },
    })),
  };
}

/** Mark a pod as waiting for a node. */
export function setPodUnschedulable(pod: KubePod, message: string, now: string): void {
  delete pod.spec.nodeName;
  pod.status = {
    phase: 'Pending',
    conditions: [
      { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: now },
    ],
  };
}

function meta(
  name: string,
  labels: Record<string, string>,
  now: string,
  extra: Partial<KubePod['metadata']> = {},
): KubePod['metadata'] {
  return {
    name,
    namespace: 'kube-system',
    uid: randomUUID(),
    creationTimestamp: now,
    labels,
    annotations: { [EMULATED_ANNOTATION]: EMULATED_NOTE, ...(extra.annotations ?? {}) },
    ...(extra.ownerReferences ? { ownerReferences: extra.ownerReferences } : {}),
  };
}

/** A control-plane static pod, as its mirror pod appears in the API. */
export function staticPod(component: StaticComponent, node: KubeNode, version: string, now: string): KubePod {
  const nodeName = node.metadata.name!;
  const image = component === 'etcd' ? ETCD_IMAGE : `registry.k8s.io/${component}:${version}`;
  const ip = nodeIp(node);
  const pod: KubePod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(`${component}-${nodeName}`, { component, tier: 'control-plane' }, now, {
      annotations: {
        'kubernetes.io/config.mirror': stableHash(`${component}/${nodeName}/${version}`, 32),
        'kubernetes.io/config.source': 'file',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid!, controller: true },
      ],
    }),
    spec: {
      nodeName,
      containers: [{ name: component, image }],
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
    },
    status: {},
  };
  setPodRunning(pod, now, ip, ip);
  return pod;
}

/** A kube-proxy pod of the DaemonSet on `node`. */
export function kubeProxyPod(node: KubeNode, daemonSetUid: string, version: string, now: string): KubePod {
  const ip = nodeIp(node);
  const image = `registry.k8s.io/kube-proxy:${version}`;
  const pod: KubePod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(
      `kube-proxy-${suffix()}`,
      {
        'k8s-app': 'kube-proxy',
        'controller-revision-hash': stableHash(`kube-proxy/${version}`),
        'pod-template-generation': '1',
      },
      now,
      {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: 'kube-proxy',
            uid: daemonSetUid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    ),
    spec: {
      nodeName: node.metadata.name!,
      containers: [{ name: 'kube-proxy', image }],
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      volumes: [
        { name: 'kube-proxy', hostPath: { path: '/var/lib/kube-proxy' } },
        { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock' } },
        { name: 'lib-modules', hostPath: { path: '/lib/modules' } },
      ],
      tolerations: [{ operator: 'Exists' }],
    },
    status: {},
  };
  setPodRunning(pod, now, ip, ip);
  return pod;
}

/** A new CoreDNS replica (Pending, not yet scheduled). */
export function corednsPod(replicaSetName: string, replicaSetUid: string, now: string): KubePod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(
      `${replicaSetName}-${suffix()}`,
      { 'k8s-app': 'kube-dns', 'pod-template-hash': replicaSetName.slice('coredns-'.length) },
      now,
      {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: replicaSetName,
            uid: replicaSetUid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    ),
    spec: {
      containers: [{ name: 'coredns', image: COREDNS_IMAGE }],
      priorityClassName: 'system-cluster-critical',
      volumes: [{ name: 'config-volume' }],
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
      ],
    },
    status: { phase: 'Pending' },
  };
}
