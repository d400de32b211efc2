import type { Clock, CapiClusterObject } from '../../domain/index.ts';
import type { WorkloadClientApi, WorkloadNode } from '../deps.ts';

/** The nodes of one workload cluster at one moment. */
export interface NodeSnapshot {
  /** When it was read, or last confirmed by the watch (clock ms). */
  at: number;
  /** Nodes by `spec.providerID`. */
  byProviderId: Map<string, WorkloadNode>;
  /** Nodes by name. */
  byName: Map<string, WorkloadNode>;
}

/**
 * How long one node watch runs before the server ends it and it is opened again from where it
 * was: 5 to 10 minutes, spread so that watches opened together are not renewed together (as
 * client-go's reflectors do).
 */
export const WATCH_SECONDS = { min: 300, max: 600 } as const;

interface Entry {
  snap?: NodeSnapshot;
  inflight?: Promise<NodeSnapshot | undefined>;
  /** The client whose node watch keeps `snap` current, while that watch runs. */
  watching?: WorkloadClientApi;
  /** Ends that watch. */
  stop?: AbortController;
  /** Where the watch goes on from (the list's, then the last event's resourceVersion). */
  rv?: string;
  /** The resourceVersion `snap` is at: a watch event from before it (a list overtook it) is old news. */
  snapRv?: string;
  /**
   * Each node as last reported to the change listeners, with its {@link nodeSignature}; from the
   * first list on (that list itself is not reported: whoever read it is looking already).
   */
  seen?: Map<string, SeenNode>;
}

interface SeenNode {
  node: WorkloadNode;
  signature: string;
}

/**
 * A node of `cluster` joined, left, or changed what its Machine mirrors from it (provider ID,
 * readiness, kubelet version).
 */
export type NodeChangeListener = (cluster: { namespace: string; name: string }, node: WorkloadNode) => void;

/**
 * The nodes of each workload cluster, shared by every machine of a cluster, kept current the
 * way Cluster API's cluster cache keeps them: one list, then a watch of the changes. While the
 * watch runs, a read costs no call to the cluster at all, so a thousand idle clusters cost
 * nothing between changes; when it fails (the API server went away, the client was replaced
 * after a CA rotation), the next read lists again, which is also what tells the caller the
 * cluster cannot be reached. Concurrent readers share the list in flight.
 */
export class NodeSnapshots {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<NodeChangeListener>();

