/**
 * The shape of every object Magnetar stores: Kubernetes-style `metadata`, `spec`, `status`.
 * The Magnum façade, the Kubernetes-style façade, the controllers and the embedded cloud all
 * read and write these through the object store.
 */

/** A reference from an object to the object that owns it. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** True for the single managing owner. */
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Standard object metadata. `namespace` is the OpenStack project id ('' for cluster-scoped kinds). */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  /** Store revision of the last write, as a decimal string (opaque to clients). */
  resourceVersion: string;
  /** Incremented by the store whenever `spec` changes. */
  generation: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  finalizers: string[];
}

/** Any stored object. */
export interface ApiObject<Spec = Record<string, unknown>, Status = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status: Status;
}

/** What a caller passes to create an object: the store fills uid, resourceVersion, generation, timestamps. */
export interface NewObject<Spec = Record<string, unknown>, Status = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    /** When `name` is empty, the store appends 5 random characters to this prefix. */
    generateName?: string;
    namespace: string;
    /** Optional caller-chosen uid (e.g. a Magnum uuid); generated when absent. */
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
  };
  spec: Spec;
  status?: Status;
}

/**
 * The store's type key of an object: `Kind.group` (`Cluster.cluster.x-k8s.io`),
 * or just `Kind` for the core group (`Secret`).
 */
export type TypeKey = string;

/** The type key of an apiVersion + kind pair. */
export function typeKey(apiVersion: string, kind: string): TypeKey {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
}

/** The type key of an object. */
export function typeOf(obj: { apiVersion: string; kind: string }): TypeKey {
  return typeKey(obj.apiVersion, obj.kind);
}

/** A Kubernetes-style condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime: string;
  observedGeneration?: number;
  severity?: 'Error' | 'Warning' | 'Info' | '';
}

/**
 * Set (or replace) a condition in a list, keeping `lastTransitionTime` when the status
 * does not change. Returns a new list.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string },
  now: string,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : (next.lastTransitionTime ?? now);
  const merged: Condition = { ...next, lastTransitionTime };
  if (i >= 0) list[i] = merged;
  else list.push(merged);
  return list;
}

/** Find a condition by type. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition exists with status `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}
