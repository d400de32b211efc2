import type { FastifyInstance } from 'fastify';
import type { RouteContext } from './context.ts';
import { collectionLinks, renderAppCred } from './render.ts';
import { parseAppCredInput, queryString } from './schemas.ts';

type Params = Record<string, string>;

/** `/v3/users/{user}/application_credentials`. */
export function appCredentialRoutes(app: FastifyInstance, rc: RouteContext): void {
  const { identity } = rc;
  const base = '/v3/users/:user/application_credentials';

  app.post(base, async (req, reply) => {
    const caller = await rc.caller(req);
    const { cred, secret } = await identity.appCredentials.create(
      caller,
      (req.params as Params).user!,
      parseAppCredInput(req.body),
    );
    return reply.code(201).send({ application_credential: renderAppCred(rc.v3(), identity, cred, secret) });
  });
  app.get(base, async (req) => {
    const caller = await rc.caller(req);
    const user = (req.params as Params).user!;
    const creds = identity.appCredentials.list(
      caller,
      user,
      queryString((req.query as Record<string, unknown>).name),
    );
    return {
      application_credentials: creds.map((c) => renderAppCred(rc.v3(), identity, c)),
      links: collectionLinks(`${rc.v3()}/users/${user}/application_credentials`),
    };
  });
  app.get(`${base}/:id`, async (req) => {
    const caller = await rc.caller(req);
    const p = req.params as Params;
    return {
      application_credential: renderAppCred(
        rc.v3(),
        identity,
        identity.appCredentials.get(caller, p.user!, p.id!),
      ),
    };
  });
  app.delete(`${base}/:id`, async (req, reply) => {
    const caller = await rc.caller(req);
    const p = req.params as Params;
    await identity.appCredentials.remove(caller, p.user!, p.id!);
    return reply.code(204).send();
  });
}
