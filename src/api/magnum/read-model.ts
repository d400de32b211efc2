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

const TYPES = [MagnumTypes.ClusterTemplate, MagnumTypes.NodeGroup, MagnumTypes.Cluster];
const PAGE = 1000;

/**
 * An in-memory projection of the Magnum objects the read paths need: clusters (by uid and by
 * project and name), cluster templates (label diffs, visibility, name look-ups) and node groups
 * by cluster (node counts and addresses). It follows the store's revision feed, so answering
 * `GET /v1/clusters/{uuid}` costs one indexed store read (the head revision) and no parsing.
 *
 * Freshness: {@link ensureFresh} runs before every request. It reads the store's head revision
 * and, when the projection is behind (a write by this or any other process), reads the feed
 * entries it has not seen before the request is answered, so a request always sees every write
 * that finished before it started. Writes read the objects they change from the store itself.
 */
export class MagnumReadModel {
  readonly templates = new Map<string, ClusterTemplateObject>();
  private readonly nodeGroups = new Map<string, Map<string, NodeGroupObject>>();
  /** Clusters by uid, in creation order. */
  private readonly clusters = new Map<string, MagnumClusterObject>();
  /** Clusters by project, each in creation order. */
  private readonly clustersByProject = new Map<string, Map<string, MagnumClusterObject>>();
  private readonly clusterByName = new Map<string, string>();
  /** Per cluster: a counter bumped whenever the cluster or one of its node groups changes. */
  private readonly stamps = new Map<string, number>();
  private stampCounter = 0;
  /** Serialized wire forms, keyed by what they depend on (see {@link cachedJson}). */
  private readonly json = new Map<string, { key: string; text: string }>();
  /** Every feed entry up to here is applied (0: nothing loaded yet). */
  private revision = 0;
  private running: Promise<void> | undefined;
  private headInFlight: Promise<number> | undefined;
  private headNext: Promise<number> | undefined;
  private maxNodeGroupId = 0;

  constructor(private readonly store: ObjectStore) {}

  /** Load everything. */
  async start(): Promise<void> {
    await this.ensureFresh();
  }

  stop(): void {
    this.running = undefined;
  }

  /**
   * Before a request: one read of the store's head revision, and a catch-up to it when behind.
   * It waits only for writes that finished before it was called, however busy other writers are.
   */
  async ensureFresh(): Promise<void> {
    const head = await this.readHead();
    while (this.revision === 0 || this.revision < head) {
      if (!this.running) {
        this.running = this.catchUp().finally(() => {
          this.running = undefined;
        });
      }
      await this.running;
    }
  }

  /**
   * The store's head revision, read by a query that started after this call. Concurrent callers
   * share queries: while one is in flight, later callers all wait for the next one (a query that
   * started earlier could miss a write that finished just before they arrived), so a busy API
   * server makes at most one head read at a time instead of one per request.
   */
  private readHead(): Promise<number> {
    if (!this.headInFlight) {
      this.headInFlight = this.store.currentRevision().finally(() => {
        this.headInFlight = undefined;
      });
      return this.headInFlight;
    }
    this.headNext ??= this.headInFlight
      .catch(() => undefined)
      .then(() => {
        this.headNext = undefined;
        return this.readHead();
      });
    return this.headNext;
  }

