import { RESOURCES, servedGroups } from './resources.ts';

/**
 * A minimal OpenAPI v3 description: the root index and, per group/version, the paths with
 * their `x-kubernetes-group-version-kind` and the `fieldValidation` query parameter. kubectl
 * reads it to learn that the server validates fields itself, and then skips its client-side
 * schema validation (which would need OpenAPI v2 in protobuf). No schemas are published:
 * kubectl computes `apply` patches as JSON merge patches, as for any custom resource.
 */

/** `GET /openapi/v3`. */
export function openApiRoot(prefix: string) {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of servedGroups()) {
    for (const v of g.versions) {
      paths[`apis/${g.name}/${v}`] = { serverRelativeURL: `${prefix}/openapi/v3/apis/${g.name}/${v}` };
    }
  }
  return { paths };
}

const param = (name: string) => ({ name, in: 'query', schema: { type: 'string' }, uniqueItems: true });

/** `GET /openapi/v3/apis/<group>/<version>`, or undefined. */
export function openApiGroupVersion(group: string, version: string) {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const r of rs) {
    const gvk = { 'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind: r.kind } };
    const op = (id: string, extra: unknown[] = []) => ({
      operationId: `${id}${r.kind}`,
      ...gvk,
      parameters: [param('dryRun'), param('fieldManager'), ...extra],
      responses: { '200': { description: 'OK' } },
    });
    paths[`/apis/${r.group}/${r.version}/namespaces/{namespace}/${r.plural}`] = {
      get: op('list'),
      post: op('create', [param('fieldValidation')]),
    };
    paths[`/apis/${r.group}/${r.version}/namespaces/{namespace}/${r.plural}/{name}`] = {
      get: op('read'),
      put: op('replace', [param('fieldValidation')]),
      patch: op('patch', [param('fieldValidation'), param('force')]),
      delete: op('delete'),
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Magnetar management API', version: `${group}/${version}` },
    paths,
    components: { schemas: {} },
  };
}
