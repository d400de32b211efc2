import type { FastifyInstance } from 'fastify';
import type { CloudContext } from '../core/context.ts';
import { CloudHttpError, cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, ServiceRoutes } from '../core/http.ts';
import { MAX_OBJECT_BYTES, registerObjectRoutes } from './routes.ts';

/** Swift (object-store v1), mounted at `/cloud/object-store`; accounts are `AUTH_<project id>`. */
export function objectStorePlugin(ctx: CloudContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('swift', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('swift'));
    // Object bodies are bytes whatever their content type.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.get('/info', async () => ({
      swift: {
        version: '2.30.0',
        max_file_size: MAX_OBJECT_BYTES,
        max_object_name_length: 1024,
        container_listing_limit: 10000,
        account_listing_limit: 10000,
        max_meta_count: 90,
        strict_cors_mode: true,
        policies: [{ name: 'Policy-0', default: true }],
      },
    }));
    await app.register(async (priv) => {
      priv.addHook('onRequest', authHook(ctx));
      const r = new ServiceRoutes(
        priv,
        ctx,
        'object-store',
        () => new CloudHttpError(413, 'Upload exceeds quota.'),
      );
      registerObjectRoutes(r, ctx);
    });
  };
}
