import type { KubeObject, KubePod, KubePodDisruptionBudget } from '../../domain/index.ts';
import { EMULATED_ANNOTATION } from './system-objects.ts';

/**
 * The cluster-wide objects an emulated cluster shows besides nodes and pods: the CoreDNS
 * PodDisruptionBudget (minAvailable 1, with the counts the eviction API decides on), the
 * kube-proxy DaemonSet, and the CoreDNS Deployment with its ReplicaSet — all derived from
 * the current pods.
 */

export const COREDNS_REPLICAS = 2;
export const DNS_LABELS = { 'k8s-app': 'kube-dns' };

/** What the derived objects are computed from. */
export interface DerivedInput {
  pods: KubePod[];
  nodeCount: number;
  /** When the first node registered; nothing exists before. */
  initializedAt: string | undefined;
  resourceVersion: string;
  uids: { daemonSet: string; deployment: string; replicaSet: string; pdb: string };
  replicaSetName: string;
  version: string | undefined;
}

/** A pod counts as healthy for disruption budgets when it runs and is Ready. */
export function isPodHealthy(pod: KubePod): boolean {
  return (
    !pod.metadata.deletionTimestamp &&
    pod.status.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** True when every selector label matches. */
export function matchesLabels(
  labels: Record<string, string> | undefined,
  selector: Record<string, string> | undefined,
): boolean {
  if (!selector) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export function podDisruptionBudgets(c: DerivedInput): KubePodDisruptionBudget[] {
  if (!c.initializedAt) return [];
  const selected = c.pods.filter(
    (p) => p.metadata.namespace === 'kube-system' && matchesLabels(p.metadata.labels, DNS_LABELS),
  );
  const healthy = selected.filter(isPodHealthy).length;
  const desired = 1;
  const allowed = Math.max(0, healthy - desired);
  return [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: {
        name: 'coredns',
        namespace: 'kube-system',
        uid: c.uids.pdb,
        resourceVersion: c.resourceVersion,
        generation: 1,
        creationTimestamp: c.initializedAt,
        labels: { ...DNS_LABELS },
      },
      spec: { minAvailable: 1, selector: { matchLabels: { ...DNS_LABELS } } },
      status: {
        currentHealthy: healthy,
        desiredHealthy: desired,
        disruptionsAllowed: allowed,
        expectedPods: selected.length,
        observedGeneration: 1,
        conditions: [
          allowed > 0
            ? {
                type: 'DisruptionAllowed',
                status: 'True',
                reason: 'SufficientPods',
                message: '',
                lastTransitionTime: c.initializedAt,
              }
            : {
                type: 'DisruptionAllowed',
                status: 'False',
                reason: 'InsufficientPods',
                message: '',
                lastTransitionTime: c.initializedAt,
              },
        ],
      },
    },
  ];
}

/** kube-proxy DaemonSet, CoreDNS Deployment and its ReplicaSet, with counts from the pods. */
export function workloads(c: DerivedInput): {
  daemonSets: KubeObject[];
  deployments: KubeObject[];
  replicaSets: KubeObject[];
} {
  if (!c.initializedAt) return { daemonSets: [], deployments: [], replicaSets: [] };
  const created = c.initializedAt;
  const proxies = c.pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-proxy');
  const dns = c.pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns');
  const proxyReady = proxies.filter(isPodHealthy).length;
  const dnsReady = dns.filter(isPodHealthy).length;
  const version = c.version ?? '';
  const md = (
    name: string,
    uid: string,
    labels: Record<string, string>,
    owner?: KubeObject['metadata']['ownerReferences'],
  ) => ({
    name,
    namespace: 'kube-system',
    uid,
    resourceVersion: c.resourceVersion,
    generation: 1,
    creationTimestamp: created,
    labels,
    annotations: { [EMULATED_ANNOTATION]: 'emulated by Magnetar' },
    ...(owner ? { ownerReferences: owner } : {}),
  });
  return {
    daemonSets: [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: md('kube-proxy', c.uids.daemonSet, { 'k8s-app': 'kube-proxy' }),
        spec: {
          selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
          template: {
            metadata: { labels: { 'k8s-app': 'kube-proxy' } },
            spec: {
              nodeSelector: { 'kubernetes.io/os': 'linux' },
              containers: [{ name: 'kube-proxy', image: `registry.k8s.io/kube-proxy:${version}` }],
            },
          },
        },
        status: {
          currentNumberScheduled: c.nodeCount,
          desiredNumberScheduled: c.nodeCount,
          numberAvailable: proxyReady,
          numberMisscheduled: 0,
          numberReady: proxyReady,
          updatedNumberScheduled: c.nodeCount,
          observedGeneration: 1,
        },
      },
    ],
    deployments: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: md('coredns', c.uids.deployment, { 'k8s-app': 'kube-dns' }),
        spec: { replicas: COREDNS_REPLICAS, selector: { matchLabels: { ...DNS_LABELS } } },
        status: {
          replicas: dns.length,
          readyReplicas: dnsReady,
          availableReplicas: dnsReady,
          updatedReplicas: dns.length,
          observedGeneration: 1,
        },
      },
    ],
    replicaSets: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: md(
          c.replicaSetName,
          c.uids.replicaSet,
          { 'k8s-app': 'kube-dns', 'pod-template-hash': c.replicaSetName.slice(8) },
          [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'coredns',
              uid: c.uids.deployment,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        ),
        spec: { replicas: COREDNS_REPLICAS, selector: { matchLabels: { ...DNS_LABELS } } },
        status: {
          replicas: dns.length,
          readyReplicas: dnsReady,
          availableReplicas: dnsReady,
          fullyLabeledReplicas: dns.length,
          observedGeneration: 1,
        },
      },
    ],
  };
}
