import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../context.ts';
import { MAX_VERSION, MIN_VERSION, formatVersion } from '../microversion.ts';

/** Magnum's public version documents: `GET /` (for API clients) and `GET /v1`. */

/** Collections listed by `GET /v1`. */
const COLLECTIONS = [
  'clustertemplates',
  'clusters',
  'quotas',
  'certificates',
  'mservices',
  'stats',
  'backups',
];

export function rootDocument(base: string) {
  return {
    name: 'OpenStack Magnum API',
    description:
      'Container Infrastructure Management API: Kubernetes clusters as a service, served by Magnetar.',
    versions: [
      {
        id: 'v1',
        links: [{ href: `${base}/v1/`, rel: 'self' }],
        status: 'CURRENT',
        max_version: formatVersion(MAX_VERSION),
        min_version: formatVersion(MIN_VERSION),
      },
    ],
  };
}

export function v1Document(base: string) {
  const doc: Record<string, unknown> = {
    id: 'v1',
    media_types: [{ base: 'application/json', type: 'application/vnd.openstack.magnum.v1+json' }],
    links: [
      { href: `${base}/v1/`, rel: 'self' },
      { href: 'https://docs.openstack.org/magnum/latest/user/', rel: 'describedby', type: 'text/html' },
    ],
  };
  for (const c of COLLECTIONS) {
    doc[c] = [
      { href: `${base}/v1/${c}/`, rel: 'self' },
      { href: `${base}/${c}/`, rel: 'bookmark' },
    ];
  }
  return doc;
}

/** True when the client is a browser asking for HTML (ARCHITECTURE §5: sent to the dashboard). */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html') && !accept.includes('application/json');
}

/** `GET /` on the outer (unprefixed) scope. */
export function rootRoute(app: FastifyInstance, env: Env): void {
  app.get('/', async (req: FastifyRequest, reply: FastifyReply) => {
    if (wantsHtml(req)) return reply.redirect('/dashboard/', 302);
    return rootDocument(env.deps.baseUrl());
  });
}
