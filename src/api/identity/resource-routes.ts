import type { FastifyInstance } from 'fastify';
import type { RouteContext } from './context.ts';
import { collectionLinks, renderDomain, renderProject, renderUser } from './render.ts';
import { parsePasswordChange, parseProjectInput, parseUserInput, queryBool, queryString } from './schemas.ts';

type Params = Record<string, string>;
type Query = Record<string, unknown>;

/** Domains (read-only), projects and users. */
export function resourceRoutes(app: FastifyInstance, rc: RouteContext): void {
  const { identity } = rc;

  // --- domains ---
  app.get('/v3/domains', async (req) => {
    await rc.caller(req);
    const q = req.query as Query;
    const name = queryString(q.name);
    const enabled = queryBool(q.enabled);
    const domains = identity.directory.listDomains({
      ...(name !== undefined ? { name } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
    });
    return {
      domains: domains.map((d) => renderDomain(rc.v3(), d)),
      links: collectionLinks(`${rc.v3()}/domains`),
    };
  });
  app.get('/v3/domains/:id', async (req) => {
    await rc.caller(req);
    return { domain: renderDomain(rc.v3(), identity.directory.getDomain((req.params as Params).id!)) };
  });

  // --- projects ---
  app.get('/v3/projects', async (req) => {
    const caller = await rc.caller(req);
    const q = req.query as Query;
    const name = queryString(q.name);
    const domainId = queryString(q.domain_id);
    const enabled = queryBool(q.enabled);
    const projects = identity.projects.list(caller, {
      ...(name !== undefined ? { name } : {}),
      ...(domainId !== undefined ? { domainId } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
    });
    return {
      projects: projects.map((p) => renderProject(rc.v3(), p)),
      links: collectionLinks(`${rc.v3()}/projects`),
    };
  });
  app.post('/v3/projects', async (req, reply) => {
    const caller = await rc.caller(req);
    const project = await identity.projects.create(caller, parseProjectInput(req.body, true));
    return reply.code(201).send({ project: renderProject(rc.v3(), project) });
  });
  app.get('/v3/projects/:id', async (req) => {
    const caller = await rc.caller(req);
    return { project: renderProject(rc.v3(), identity.projects.get(caller, (req.params as Params).id!)) };
  });
  app.patch('/v3/projects/:id', async (req) => {
    const caller = await rc.caller(req);
    const project = await identity.projects.update(
      caller,
      (req.params as Params).id!,
      parseProjectInput(req.body, false),
    );
    return { project: renderProject(rc.v3(), project) };
  });
  app.delete('/v3/projects/:id', async (req, reply) => {
    const caller = await rc.caller(req);
    await identity.projects.remove(caller, (req.params as Params).id!);
    return reply.code(204).send();
  });

  // --- users ---
  app.get('/v3/users', async (req) => {
    const caller = await rc.caller(req);
    const q = req.query as Query;
    const name = queryString(q.name);
    const domainId = queryString(q.domain_id);
    const enabled = queryBool(q.enabled);
    const users = identity.users.list(caller, {
      ...(name !== undefined ? { name } : {}),
      ...(domainId !== undefined ? { domainId } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
    });
    return { users: users.map((u) => renderUser(rc.v3(), u)), links: collectionLinks(`${rc.v3()}/users`) };
  });
  app.post('/v3/users', async (req, reply) => {
    const caller = await rc.caller(req);
    const user = await identity.users.create(caller, parseUserInput(req.body, true));
    return reply.code(201).send({ user: renderUser(rc.v3(), user) });
  });
  app.get('/v3/users/:id', async (req) => {
    const caller = await rc.caller(req);
    return { user: renderUser(rc.v3(), identity.users.get(caller, (req.params as Params).id!)) };
  });
  app.patch('/v3/users/:id', async (req) => {
    const caller = await rc.caller(req);
    const user = await identity.users.update(
      caller,
      (req.params as Params).id!,
      parseUserInput(req.body, false),
    );
    return { user: renderUser(rc.v3(), user) };
  });
  app.delete('/v3/users/:id', async (req, reply) => {
    const caller = await rc.caller(req);
    await identity.users.remove(caller, (req.params as Params).id!);
    return reply.code(204).send();
  });
  app.post('/v3/users/:id/password', async (req, reply) => {
    const caller = await rc.caller(req);
    const { password, original } = parsePasswordChange(req.body);
    await identity.users.changePassword(caller, (req.params as Params).id!, original, password);
    return reply.code(204).send();
  });
  app.get('/v3/users/:id/projects', async (req) => {
    const caller = await rc.caller(req);
    const id = (req.params as Params).id!;
    const projects = identity.users.projectsOf(caller, id).map((p) => renderProject(rc.v3(), p));
    return { projects, links: collectionLinks(`${rc.v3()}/users/${id}/projects`) };
  });
}
