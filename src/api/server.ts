import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Config } from '../domain/index.ts';
import { InputError } from '../domain/index.ts';
import { errorHandler, notFoundHandler } from './errors.ts';

/** One mounted HTTP module (identity, Magnum v1, kube API, dashboard, embedded cloud, …). */
export interface MountedPlugin {
  /** Human name, for logs. */
  name: string;
  /** URL prefix, e.g. `/identity`; '' for the root. */
  prefix: string;
  plugin: FastifyPluginAsync;
}

/** Options of {@link buildServer}. */
export interface ServerOptions {
  config: Pick<Config, 'bodyLimitBytes' | 'logLevel'>;
  plugins: MountedPlugin[];
  /** Pino logger options or false. @default level from config */
  logger?: boolean | { level: string };
}

/**
 * Build the single HTTP server. Every module is a plugin in its own encapsulation scope, so
 * each sets its own error shape; unmatched paths answer in Magnum's shape (the root is Magnum's).
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: options.config.bodyLimitBytes,
    logger:
      options.logger ?? (options.config.logLevel === 'silent' ? false : { level: options.config.logLevel }),
    genReqId: () => `req-${randomUUID()}`,
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    forceCloseConnections: true,
  });

  // JSON with a clear error for malformed bodies; an empty body is allowed (DELETE with a JSON content type).
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.-]+\+)?json/, { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(
        new InputError(`The request body is not valid JSON: ${(err as Error).message}.`, {
          code: 'MalformedJson',
        }),
        undefined,
      );
    }
  });
  // Clients send DELETE and some PATCH requests with `application/octet-stream` and no body.
  app.addContentTypeParser(['application/octet-stream', '*'], { parseAs: 'buffer' }, (_req, body, done) => {
    done(null, body.length === 0 ? undefined : body);
  });
  app.addHook('onSend', async (req, reply) => {
    void reply.header('x-openstack-request-id', req.id);
  });

  // A browser asking the root for a page goes to the dashboard; API clients still get Magnum's versions.
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'GET' && req.url === '/' && (req.headers.accept ?? '').includes('text/html')) {
      return reply.redirect('/dashboard/', 302);
    }
  });

  app.setErrorHandler(errorHandler('magnum'));
  app.setNotFoundHandler(notFoundHandler('magnum'));
  for (const p of options.plugins) {
    await app.register(p.plugin, { prefix: p.prefix });
  }
  return app;
}
