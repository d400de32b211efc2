import { randomUUID } from 'node:crypto';
import {
  applyPatch,
  cloneJson,
  sameJson,
  kubeStatus,
  NotFoundError,
  type Clock,
  type KubeNode,
  type KubePod,
  type KubePodDisruptionBudget,
  type KubeStatus,
  type KubeObject,
  type PatchType,
} from '../../domain/index.ts';
import {
  buildNode,
  corednsPod,
  EMULATED_ANNOTATION,
  isNodeReady,
  kubeProxyPod,
  nodeIp,
  setNodeReady,
  setPodRunning,
  setPodStarting,
  setPodUnschedulable,
  stableHash,
  STATIC_COMPONENTS,
  staticPod,
  syncTaints,
  type NodeInput,
} from './system-objects.ts';
import {
  COREDNS_REPLICAS,
  isPodHealthy,
  matchesLabels,
  podDisruptionBudgets,
  workloads,
  type DerivedInput,
} from './derived-objects.ts';

/**
 * The in-memory state of one emulated workload cluster: its Nodes and Pods, and the
 * controllers a real cluster runs over them, reduced to what matters for Cluster API and
 * for `kubectl drain`: the kubelet registers nodes NotReady and reports Ready a little later;
 * static control-plane pods and a kube-proxy pod live on their node; a CoreDNS ReplicaSet keeps
 * two replicas scheduled on Ready, schedulable nodes, guarded by a PodDisruptionBudget
 * (minAvailable 1) that the eviction API enforces. Derived from the Machines, never
 * persisted; timers run only while something is starting.
 */

/** How long emulated things take. */
export interface EmulationTiming {
  /** From node registration to Ready. @default 3000 */
  nodeReadyMs: number;
  /** From a pod being scheduled to Running. @default 2000 */
  podStartMs: number;
}

export const DEFAULT_TIMING: EmulationTiming = Object.freeze({ nodeReadyMs: 3000, podStartMs: 2000 });

/** A change of a node or pod, for watches. */
export interface ModelEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  kind: 'Node' | 'Pod';
  object: KubeNode | KubePod;
}

/** Outcome of an eviction. */
export type EvictionOutcome = { evicted: true } | { evicted: false; status: KubeStatus };

const HISTORY = 512;

/** Options of {@link ClusterModel}. */
export interface ClusterModelOptions {
  clock: Clock;
  timing: EmulationTiming;
  clusterName: string;
  /** Pod network, e.g. 10.100.0.0/16 (pod IPs are taken from it). @default 10.100.0.0/16 */
  podSubnet?: string;
}

interface NodeMeta {
  controlPlane: boolean;
  version: string;
  index: number;
}

export class ClusterModel {
  private rv = 0;
  private readonly nodes = new Map<string, KubeNode>();
  private readonly nodeMeta = new Map<string, NodeMeta>();
  private readonly pods = new Map<string, KubePod>();
  private readonly history: ModelEvent[] = [];
  private readonly listeners = new Set<(e: ModelEvent) => void>();
  private readonly timers = new Map<string, () => void>();
  private readonly clock: Clock;
  private readonly timing: EmulationTiming;
  private readonly podNet: [number, number];
  private nextPodIp = 2;
  private nextNodeIndex = 0;
  /** The whole NodeList as JSON text, rendered once per resource version (see {@link nodeListJson}). */
  private nodeList: { rv: number; text: string } | undefined;
  /** When the cluster was initialized (first node), for the ages of cluster-wide objects. */
  private initializedAt: string | undefined;
  readonly uids = {
    daemonSet: randomUUID(),
    deployment: randomUUID(),
    replicaSet: randomUUID(),
    pdb: randomUUID(),
  };
  readonly replicaSetName: string;
  private disposed = false;

