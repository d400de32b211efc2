/**
 * Discovery documents (the legacy, non-aggregated form kubectl falls back to): `/api`
 * (`APIVersions`), `/apis` (`APIGroupList`), and `/api/v1`, `/apis/<group>/<version>`
 * (`APIResourceList`). kubectl reads resource names, kinds, verbs, short names and, for
 * `pods/eviction`, the group/version of the subresource's kind.
 */

/** One resource in an APIResourceList. */
export interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** For subresources served in another group/version (e.g. `pods/eviction` → policy/v1). */
  group?: string;
  version?: string;
}

/** `/api`. */
export function apiVersionsDocument(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** A group and its versions (the first is preferred). */
export interface ApiGroupInfo {
  name: string;
  versions: string[];
}

/** `/apis`, or `/apis/<group>` when given a single group. */
export function apiGroupDocument(group: ApiGroupInfo) {
  const versions = group.versions.map((v) => ({ groupVersion: `${group.name}/${v}`, version: v }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group.name, versions, preferredVersion: versions[0]! };
}

/** `/apis`. */
export function apiGroupListDocument(groups: ApiGroupInfo[]) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => {
      const { kind: _k, apiVersion: _a, ...rest } = apiGroupDocument(g);
      return rest;
    }),
  };
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function apiResourceListDocument(groupVersion: string, resources: ApiResource[]) {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}
