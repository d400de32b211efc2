import type { FastifyPluginAsync } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OperatorPolicy } from '../domain/index.ts';

/**
 * The web dashboard: a small single-page front end (no framework, no build step) that talks to
 * the same public APIs as every other client (identity v3, Magnum v1, the cloud's compute API).
 * This plugin only serves static files; it has no API of its own, so it is no back door.
 */

/** Options of {@link dashboardRoutes}. */
export interface DashboardOptions {
  /** The operator rules the create form checks before the server does. */
  policy: OperatorPolicy;
}

const ASSETS = join(import.meta.dirname, 'assets');

const TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'kubeconfig.js': 'text/javascript; charset=utf-8',
  'watch.js': 'text/javascript; charset=utf-8',
  'backups.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The dashboard, mounted at `/dashboard`: `index.html` for `/`, plus its scripts and `app.css`. */
export function dashboardRoutes(options: DashboardOptions): FastifyPluginAsync {
  return async (app) => {
    // The rules are public: the page reads them from an inline JSON island (no extra request).
    const policyJson = JSON.stringify(options.policy).replace(/</g, '\\u003c');
    const html = readFileSync(join(ASSETS, 'index.html'), 'utf8').replace('{{POLICY}}', policyJson);
    const files = new Map(Object.keys(TYPES).map((f) => [f, readFileSync(join(ASSETS, f))]));
    const security = {
      'content-security-policy':
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    };
    app.get('/', async (_req, reply) =>
      reply
        .headers({ ...security, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
        .send(html),
    );
    app.get<{ Params: { file: string } }>('/:file', async (req, reply) => {
      const body = files.get(req.params.file);
      const type = TYPES[req.params.file];
      if (!body || !type) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      return reply
        .headers({ ...security, 'content-type': type, 'cache-control': 'public, max-age=300' })
        .send(body);
    });
  };
}
