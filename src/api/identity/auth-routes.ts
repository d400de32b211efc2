import type { FastifyInstance } from 'fastify';
import type { FastifyRequest } from 'fastify';
import { AuthenticationError, NotFoundError } from '../../domain/index.ts';
import { forbidden, type ResolvedToken } from '../../identity/index.ts';
import type { RouteContext } from './context.ts';
import { tokenFrom } from './context.ts';
import { collectionLinks, renderCatalog, renderDomain, renderProject, renderToken } from './render.ts';
import { parseAuthRequest, queryFlag } from './schemas.ts';

/** Version discovery and `/v3/auth/*`. */
export function authRoutes(app: FastifyInstance, rc: RouteContext): void {
  const { identity } = rc;

  // An invalid subject token is "not found", as Keystone answers (the caller's own token failing is 401).
  const subjectOf = async (req: FastifyRequest): Promise<ResolvedToken> => {
    const token = tokenFrom(req, 'x-subject-token');
    try {
      return await identity.resolve(token);
    } catch (err) {
      if (err instanceof AuthenticationError)
        throw new NotFoundError(`Could not find token: ${err.message}`, {
          code: 'TokenNotFound',
          cause: err,
        });
      throw err;
    }
  };

  const version = () => ({
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${rc.v3()}/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  });

  app.get('/', async (_req, reply) => reply.code(300).send({ versions: { values: [version()] } }));
  app.get('/v3', async () => ({ version: version() }));

  app.post('/v3/auth/tokens', async (req, reply) => {
    const request = parseAuthRequest(req.body);
    const token = await identity.authenticate(request);
    const query = req.query as Record<string, unknown>;
    void reply.header('x-subject-token', token.token);
    return reply.code(201).send(renderToken(identity, token, !queryFlag(query.nocatalog)));
  });

  // Validate a token. Allowed for admins and for the token's own user (osc inspects its own token).
  app.get('/v3/auth/tokens', async (req, reply) => {
    const caller = await rc.caller(req);
    const subject = await subjectOf(req);
    if (!caller.isAdmin && caller.userId !== subject.user.id) throw forbidden('identity:validate_token');
    const query = req.query as Record<string, unknown>;
    void reply.header('x-subject-token', subject.token);
    return renderToken(identity, subject, !queryFlag(query.nocatalog));
  });

  app.delete('/v3/auth/tokens', async (req, reply) => {
    const caller = await rc.caller(req);
    const subject = await subjectOf(req);
    if (!caller.isAdmin && caller.userId !== subject.user.id) throw forbidden('identity:revoke_token');
    await identity.revoke(subject);
    return reply.code(204).send();
  });

  app.get('/v3/auth/catalog', async (req) => {
    const token = await rc.callerToken(req);
    return {
      catalog: renderCatalog(identity.catalogFor(token)),
      links: collectionLinks(`${rc.v3()}/auth/catalog`),
    };
  });

  app.get('/v3/auth/projects', async (req) => {
    const token = await rc.callerToken(req);
    const projects = identity.projectsOfUser(token.user.id).map((p) => renderProject(rc.v3(), p));
    return { projects, links: collectionLinks(`${rc.v3()}/auth/projects`) };
  });

  app.get('/v3/auth/domains', async (req) => {
    const token = await rc.callerToken(req);
    const domains = identity.domainsOfUser(token.user.id).flatMap((id) => {
      const d = identity.directory.findDomain(id);
      return d ? [renderDomain(rc.v3(), d)] : [];
    });
    return { domains, links: collectionLinks(`${rc.v3()}/auth/domains`) };
  });

  app.get('/v3/auth/system', async (req) => {
    const token = await rc.callerToken(req);
    return {
      system: identity.hasSystemRole(token.user.id) ? [{ all: true }] : [],
      links: collectionLinks(`${rc.v3()}/auth/system`),
    };
  });
}