  /** Bring the projection up to the store's current head. */
  async sync(): Promise<void> {
    await this.ensureFresh();
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
    this.clustersByProject.clear();
    this.clusterByName.clear();
    this.json.clear();
    for (const type of TYPES) {
      let cont: string | undefined;
      do {
        const page = await this.store.list<ApiObject>(type, {
          limit: PAGE,
          ...(cont ? { continue: cont } : {}),
        });
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
        if (!byCluster)
          this.nodeGroups.set(ng.spec.clusterId, (byCluster = new Map<string, NodeGroupObject>()));
        byCluster.set(ng.metadata.uid, ng);
        this.touch(ng.spec.clusterId);
        if (ng.spec.id > this.maxNodeGroupId) this.maxNodeGroupId = ng.spec.id;
        break;
      }
      case MagnumTypes.Cluster: {
        const c = obj as unknown as MagnumClusterObject;
        this.clusters.set(c.metadata.uid, c);
        let inProject = this.clustersByProject.get(c.metadata.namespace);
        if (!inProject)
          this.clustersByProject.set(
            c.metadata.namespace,
            (inProject = new Map<string, MagnumClusterObject>()),
          );
        inProject.set(c.metadata.uid, c);
        this.touch(c.metadata.uid);
        this.clusterByName.set(nameKey(c.metadata.namespace, c.metadata.name), c.metadata.uid);
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
        this.touch(ng.spec.clusterId);
        if (byCluster && byCluster.size === 0) this.nodeGroups.delete(ng.spec.clusterId);
        break;
      }
      case MagnumTypes.Cluster: {
        this.clusters.delete(uid);
        const inProject = this.clustersByProject.get(obj.metadata.namespace);
        inProject?.delete(uid);
        if (inProject && inProject.size === 0) this.clustersByProject.delete(obj.metadata.namespace);
        this.stamps.delete(uid);
        this.json.delete(`${uid}|short`);
        this.json.delete(`${uid}|full`);
        const key = nameKey(obj.metadata.namespace, obj.metadata.name);
        if (this.clusterByName.get(key) === uid) this.clusterByName.delete(key);
        break;
      }
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

  private touch(clusterUid: string): void {
    this.stamps.set(clusterUid, ++this.stampCounter);
  }

  /** Changes whenever the cluster or any of its node groups changes. */
  clusterStamp(clusterUid: string): number {
    return this.stamps.get(clusterUid) ?? 0;
  }

  /**
   * The JSON text of a cluster's wire form, rebuilt only when `key` (everything the form depends
   * on: the cluster stamp, the template version, the microversion's field names, the base URL)
   * changed since it was last built.
   */
  cachedJson(clusterUid: string, form: 'short' | 'full', key: string, build: () => unknown): string {
    const slot = `${clusterUid}|${form}`;
    const hit = this.json.get(slot);
    if (hit && hit.key === key) return hit.text;
    const text = JSON.stringify(build());
    if (this.clusters.has(clusterUid)) this.json.set(slot, { key, text });
    return text;
  }

  /** A cluster by uid. */
  cluster(uid: string): MagnumClusterObject | undefined {
    return this.clusters.get(uid);
  }

  /** A cluster of a project by its (unique in the project) Magnum name. */
  clusterNamed(namespace: string, name: string): MagnumClusterObject | undefined {
    const uid = this.clusterByName.get(nameKey(namespace, name));
    return uid === undefined ? undefined : this.clusters.get(uid);
  }

  /** Clusters whose Magnum name is `name` (any project). */
  clustersNamed(name: string): MagnumClusterObject[] {
    const out: MagnumClusterObject[] = [];
    for (const c of this.clusters.values()) if (c.metadata.name === name) out.push(c);
    return out;
  }

  /** Number of clusters that use the template. */
  clustersUsingTemplate(templateUid: string): number {
    let n = 0;
    for (const c of this.clusters.values()) if (c.spec.clusterTemplateId === templateUid) n++;
    return n;
  }

  /** Clusters in creation order, of one project or (no argument) of all. */
  clustersOf(namespace?: string): MagnumClusterObject[] {
    const source = namespace === undefined ? this.clusters : this.clustersByProject.get(namespace);
    return source ? [...source.values()] : [];
  }

  /** A fresh Magnum integer id for a node group (unique within this process's view). */
  nextNodeGroupId(): number {
    return ++this.maxNodeGroupId;
  }
}

function nameKey(namespace: string, name: string): string {
  return `${namespace}\u0000${name}`;
}