  constructor(options: ClusterModelOptions) {
    this.clock = options.clock;
    this.timing = options.timing;
    this.replicaSetName = `coredns-${stableHash(options.clusterName)}`;
    const m = /^(\d+)\.(\d+)\./.exec(options.podSubnet ?? '10.100.0.0/16');
    this.podNet = m ? [Number(m[1]), Number(m[2])] : [10, 100];
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** Current resource version of nodes and pods. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** When the first node registered (undefined before). */
  get initialized(): string | undefined {
    return this.initializedAt;
  }

  private emit(type: ModelEvent['type'], object: KubeNode | KubePod): void {
    this.rv++;
    object.metadata.resourceVersion = String(this.rv);
    const event: ModelEvent = {
      rv: this.rv,
      type,
      kind: object.kind === 'Node' ? 'Node' : 'Pod',
      object: cloneJson(object),
    };
    this.history.push(event);
    if (this.history.length > HISTORY) this.history.shift();
    for (const l of this.listeners) l(event);
  }

  /** Follow changes; returns the unsubscribe function. */
  subscribe(listener: (e: ModelEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `rv`, or undefined when they are no longer kept (the watcher must relist). */
  eventsSince(rv: number): ModelEvent[] | undefined {
    if (rv >= this.rv) return [];
    const first = this.history[0];
    if (!first || first.rv > rv + 1) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  // ---------------------------------------------------------------- reads

  listNodes(): KubeNode[] {
    return [...this.nodes.values()].map((n) => cloneJson(n));
  }

  /** Each node's name and the machine it was made for (its annotation), without copying the nodes. */
  nodeMachines(): { node: string; machine: string | undefined }[] {
    return [...this.nodes.values()].map((n) => ({
      node: n.metadata.name!,
      machine: n.metadata.annotations?.['cluster.x-k8s.io/machine'],
    }));
  }

  /**
   * `GET /api/v1/nodes` without selectors, as JSON text: what Magnetar's own health probe asks
   * every cluster for once a minute, so it is rendered once per resource version (as a real API
   * server serves lists from its watch cache) rather than cloned and serialized on every call.
   */
  nodeListJson(): string {
    if (this.nodeList?.rv !== this.rv) {
      const items = [...this.nodes.values()].sort((a, b) =>
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
      );
      this.nodeList = {
        rv: this.rv,
        text: JSON.stringify({
          apiVersion: 'v1',
          kind: 'NodeList',
          metadata: { resourceVersion: this.resourceVersion },
          items,
        }),
      };
    }
    return this.nodeList.text;
  }

  getNode(name: string): KubeNode | undefined {
    const n = this.nodes.get(name);
    return n && cloneJson(n);
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  /** Names of control-plane nodes. */
  controlPlaneNodes(): string[] {
    return [...this.nodeMeta.entries()].filter(([, m]) => m.controlPlane).map(([n]) => n);
  }

  /** The highest kubelet version among control-plane nodes (the cluster's version). */
  version(): string | undefined {
    const versions = [...this.nodeMeta.values()].filter((m) => m.controlPlane).map((m) => m.version);
    return versions.sort(compareVersions).at(-1);
  }

  listPods(namespace?: string): KubePod[] {
    return [...this.pods.values()]
      .filter((p) => !namespace || p.metadata.namespace === namespace)
      .map((p) => cloneJson(p));
  }

  getPod(namespace: string, name: string): KubePod | undefined {
    const p = this.pods.get(`${namespace}/${name}`);
    return p && cloneJson(p);
  }

  // ---------------------------------------------------------------- nodes

  /** A machine's node registers (kubelet start). `ready`: skip the NotReady phase (restart recovery). */
  addNode(input: NodeInput, ready: boolean): void {
    if (this.nodes.has(input.name)) return;
    const now = this.now();
    this.initializedAt ??= now;
    const index = this.nextNodeIndex++;
    const node = buildNode(input, {
      ready,
      now,
      podCIDR: `${this.podNet[0]}.${this.podNet[1]}.${index % 256}.0/24`,
    });
    this.nodes.set(input.name, node);
    this.nodeMeta.set(input.name, { controlPlane: input.controlPlane, version: input.version, index });
    this.emit('ADDED', node);
    if (input.controlPlane)
      for (const c of STATIC_COMPONENTS) this.putPod(staticPod(c, node, input.version, now));
    this.putPod(kubeProxyPod(node, this.uids.daemonSet, input.version, now));
    if (!ready) {
      this.setTimer(`node:${input.name}`, this.timing.nodeReadyMs, () => this.markReady(input.name));
    }
    this.reconcileCoredns();
  }

  /** Addresses or zone of a registered node changed on its Machine. */
  refreshNode(input: NodeInput): void {
    const node = this.nodes.get(input.name);
    if (!node) return;
    const labels = { ...(node.metadata.labels ?? {}) };
    if (input.zone) labels['topology.kubernetes.io/zone'] = input.zone;
    const addresses = [
      ...input.addresses.filter((a) => a.type !== 'Hostname'),
      { type: 'Hostname', address: input.name },
    ];
    if (sameJson(labels, node.metadata.labels) && sameJson(addresses, node.status.addresses)) return;
    node.metadata.labels = labels;
    node.status.addresses = addresses;
    this.emit('MODIFIED', node);
  }

  private markReady(name: string): void {
    const node = this.nodes.get(name);
    if (!node) return;
    setNodeReady(node, true, this.now());
    this.emit('MODIFIED', node);
    this.reconcileCoredns();
  }

  /** The node goes away (its machine was deleted, or the API deleted it): its pods go with it. */
  removeNode(name: string): KubeNode | undefined {
    const node = this.nodes.get(name);
    if (!node) return undefined;
    this.cancelTimer(`node:${name}`);
    this.nodes.delete(name);
    this.nodeMeta.delete(name);
    for (const [key, pod] of [...this.pods]) {
      if (pod.spec.nodeName !== name) continue;
      this.cancelTimer(`pod:${key}`);
      this.pods.delete(key);
      this.emit('DELETED', pod);
    }
    this.emit('DELETED', node);
    this.reconcileCoredns();
    return cloneJson(node);
  }

  /** Apply a patch from the API: labels, annotations, `spec.unschedulable` and `spec.taints` may change. */
  patchNode(name: string, type: PatchType, patch: unknown): KubeNode {
    const node = this.nodes.get(name);
    if (!node) throw notFound('nodes', name);
    const next = applyPatch(type, cloneJson(node), patch) as Partial<KubeNode> | null;
    const spec = (next?.spec ?? {}) as Partial<KubeNode['spec']>;
    const meta = next?.metadata ?? {};
    node.metadata.labels = stringMap(meta.labels);
    node.metadata.annotations = {
      ...stringMap(meta.annotations),
      [EMULATED_ANNOTATION]: node.metadata.annotations?.[EMULATED_ANNOTATION] ?? '',
    };
    const unschedulable = spec.unschedulable === true;
    if (unschedulable) node.spec.unschedulable = true;
    else delete node.spec.unschedulable;
    if (Array.isArray(spec.taints))
      node.spec.taints = spec.taints.filter(
        (t) => typeof t?.key === 'string' && typeof t?.effect === 'string',
      );
    syncTaints(node, this.nodeMeta.get(name)?.controlPlane ?? false);
    this.emit('MODIFIED', node);
    if (!unschedulable) this.reconcileCoredns();
    return cloneJson(node);
  }

  // ---------------------------------------------------------------- pods

  private putPod(pod: KubePod): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const existed = this.pods.has(key);
    this.pods.set(key, pod);
    this.emit(existed ? 'MODIFIED' : 'ADDED', pod);
  }

  private podIp(): string {
    const n = this.nextPodIp++;
    return `${this.podNet[0]}.${this.podNet[1]}.${(n >> 8) & 255}.${n & 255}`;
  }

  /** Delete a pod; its owner (kubelet, DaemonSet, ReplicaSet) replaces it as a real cluster would. */
  deletePod(namespace: string, name: string): KubePod {
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key);
    if (!pod) throw notFound('pods', name);
    this.cancelTimer(`pod:${key}`);
    this.pods.delete(key);
    this.emit('DELETED', pod);
    const owner = pod.metadata.ownerReferences?.find((o) => o.controller);
    const node = pod.spec.nodeName ? this.nodes.get(pod.spec.nodeName) : undefined;
    const meta = pod.spec.nodeName ? this.nodeMeta.get(pod.spec.nodeName) : undefined;
    const now = this.now();
    if (owner?.kind === 'Node' && node && meta) {
      const component = STATIC_COMPONENTS.find((c) => name === `${c}-${node.metadata.name}`);
      if (component) this.putPod(staticPod(component, node, meta.version, now));
    } else if (owner?.kind === 'DaemonSet' && node && meta) {
      this.putPod(kubeProxyPod(node, this.uids.daemonSet, meta.version, now));
    } else if (owner?.kind === 'ReplicaSet') {
      this.reconcileCoredns();
    }
    return cloneJson(pod);
  }

  /** The eviction API: delete unless a disruption budget forbids it. */
  evict(namespace: string, name: string): EvictionOutcome {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) throw notFound('pods', name);
    for (const pdb of this.podDisruptionBudgets()) {
      if (
        pdb.metadata.namespace !== namespace ||
        !matchesLabels(pod.metadata.labels, pdb.spec.selector?.matchLabels)
      )
        continue;
      if (!isPodHealthy(pod)) continue;
      if (pdb.status.disruptionsAllowed <= 0) {
        return {
          evicted: false,
          status: kubeStatus(
            429,
            "Cannot evict pod as it would violate the pod's disruption budget.",
            'TooManyRequests',
            {
              causes: [
                {
                  reason: 'DisruptionBudget',
                  message: `The disruption budget ${pdb.metadata.name} needs ${pdb.status.desiredHealthy} healthy pods and has ${pdb.status.currentHealthy} currently`,
                },
              ],
            },
          ),
        };
      }
    }
    this.deletePod(namespace, name);
    return { evicted: true };
  }

  /** Keep the CoreDNS ReplicaSet at its replica count and its pods scheduled. */
  private reconcileCoredns(): void {
    if (this.disposed || this.nodes.size === 0) return;
    const now = this.now();
    const dns = [...this.pods.values()].filter((p) =>
      p.metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet'),
    );
    for (let i = dns.length; i < COREDNS_REPLICAS; i++)
      this.putPod(corednsPod(this.replicaSetName, this.uids.replicaSet, now));
    const schedulable = [...this.nodes.values()].filter((n) => isNodeReady(n) && !n.spec.unschedulable);
    for (const pod of [...this.pods.values()]) {
      if (!pod.metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet') || pod.spec.nodeName) continue;
      if (schedulable.length === 0) {
        const message = `0/${this.nodes.size} nodes are available: ${this.nodes.size} node(s) were unschedulable or not ready.`;
        if (pod.status.conditions?.[0]?.message !== message) {
          setPodUnschedulable(pod, message, now);
          this.emit('MODIFIED', pod);
        }
        continue;
      }
      const load = (n: KubeNode) =>
        [...this.pods.values()].filter(
          (p) => p.spec.nodeName === n.metadata.name && p.metadata.labels?.['k8s-app'] === 'kube-dns',
        ).length;
      const target = [...schedulable].sort(
        (a, b) => load(a) - load(b) || (a.metadata.name! < b.metadata.name! ? -1 : 1),
      )[0]!;
      setPodStarting(pod, target.metadata.name!, now, nodeIp(target));
      this.emit('MODIFIED', pod);
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      this.setTimer(`pod:${key}`, this.timing.podStartMs, () => {
        const p = this.pods.get(key);
        const n = p?.spec.nodeName ? this.nodes.get(p.spec.nodeName) : undefined;
        if (!p || !n) return;
        setPodRunning(p, this.now(), nodeIp(n), this.podIp());
        this.emit('MODIFIED', p);
      });
    }
  }

  // ---------------------------------------------------------------- derived workload objects

  private derivedInput(): DerivedInput {
    return {
      pods: [...this.pods.values()],
      nodeCount: this.nodes.size,
      initializedAt: this.initializedAt,
      resourceVersion: this.resourceVersion,
      uids: this.uids,
      replicaSetName: this.replicaSetName,
      version: this.version(),
    };
  }

  podDisruptionBudgets(): KubePodDisruptionBudget[] {
    return podDisruptionBudgets(this.derivedInput());
  }

  /** kube-proxy DaemonSet, CoreDNS Deployment and its ReplicaSet. */
  workloads(): { daemonSets: KubeObject[]; deployments: KubeObject[]; replicaSets: KubeObject[] } {
    return workloads(this.derivedInput());
  }

  // ---------------------------------------------------------------- timers

  private setTimer(key: string, ms: number, fn: () => void): void {
    this.cancelTimer(key);
    const cancel = this.clock.setTimer(() => {
      this.timers.delete(key);
      if (!this.disposed) fn();
    }, ms);
    this.timers.set(key, cancel);
  }

  private cancelTimer(key: string): void {
    this.timers.get(key)?.();
    this.timers.delete(key);
  }

  /** Number of pending timers (tests: nothing runs when idle). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Drop everything: timers cancelled, listeners removed. */
  dispose(): void {
    this.disposed = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.listeners.clear();
  }
}

function stringMap(v: unknown): Record<string, string> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).filter(([, x]) => typeof x === 'string'),
  ) as Record<string, string>;
}

function compareVersions(a: string, b: string): number {
  const pa = a
    .replace(/^v/, '')
    .split(/[.-]/)
    .map((x) => Number.parseInt(x, 10) || 0);
  const pb = b
    .replace(/^v/, '')
    .split(/[.-]/)
    .map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Kubernetes' not-found error for a resource. */
export function notFound(resource: string, name: string): NotFoundError {
  return new NotFoundError(`${resource} "${name}" not found`, {
    code: 'NotFound',
    details: { name, kind: resource },
  });
}
