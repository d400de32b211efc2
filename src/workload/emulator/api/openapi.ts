/**
 * A minimal OpenAPI v3 description of what an emulated cluster accepts writes for
 * (namespaces, Secrets, ConfigMaps): the paths with their `x-kubernetes-group-version-kind`
 * and the `fieldValidation` parameter. That is what kubectl needs to leave validation to the
 * server, so `kubectl apply` works; no schemas are published.
 */

const WRITABLE = [
  { kind: 'Namespace', plural: 'namespaces', namespaced: false },
  { kind: 'Secret', plural: 'secrets', namespaced: true },
  { kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
] as const;

/** `GET /openapi/v3`. */
export function openApiRoot() {
  return { paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1' } } };
}

const param = (name: string) => ({ name, in: 'query', schema: { type: 'string' }, uniqueItems: true });

/** `GET /openapi/v3/api/v1`. */
export function openApiCoreV1() {
  const paths: Record<string, unknown> = {};
  for (const r of WRITABLE) {
    const gvk = { 'x-kubernetes-group-version-kind': { group: '', version: 'v1', kind: r.kind } };
    const op = (id: string, extra: unknown[] = []) => ({
      operationId: `${id}CoreV1${r.namespaced ? 'Namespaced' : ''}${r.kind}`,
      ...gvk,
      parameters: [param('dryRun'), param('fieldManager'), ...extra],
      responses: { '200': { description: 'OK' } },
    });
    const base = r.namespaced ? `/api/v1/namespaces/{namespace}/${r.plural}` : `/api/v1/${r.plural}`;
    paths[base] = { get: op('list'), post: op('create', [param('fieldValidation')]) };
    paths[`${base}/{name}`] = {
      get: op('read'),
      put: op('replace', [param('fieldValidation')]),
      patch: op('patch', [param('fieldValidation'), param('force')]),
      delete: op('delete'),
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Magnetar emulated workload cluster', version: 'v1' },
    paths,
    components: { schemas: {} },
  };
}
