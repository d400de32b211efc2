import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudContext } from '../core/context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, baseUrl, ServiceRoutes } from '../core/http.ts';
import { CloudHttpError } from '../core/errors.ts';
import { registerImageRoutes } from './routes.ts';

export { canSeeImage, findImage } from './service.ts';

function versions(req: FastifyRequest) {
  const href = `${baseUrl(req)}/cloud/image/v2/`;
  return {
    versions: ['2.16', '2.15', '2.9', '2.7', '2.6', '2.5', '2.4', '2.3', '2.2', '2.1', '2.0'].map((v, i) => ({
      id: `v${v}`,
      status: i === 0 ? 'CURRENT' : 'SUPPORTED',
      links: [{ rel: 'self', href }],
    })),
  };
}

/** Glance (image v2), mounted at `/cloud/image`. */
export function imagePlugin(ctx: CloudContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('glance', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('glance'));
    app.get('/', async (req, reply) => reply.code(300).send(versions(req)));
    app.get('/versions', async (req) => versions(req));
    app.get('/v2', async (req, reply) => reply.code(300).send(versions(req)));
    await app.register(async (priv) => {
      priv.addHook('onRequest', authHook(ctx));
      const r = new ServiceRoutes(
        priv,
        ctx,
        'image',
        () =>
          new CloudHttpError(
            413,
            'The request returned a 413 Request Entity Too Large. This generally means that rate limiting or a quota threshold was breached.',
          ),
      );
      registerImageRoutes(r, ctx);
    });
  };
}