  constructor(
    private readonly clientFor: (cluster: CapiClusterObject) => Promise<WorkloadClientApi | undefined>,
    private readonly clock: Clock,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * Nodes of `cluster`: the watched snapshot, or a list at most `maxAgeMs` old; undefined when
   * its API is not reachable yet.
   */
  async get(cluster: CapiClusterObject, maxAgeMs: number): Promise<NodeSnapshot | undefined> {
    const key = keyOf(cluster);
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = {}));
    if (e.snap && e.watching) {
      // the same client: the same endpoint and CA (a new one closes the old one's watch)
      const client = await this.clientFor(cluster);
      if (client === e.watching && e.snap) return e.snap;
      if (client !== e.watching) this.unwatch(e);
    }
    if (e.snap && this.clock.now() - e.snap.at <= maxAgeMs) return e.snap;
    if (!e.inflight) {
      const entry = e;
      entry.inflight = this.read(cluster, key, entry).finally(() => {
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

  /**
   * Be told of each node that joins, leaves or changes what its Machine mirrors, as a list or the
   * watch learns it: one node's change then wakes its own Machine, not every machine of the
   * cluster. Returns the unsubscribe.
   */
  onNodeChange(listener: NodeChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Forget a cluster's nodes (they are known to have changed): the next read lists them again.
   * A running watch goes on (ending it would close its connection, and the next call would pay
   * for a new TLS handshake).
   */
  invalidate(cluster: { metadata: { namespace: string; name: string } }): void {
    const e = this.entries.get(keyOf(cluster));
    if (e) e.snap = undefined;
  }

  /** Drop a cluster entirely (deleted). */
  forget(cluster: { metadata: { namespace: string; name: string } }): void {
    const key = keyOf(cluster);
    const e = this.entries.get(key);
    if (e) this.unwatch(e);
    this.entries.delete(key);
  }

  /** End every watch (the engine stops). */
  close(): void {
    for (const e of this.entries.values()) this.unwatch(e);
    this.entries.clear();
  }

  /** Clusters whose nodes are being watched now (diagnostics, tests). */
  get watching(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.watching) n++;
    return n;
  }

  private async read(cluster: CapiClusterObject, key: string, e: Entry): Promise<NodeSnapshot | undefined> {
    const client = await this.clientFor(cluster);
    if (!client) return undefined;
    const { items, resourceVersion } = await client.listNodesAt();
    const snap = snapshotOf(items, this.clock.now());
    const ref = { namespace: cluster.metadata.namespace, name: cluster.metadata.name };
    if (this.entries.get(key) === e) {
      this.noteList(ref, e, snap);
      e.snap = snap;
      e.snapRv = resourceVersion;
      if (e.watching !== client) {
        this.unwatch(e);
        if (resourceVersion !== '') this.follow(ref, key, e, client, resourceVersion);
      }
    }
    return snap;
  }

  /** Keep `e.snap` current from a watch of `client`'s nodes, reopened when the server ends it. */
  private follow(
    clusterRef: { namespace: string; name: string },
    key: string,
    e: Entry,
    client: WorkloadClientApi,
    rv: string,
  ): void {
    const stop = new AbortController();
    e.stop = stop;
    e.watching = client;
    e.rv = rv;
    const live = () => !stop.signal.aborted && this.entries.get(key) === e && e.stop === stop;
    void (async () => {
      while (live()) {
        const started = this.clock.now();
        const seconds =
          WATCH_SECONDS.min + Math.floor(this.random() * (WATCH_SECONDS.max - WATCH_SECONDS.min));
        try {
          await client.watchNodes(
            e.rv!,
            (event) => {
              if (!live()) return;
              if (event.type === 'BOOKMARK') {
                e.rv = event.resourceVersion;
                return;
              }
              const rv = event.object.metadata.resourceVersion;
              if (rv) e.rv = rv;
              // older than the list that overtook it
              if (rv && e.snapRv && olderOrSame(rv, e.snapRv)) return;
              this.noteEvent(clusterRef, e, event.type, event.object);
              // invalidated: the next read lists again
              if (!e.snap) return;
              e.snap = applyEvent(e.snap, event.type, event.object, this.clock.now());
              if (rv) e.snapRv = rv;
            },
            { timeoutSeconds: seconds, signal: stop.signal },
          );
        } catch {
          break; // gone, refused (410: too old) or stopped: the next read lists again
        }
        // A server that ends watches at once is not followed in a loop: list again on the next read.
        if (this.clock.now() - started < 1000) break;
      }
      if (e.stop === stop) {
        e.stop = undefined;
        e.watching = undefined;
      }
    })();
  }

  /** Report the nodes a list finds changed, joined or gone since the last report. */
  private noteList(cluster: { namespace: string; name: string }, e: Entry, snap: NodeSnapshot): void {
    const first = e.seen === undefined;
    const seen = (e.seen ??= new Map<string, SeenNode>());
    const changed: WorkloadNode[] = [];
    for (const [name, was] of seen) {
      if (!snap.byName.has(name)) {
        seen.delete(name);
        changed.push(was.node);
      }
    }
    for (const node of snap.byName.values()) {
      const signature = nodeSignature(node);
      if (seen.get(node.metadata.name)?.signature === signature) continue;
      seen.set(node.metadata.name, { node, signature });
      changed.push(node);
    }
    if (!first) for (const node of changed) this.tell(cluster, node);
  }

  /** Report one watch event's node when it changed what a Machine mirrors. */
  private noteEvent(
    cluster: { namespace: string; name: string },
    e: Entry,
    type: 'ADDED' | 'MODIFIED' | 'DELETED',
    node: WorkloadNode,
  ): void {
    const seen = (e.seen ??= new Map<string, SeenNode>());
    const name = node.metadata.name;
    if (type === 'DELETED') {
      if (!seen.delete(name)) return;
    } else {
      const signature = nodeSignature(node);
      if (seen.get(name)?.signature === signature) return;
      seen.set(name, { node, signature });
    }
    this.tell(cluster, node);
  }

  private tell(cluster: { namespace: string; name: string }, node: WorkloadNode): void {
    for (const listener of this.listeners) listener(cluster, node);
  }

  private unwatch(e: Entry): void {
    e.stop?.abort();
    e.stop = undefined;
    e.watching = undefined;
  }
}

/** True when both resourceVersions are numbers (etcd's and the emulator's are) and `a` is not after `b`. */
function olderOrSame(a: string, b: string): boolean {
  const x = Number(a);
  const y = Number(b);
  return Number.isSafeInteger(x) && Number.isSafeInteger(y) && x <= y;
}

function keyOf(cluster: { metadata: { namespace: string; name: string } }): string {
  return `${cluster.metadata.namespace}/${cluster.metadata.name}`;
}

function snapshotOf(nodes: Iterable<WorkloadNode>, at: number): NodeSnapshot {
  const byProviderId = new Map<string, WorkloadNode>();
  const byName = new Map<string, WorkloadNode>();
  for (const n of nodes) {
    byName.set(n.metadata.name, n);
    if (n.spec?.providerID) byProviderId.set(n.spec.providerID, n);
  }
  return { at, byProviderId, byName };
}

/** What a Machine mirrors from its node, as one string: a change in it is reported. */
function nodeSignature(node: WorkloadNode): string {
  const ready = nodeReadyCondition(node);
  const info = node.status?.nodeInfo;
  return JSON.stringify([
    node.spec?.providerID ?? '',
    ready?.status ?? '',
    ready?.reason ?? '',
    ready?.message ?? '',
    ready?.lastTransitionTime ?? '',
    info?.kubeletVersion ?? '',
    info?.osImage ?? '',
  ]);
}

/** A new snapshot with one watch event applied (snapshots handed out are never changed). */
function applyEvent(
  snap: NodeSnapshot | undefined,
  type: 'ADDED' | 'MODIFIED' | 'DELETED',
  node: WorkloadNode,
  at: number,
): NodeSnapshot {
  const byName = new Map(snap?.byName);
  if (type === 'DELETED') byName.delete(node.metadata.name);
  else byName.set(node.metadata.name, node);
  return snapshotOf(byName.values(), at);
}

/** The node's `Ready` condition. */
export function nodeReadyCondition(
  node: WorkloadNode,
): { status: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}
