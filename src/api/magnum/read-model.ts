import {
  ConflictError,
  MagnumTypes,
  typeOf,
  type ApiObject,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../domain/index.ts';
import type { ObjectStore, WatchEvent } from '../../store/index.ts';

/** What the read model keeps of a Magnum cluster: enough for name look-ups, references and stats. */
export interface ClusterSummary {
  uid: string;
  namespace: string;
  name: string;
  templateId: string;
}

const TYPES = [MagnumTypes.ClusterTemplate, MagnumTypes.NodeGroup, MagnumTypes.Cluster];
const PAGE = 1000;

/**
 * An in-memory projection of the Magnum objects that nearly every response needs besides the
 * object itself: cluster templates (label diffs, visibility, name look-ups), node groups by
 * cluster (node counts and addresses) and cluster summaries (name look-ups across projects,
 * template references, stats). It follows the store's revision feed, so one indexed store read
 * per request is enough to answer `GET /v1/clusters/{uuid}`.
 *
 * Freshness: the store calls `onChange` after every commit (for PostgreSQL, after any
 * process's commit); the next request then reads the feed entries it has not seen before it
 * answers. In one process a request therefore always sees the writes that finished before it.
 */
export class MagnumReadModel {
  readonly templates = new Map<string, ClusterTemplateObject>();
  private readonly nodeGroups = new Map<string, Map<string, NodeGroupObject>>();
  private readonly clusters = new Map<string, ClusterSummary>();
  private revision = 0;
  private dirty = true;
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private maxNodeGroupId = 0;

  constructor(private readonly store: ObjectStore) {}

  /** Load everything and follow the feed. */
  async start(): Promise<void> {
    this.unsubscribe ??= this.store.onChange(() => {
      this.dirty = true;
    });
    await this.sync();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Bring the projection up to date with the store (cheap when nothing changed). */
  async sync(): Promise<void> {
    while (this.dirty || this.revision === 0) {
      if (this.running) {
        await this.running;
        continue;
      }
      this.dirty = false;
      this.running = this.catchUp().finally(() => {
        this.running = undefined;
      });
      try {
        await this.running;
      } catch (err) {
        this.dirty = true;
        throw err;
      }
    }
  }

  private async catchUp(): Promise<void> {
    if (this.revision === 0) {
      await this.reload();
      return;
    }
    for (;;) {
      const head = await this.store.currentRevision();
      let events: WatchEvent[];
      try {
        events = await this.store.changes(this.revision, { types: TYPES, limit: PAGE });
      } catch (err) {
        if (err instanceof ConflictError && err.code === 'Expired') {
          await this.reload();
          return;
        }
        throw err;
      }
      for (const e of events) this.apply(e);
      const last = events.at(-1)?.revision ?? this.revision;
      if (events.length < PAGE) {
        // Every entry up to `head` was committed before we read it; none of them matched later.
        this.revision = Math.max(last, head, this.revision);
        return;
      }
      this.revision = last;
    }
  }

  private async reload(): Promise<void> {
    const head = Math.max(1, await this.store.currentRevision());
    this.templates.clear();
    this.nodeGroups.clear();
    this.clusters.clear();
    for (const type of TYPES) {
      let cont: string | undefined;
      do {
        const page = await this.store.list<ApiObject>(type, { limit: PAGE, ...(cont ? { continue: cont } : {}) });
        for (const obj of page.items) this.put(type, obj);
        cont = page.continue;
      } while (cont);
    }
    // Entries after `head` are replayed by the next sync; replaying in order ends at the latest state.
    this.revision = head;
  }

  private apply(e: WatchEvent): void {
    const type = typeOf(e.object);
    if (e.type === 'DELETED') this.remove(type, e.object.metadata.uid, e.object);
    else this.put(type, e.object);
  }

  private put(type: string, obj: WatchEvent['object']): void {
    switch (type) {
      case MagnumTypes.ClusterTemplate:
        this.templates.set(obj.metadata.uid, obj as unknown as ClusterTemplateObject);
        break;
      case MagnumTypes.NodeGroup: {
        const ng = obj as unknown as NodeGroupObject;
        let byCluster = this.nodeGroups.get(ng.spec.clusterId);
        if (!byCluster) this.nodeGroups.set(ng.spec.clusterId, (byCluster = new Map<string, NodeGroupObject>()));
        byCluster.set(ng.metadata.uid, ng);
        if (ng.spec.id > this.maxNodeGroupId) this.maxNodeGroupId = ng.spec.id;
        break;
      }
      case MagnumTypes.Cluster: {
        const c = obj as unknown as MagnumClusterObject;
        this.clusters.set(c.metadata.uid, {
          uid: c.metadata.uid,
          namespace: c.metadata.namespace,
          name: c.metadata.name,
          templateId: c.spec.clusterTemplateId,
        });
        break;
      }
      default:
        break;
    }
  }

  private remove(type: string, uid: string, obj: WatchEvent['object']): void {
    switch (type) {
      case MagnumTypes.ClusterTemplate:
        this.templates.delete(uid);
        break;
      case MagnumTypes.NodeGroup: {
        const ng = obj as unknown as NodeGroupObject;
        const byCluster = this.nodeGroups.get(ng.spec.clusterId);
        byCluster?.delete(uid);
        if (byCluster && byCluster.size === 0) this.nodeGroups.delete(ng.spec.clusterId);
        break;
      }
      case MagnumTypes.Cluster:
        this.clusters.delete(uid);
        break;
      default:
        break;
    }
  }

  /** Node groups of a cluster, default ones first, then by id. */
  nodeGroupsOf(clusterUid: string): NodeGroupObject[] {
    const m = this.nodeGroups.get(clusterUid);
    if (!m) return [];
    return [...m.values()].sort((a, b) => a.spec.id - b.spec.id);
  }

  /** Clusters whose Magnum name is `name` (any project). */
  clustersNamed(name: string): ClusterSummary[] {
    const out: ClusterSummary[] = [];
    for (const c of this.clusters.values()) if (c.name === name) out.push(c);
    return out;
  }

  /** Number of clusters that use the template. */
  clustersUsingTemplate(templateUid: string): number {
    let n = 0;
    for (const c of this.clusters.values()) if (c.templateId === templateUid) n++;
    return n;
  }

  /** Cluster summaries, optionally of one project. */
  clusterSummaries(namespace?: string): ClusterSummary[] {
    const out: ClusterSummary[] = [];
    for (const c of this.clusters.values()) if (namespace === undefined || c.namespace === namespace) out.push(c);
    return out;
  }

  /** A fresh Magnum integer id for a node group (unique within this process's view). */
  nextNodeGroupId(): number {
    return ++this.maxNodeGroupId;
  }
}
