import type { Clock, CapiClusterObject } from '../../domain/index.ts';
import type { WorkloadClientApi, WorkloadNode } from '../deps.ts';

/** The nodes of one workload cluster at one moment. */
export interface NodeSnapshot {
  /** When it was read (clock ms). */
  at: number;
  /** Nodes by `spec.providerID`. */
  byProviderId: Map<string, WorkloadNode>;
  /** Nodes by name. */
  byName: Map<string, WorkloadNode>;
}

/**
 * Recent node lists per workload cluster, shared by every machine of a cluster, so a cluster
 * with many machines costs one `list nodes` call per refresh rather than one per machine.
 * Concurrent readers share the call in flight.
 */
export class NodeSnapshots {
  private readonly entries = new Map<
    string,
    { snap?: NodeSnapshot; inflight?: Promise<NodeSnapshot | undefined> }
  >();

  constructor(
    private readonly clientFor: (cluster: CapiClusterObject) => Promise<WorkloadClientApi | undefined>,
    private readonly clock: Clock,
  ) {}

  /** Nodes of `cluster`, at most `maxAgeMs` old; undefined when its API is not reachable yet. */
  async get(cluster: CapiClusterObject, maxAgeMs: number): Promise<NodeSnapshot | undefined> {
    const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = {}));
    if (e.snap && this.clock.now() - e.snap.at <= maxAgeMs) return e.snap;
    if (!e.inflight) {
      const entry = e;
      entry.inflight = this.read(cluster).finally(() => {
        entry.inflight = undefined;
      });
      entry.inflight.then(
        (snap) => {
          if (snap) entry.snap = snap;
        },
        () => undefined,
      );
    }
    return e.inflight;
  }

  /** Forget a cluster (deleted, or its nodes are known to have changed). */
  invalidate(cluster: { metadata: { namespace: string; name: string } }): void {
    const e = this.entries.get(`${cluster.metadata.namespace}/${cluster.metadata.name}`);
    if (e) e.snap = undefined;
  }

  /** Drop a cluster entirely. */
  forget(cluster: { metadata: { namespace: string; name: string } }): void {
    this.entries.delete(`${cluster.metadata.namespace}/${cluster.metadata.name}`);
  }

  private async read(cluster: CapiClusterObject): Promise<NodeSnapshot | undefined> {
    const client = await this.clientFor(cluster);
    if (!client) return undefined;
    const nodes = await client.listNodes();
    const byProviderId = new Map<string, WorkloadNode>();
    const byName = new Map<string, WorkloadNode>();
    for (const n of nodes) {
      byName.set(n.metadata.name, n);
      if (n.spec?.providerID) byProviderId.set(n.spec.providerID, n);
    }
    return { at: this.clock.now(), byProviderId, byName };
  }
}

/** The node's `Ready` condition. */
export function nodeReadyCondition(
  node: WorkloadNode,
): { status: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}
