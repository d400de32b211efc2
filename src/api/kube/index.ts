import type { FastifyPluginAsync } from 'fastify';
import { caller, type KubeRoutesDeps } from './context.ts';
import { discoveryRoutes } from './discovery-routes.ts';
import { renderManagementKubeconfig } from './kubeconfig.ts';
import { resourceRoutes } from './resource-routes.ts';
import { kubeErrorHandler } from './status.ts';
import { notFoundStatus } from './not-found.ts';
import { kubeStatusBody } from '../errors.ts';
import { InputError } from '../../domain/index.ts';

/**
 * The Kubernetes-style management API: the Cluster API objects of the store served with
 * Kubernetes API conventions (discovery, list/get/watch, create/update/patch/delete, scale,
 * Tables), so that `kubectl` pointed at `<base>/k8s` works on them. Namespaces are project ids.
 *
 * Also `GET /k8s/management/kubeconfig`: a kubeconfig for the caller (what
 * `coe management config` writes).
 */

export type { KubeRoutesDeps } from './context.ts';
export {
  managementKubeconfig,
  renderManagementKubeconfig,
  MANAGEMENT_CLUSTER_NAME,
  type ManagementKubeconfigParams,
} from './kubeconfig.ts';
export {
  loadOrCreateKubeTls,
  startKubeTlsFront,
  generateKubeTls,
  KUBE_TLS_FILE,
  type KubeTlsMaterial,
  type KubeTlsFront,
} from './tls.ts';

/** Prefix the plugin is mounted at. */
export const KUBE_PREFIX = '/k8s';

/** The plugin; mount at {@link KUBE_PREFIX}. */
export function kubeRoutes(deps: KubeRoutesDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(kubeErrorHandler);
    app.setNotFoundHandler((_req, reply) =>
      reply.code(404).send(kubeStatusBody(404, notFoundStatus().message)),
    );
    // Server-side apply sends YAML.
    app.addContentTypeParser('application/apply-patch+yaml', { parseAs: 'string' }, (_req, body, done) => {
      done(null, body);
    });
    app.addContentTypeParser(['application/yaml'], { parseAs: 'string' }, (_req, _body, done) => {
      done(
        new InputError('send objects as JSON (kubectl does)', { code: 'UnsupportedMediaType' }),
        undefined,
      );
    });
    discoveryRoutes(app, deps, KUBE_PREFIX);
    resourceRoutes(app, deps);
    app.get('/management/kubeconfig', async (req, reply) => {
      const ctx = await caller(deps, req);
      const at = deps.endpoint?.() ?? { server: `${deps.baseUrl()}${KUBE_PREFIX}` };
      const text = renderManagementKubeconfig({
        server: at.server,
        ...(at.caPem ? { caPem: at.caPem } : {}),
        namespace: ctx.projectId ?? '',
        userName: ctx.userName,
      });
      return reply.type('application/yaml').send(text);
    });
  };
}
