import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AuthenticationError, isMagnetarError } from '../../domain/index.ts';
import {
  asMagnetarError,
  errorHandler,
  keystoneErrorBody,
  magnumErrorBody,
  notFoundHandler,
} from '../errors.ts';
import { TokenCache, authenticate, setState, type Env, type MagnumApiDeps } from './context.ts';
import {
  MAX_VERSION,
  MIN_VERSION,
  SERVICE_NAME,
  VERSION_HEADER,
  formatVersion,
  resolveMicroversion,
  versionHeaders,
} from './microversion.ts';
import { MagnumReadModel } from './read-model.ts';
import { TypedStore } from './typed-store.ts';
import { backupRoutes } from './backup-routes.ts';
import { certificateRoutes } from './routes/certificates.ts';
import { clusterActionRoutes } from './routes/cluster-actions.ts';
import { clusterRoutes } from './routes/clusters.ts';
import { nodeGroupRoutes } from './routes/nodegroups.ts';
import { quotaRoutes } from './routes/quotas.ts';
import { serviceRoutes } from './routes/service-routes.ts';
import { templateRoutes } from './routes/templates.ts';
import { rootRoute, v1Document } from './routes/versions.ts';

const magnumErrors = errorHandler('magnum');

/**
 * The title the client prints: the first sentence of the message. Magnum cuts at the first `.`,
 * which would cut names and versions like `v1.32.5`; a sentence here ends at a `.` followed by a
 * space or the end.
 */
export function sentenceTitle(message: string): string {
  const m = /^(.*?)\.(\s|$)/s.exec(message);
  return (m ? m[1]! : message).trim();
}

/**
 * Errors in Magnum's `{"errors":[…]}` shape, except a missing or bad token, which is answered as
 * keystonemiddleware does in front of Magnum (`{"error":{…}}`, 401), so clients re-authenticate.
 */
function handleError(base: () => string) {
  return (err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (isMagnetarError(err) && err instanceof AuthenticationError) {
      void reply
        .code(401)
        .header('WWW-Authenticate', `Keystone uri="${base()}/identity/v3"`)
        .header('Content-Type', 'application/json; charset=utf-8');
      return reply.send(
        keystoneErrorBody(401, 'Unauthorized', 'The request you have made requires authentication.'),
      );
    }
    const known = asMagnetarError(err);
    if (!known) return magnumErrors(err, req, reply);
    const details = known.details ?? {};
    void reply.code(known.status);
    return reply.send(
      magnumErrorBody(known.status, known.message, { title: sentenceTitle(known.message), ...details }),
    );
  };
}

/**
 * The Magnum v1 API façade: `GET /` (Magnum's version document) and everything under `/v1`,
 * mounted with prefix ''. Every `/v1` request except `GET /v1` needs an `X-Auth-Token`; every
 * routed `/v1` response carries the microversion headers.
 */
export function magnumRoutes(deps: MagnumApiDeps): FastifyPluginAsync {
  return async (app) => {
    const model = new MagnumReadModel(deps.store);
    await model.start();
    app.addHook('onClose', async () => model.stop());
    const env: Env = { deps, store: new TypedStore(deps.store), model };
    const tokens = new TokenCache(deps.clock);
    app.setErrorHandler(handleError(deps.baseUrl));
    rootRoute(app, env);

    await app.register(
      async (v1) => {
        v1.setNotFoundHandler(notFoundHandler('magnum'));
        v1.addHook('onRequest', async (req, reply) => {
          const url = req.routeOptions.url;
          const isPublic = req.method === 'GET' && (url === '/v1/' || url === '/v1');
          const caller = isPublic ? undefined : await authenticate(req, deps.identity, tokens);
          let version;
          try {
            version = resolveMicroversion(req.headers[VERSION_HEADER]);
          } catch (err) {
            void reply.headers({
              'OpenStack-API-Minimum-Version': `${SERVICE_NAME} ${formatVersion(MIN_VERSION)}`,
              'OpenStack-API-Maximum-Version': `${SERVICE_NAME} ${formatVersion(MAX_VERSION)}`,
              Vary: 'OpenStack-API-Version',
            });
            throw err;
          }
          void reply.headers(versionHeaders(version));
          setState(req, caller ? { version, caller } : { version });
          await model.ensureFresh();
        });
        v1.get('/', async () => v1Document(deps.baseUrl()));
        templateRoutes(v1, env);
        clusterRoutes(v1, env);
        clusterActionRoutes(v1, env);
        nodeGroupRoutes(v1, env);
        certificateRoutes(v1, env);
        quotaRoutes(v1, env);
        serviceRoutes(v1, env);
        backupRoutes(v1, env);
      },
      { prefix: '/v1' },
    );
  };
}
