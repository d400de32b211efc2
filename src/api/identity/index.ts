import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { LocalIdentity } from '../../identity/index.ts';
import { asMagnetarError, errorHandler, notFoundHandler } from '../errors.ts';
import { appCredentialRoutes } from './app-credential-routes.ts';
import { authRoutes } from './auth-routes.ts';
import { catalogRoutes } from './catalog-routes.ts';
import { routeContext } from './context.ts';
import { resourceRoutes } from './resource-routes.ts';
import { roleRoutes } from './role-routes.ts';

/** Options of {@link identityRoutes}. */
export interface IdentityRoutesOptions {
  /**
   * Called once the server listens, with its port, before `listen()` resolves: the moment
   * the real base URL is known (e.g. to write clouds.yaml). Errors are logged, not thrown.
   */
  onListening?: (port: number) => void;
}

/**
 * The Keystone v3-compatible HTTP API, to mount at prefix `/identity`: version discovery at
 * `/identity` and `/identity/v3`, then `/identity/v3/...`. Errors use Keystone's
 * `{"error":{"code","title","message"}}` shape.
 */
export function identityRoutes(
  identity: LocalIdentity,
  options: IdentityRoutesOptions = {},
): FastifyPluginAsync {
  return async (app) => {
    const render = errorHandler('keystone');
    app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
      if (asMagnetarError(err)?.status === 401)
        void reply.header('www-authenticate', `Keystone uri="${identity.baseUrl}/identity"`);
      return render(err, req, reply);
    });
    app.setNotFoundHandler(notFoundHandler('keystone'));

    const rc = routeContext(identity);
    authRoutes(app, rc);
    resourceRoutes(app, rc);
    roleRoutes(app, rc);
    appCredentialRoutes(app, rc);
    catalogRoutes(app, rc);

    const onListening = options.onListening;
    if (onListening) {
      app.server.once('listening', () => {
        const addr = app.server.address();
        if (!addr || typeof addr !== 'object') return;
        try {
          onListening(addr.port);
        } catch (err) {
          app.log.error({ err }, 'identity: post-listen step failed');
        }
      });
    }
  };
}
