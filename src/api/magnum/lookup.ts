import {
  ConflictError,
  MagnumTypes,
  NotFoundError,
  nodeGroupStoreName,
  templateName,
  type ClusterTemplateObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../domain/index.ts';
import type { Caller, Env } from './context.ts';
import { isUuidLike } from './pagination.ts';

/**
 * Name-or-UUID look-ups with Magnum's visibility rules. A UUID-like identifier is looked up
 * as a UUID only; a name matching several visible objects is a 409 asking for the UUID.
 */

export function clusterNotFound(ident: string): NotFoundError {
  return new NotFoundError(`Cluster ${ident} could not be found.`, { code: 'ClusterNotFound' });
}

export function templateNotFound(ident: string): NotFoundError {
  return new NotFoundError(`ClusterTemplate ${ident} could not be found.`, {
    code: 'ClusterTemplateNotFound',
  });
}

export function nodeGroupNotFound(ident: string): NotFoundError {
  return new NotFoundError(`Nodegroup ${ident} could not be found.`, { code: 'NodeGroupNotFound' });
}

/**
 * A cluster by name or uuid. Without `allProjects` only the caller's project is searched (other
 * projects' clusters are 404, as Magnum's tenant filter makes them); with it (admin rules
 * `*_all_projects`) every project is. Reads come from the read model; `fresh` reads the store
 * (writes need the current resourceVersion).
 */
export async function findCluster(
  env: Env,
  caller: Caller,
  ident: string,
  allProjects: boolean,
  fresh = false,
): Promise<MagnumClusterObject> {
  let c: MagnumClusterObject | undefined;
  if (isUuidLike(ident)) {
    c = env.model.cluster(normalizeUuid(ident));
    if (!c || (!allProjects && c.metadata.namespace !== caller.projectId)) throw clusterNotFound(ident);
  } else {
    c = env.model.clusterNamed(caller.projectId, ident);
    if (!c && allProjects) {
      const named = env.model.clustersNamed(ident);
      if (named.length > 1) {
        throw new ConflictError(
          `Multiple clusters exist with same name ${ident}: please use the cluster uuid instead.`,
          { code: 'Conflict' },
        );
      }
      c = named[0];
    }
    if (!c) throw clusterNotFound(ident);
  }
  if (!fresh) return c;
  const stored = await env.store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, c.metadata.uid);
  if (!stored) throw clusterNotFound(ident);
  return stored;
}

/** `8-4-4-4-12` lower case. */
export function normalizeUuid(s: string): string {
  const hex = s.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether the caller sees a template: admins all, others their project's and public, non-hidden ones. */
export function templateVisible(t: ClusterTemplateObject, caller: Caller): boolean {
  return caller.isAdmin || t.metadata.namespace === caller.projectId || (t.spec.public && !t.spec.hidden);
}

/** A visible template by name or uuid. */
export function findTemplate(env: Env, caller: Caller, ident: string): ClusterTemplateObject {
  if (isUuidLike(ident)) {
    const t = env.model.templates.get(normalizeUuid(ident));
    if (!t || !templateVisible(t, caller)) throw templateNotFound(ident);
    return t;
  }
  const matches: ClusterTemplateObject[] = [];
  for (const t of env.model.templates.values())
    if (templateName(t) === ident && templateVisible(t, caller)) matches.push(t);
  if (matches.length === 0) throw templateNotFound(ident);
  if (matches.length > 1) {
    throw new ConflictError(
      `Multiple cluster templates exist with same name ${ident}: please use the cluster template uuid instead.`,
      {
        code: 'Conflict',
      },
    );
  }
  return matches[0]!;
}

/** A node group of a cluster by name or uuid, read from the store (fresh, for writes). */
export async function findNodeGroup(
  env: Env,
  cluster: MagnumClusterObject,
  ident: string,
): Promise<NodeGroupObject> {
  let name = ident;
  if (isUuidLike(ident)) {
    const uid = normalizeUuid(ident);
    const g = env.model.nodeGroupsOf(cluster.metadata.uid).find((x) => x.metadata.uid === uid);
    if (!g) throw nodeGroupNotFound(ident);
    name = g.spec.name;
  }
  const g = await env.store.get<NodeGroupObject>(
    MagnumTypes.NodeGroup,
    cluster.metadata.namespace,
    nodeGroupStoreName(cluster.metadata.uid, name),
  );
  if (!g) throw nodeGroupNotFound(ident);
  return g;
}

/** The cluster's default node group of a role. */
export async function defaultNodeGroup(
  env: Env,
  cluster: MagnumClusterObject,
  role: 'master' | 'worker',
): Promise<NodeGroupObject> {
  const g = await env.store.get<NodeGroupObject>(
    MagnumTypes.NodeGroup,
    cluster.metadata.namespace,
    nodeGroupStoreName(cluster.metadata.uid, `default-${role}`),
  );
  if (!g) throw nodeGroupNotFound(`default-${role}`);
  return g;
}
