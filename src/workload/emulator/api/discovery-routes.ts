import {
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
  NotFoundError,
  type ApiResource,
  type KubeVersionInfo,
} from '../../../domain/index.ts';
import type { RequestContext } from './context.ts';
import { openApiCoreV1, openApiRoot } from './openapi.ts';
import { sendJson, sendText } from './http-io.ts';

/** What the emulated API server serves, per group/version (legacy discovery). */
export const CORE_RESOURCES: ApiResource[] = [
  {
    name: 'configmaps',
    singularName: 'configmap',
    namespaced: true,
    kind: 'ConfigMap',
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'],
    shortNames: ['cm'],
  },
  {
    name: 'namespaces',
    singularName: 'namespace',
    namespaced: false,
    kind: 'Namespace',
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'],
    shortNames: ['ns'],
  },
  {
    name: 'nodes',
    singularName: 'node',
    namespaced: false,
    kind: 'Node',
    verbs: ['delete', 'get', 'list', 'patch', 'watch'],
    shortNames: ['no'],
  },
  {
    name: 'pods',
    singularName: 'pod',
    namespaced: true,
    kind: 'Pod',
    verbs: ['delete', 'get', 'list', 'watch'],
    shortNames: ['po'],
    categories: ['all'],
  },
  {
    name: 'pods/eviction',
    singularName: '',
    namespaced: true,
    group: 'policy',
    version: 'v1',
    kind: 'Eviction',
    verbs: ['create'],
  },
  { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
  {
    name: 'secrets',
    singularName: 'secret',
    namespaced: true,
    kind: 'Secret',
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update'],
  },
];

export const GROUP_RESOURCES: Record<string, { version: string; resources: ApiResource[] }> = {
  apps: {
    version: 'v1',
    resources: [
      {
        name: 'daemonsets',
        singularName: 'daemonset',
        namespaced: true,
        kind: 'DaemonSet',
        verbs: ['get', 'list'],
        shortNames: ['ds'],
        categories: ['all'],
      },
      {
        name: 'deployments',
        singularName: 'deployment',
        namespaced: true,
        kind: 'Deployment',
        verbs: ['get', 'list'],
        shortNames: ['deploy'],
        categories: ['all'],
      },
      {
        name: 'replicasets',
        singularName: 'replicaset',
        namespaced: true,
        kind: 'ReplicaSet',
        verbs: ['get', 'list'],
        shortNames: ['rs'],
        categories: ['all'],
      },
    ],
  },
  policy: {
    version: 'v1',
    resources: [
      {
        name: 'poddisruptionbudgets',
        singularName: 'poddisruptionbudget',
        namespaced: true,
        kind: 'PodDisruptionBudget',
        verbs: ['get', 'list'],
        shortNames: ['pdb'],
      },
    ],
  },
};

/** `/version` of an emulated cluster: the control plane's Kubernetes version. */
export function versionInfo(version: string): KubeVersionInfo {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  return {
    major: m?.[1] ?? '1',
    minor: m?.[2] ?? '0',
    gitVersion: version,
    gitCommit: 'emulated',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: 'emulated',
    compiler: 'emulated',
    platform: 'linux/amd64',
  };
}

/** Serve discovery and health paths; false when the path is not one of them. */
export function serveDiscovery(ctx: RequestContext, segs: string[], version: string): boolean {
  const path = segs.join('/');
  if (['healthz', 'livez', 'readyz'].includes(path)) {
    sendText(ctx.res, 200, 'ok');
    return true;
  }
  if (ctx.method !== 'GET') return false;
  if (path === 'openapi/v3') {
    sendJson(ctx.res, 200, openApiRoot());
    return true;
  }
  if (path === 'openapi/v3/api/v1') {
    sendJson(ctx.res, 200, openApiCoreV1());
    return true;
  }
  switch (segs.length) {
    case 1:
      if (segs[0] === 'version') sendJson(ctx.res, 200, versionInfo(version));
      else if (segs[0] === 'api') sendJson(ctx.res, 200, apiVersionsDocument(ctx.view.serverAddress()));
      else if (segs[0] === 'apis')
        sendJson(
          ctx.res,
          200,
          apiGroupListDocument(
            Object.entries(GROUP_RESOURCES).map(([name, g]) => ({ name, versions: [g.version] })),
          ),
        );
      else return false;
      return true;
    case 2:
      if (segs[0] === 'api' && segs[1] === 'v1')
        sendJson(ctx.res, 200, apiResourceListDocument('v1', CORE_RESOURCES));
      else if (segs[0] === 'apis') {
        const g = GROUP_RESOURCES[segs[1]!];
        if (!g)
          throw new NotFoundError('the server could not find the requested resource', { code: 'NotFound' });
        sendJson(ctx.res, 200, apiGroupDocument({ name: segs[1]!, versions: [g.version] }));
      } else return false;
      return true;
    case 3: {
      if (segs[0] !== 'apis') return false;
      const g = GROUP_RESOURCES[segs[1]!];
      if (!g || g.version !== segs[2])
        throw new NotFoundError('the server could not find the requested resource', { code: 'NotFound' });
      sendJson(ctx.res, 200, apiResourceListDocument(`${segs[1]}/${segs[2]}`, g.resources));
      return true;
    }
    default:
      return false;
  }
}
