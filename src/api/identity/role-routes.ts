import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InputError } from '../../domain/index.ts';
import type { AssignmentQuery, AssignmentScope, RoleInference } from '../../identity/index.ts';
import type { RouteContext } from './context.ts';
import { collectionLinks, renderAssignment, renderRole, renderRoleRef } from './render.ts';
import { queryFlag, queryString } from './schemas.ts';

type Params = Record<string, string>;
type Query = Record<string, unknown>;

/** Roles, implied roles, grants and `GET /v3/role_assignments`. */
export function roleRoutes(app: FastifyInstance, rc: RouteContext): void {
  const { identity } = rc;

  app.get('/v3/roles', async (req) => {
    await rc.caller(req);
    const name = queryString((req.query as Query).name);
    const roles = identity.directory.listRoles(name !== undefined ? { name } : {});
    return { roles: roles.map((r) => renderRole(rc.v3(), r)), links: collectionLinks(`${rc.v3()}/roles`) };
  });
  app.get('/v3/roles/:id', async (req) => {
    await rc.caller(req);
    return { role: renderRole(rc.v3(), identity.directory.getRole((req.params as Params).id!)) };
  });

  const inference = (i: RoleInference) => ({
    prior_role: renderRoleRef(rc.v3(), i.prior),
    implies: i.implies.map((r) => renderRoleRef(rc.v3(), r)),
  });
  // Keystone serves the full list at /v3/role_inferences (osc `implied role list`); /v3/implied_roles is an alias.
  for (const path of ['/v3/role_inferences', '/v3/implied_roles']) {
    app.get(path, async (req) => {
      await rc.caller(req);
      return {
        role_inferences: identity.directory.inferences().map(inference),
        links: collectionLinks(`${rc.v3()}${path.slice(3)}`),
      };
    });
  }
  app.get('/v3/roles/:id/implies', async (req) => {
    await rc.caller(req);
    return { role_inference: inference(identity.directory.inference((req.params as Params).id!)) };
  });

  // --- grants on projects, domains and the system ---
  const grants: { path: string; scope: (p: Params) => AssignmentScope }[] = [
    { path: '/v3/projects/:target/users/:user/roles', scope: (p) => ({ type: 'project', id: p.target! }) },
    { path: '/v3/domains/:target/users/:user/roles', scope: (p) => ({ type: 'domain', id: p.target! }) },
    { path: '/v3/system/users/:user/roles', scope: () => ({ type: 'system' }) },
  ];
  for (const g of grants) {
    const args = (req: FastifyRequest) => {
      const p = req.params as Params;
      return { scope: g.scope(p), user: p.user!, role: p.role! };
    };
    app.get(g.path, async (req) => {
      const caller = await rc.caller(req);
      const { scope, user } = args(req);
      const roles = identity.assignments.rolesOn(caller, scope, user);
      return {
        roles: roles.map((r) => renderRole(rc.v3(), r)),
        links: collectionLinks(`${identity.baseUrl}${req.url.split('?')[0]!}`),
      };
    });
    app.put(`${g.path}/:role`, async (req, reply) => {
      const caller = await rc.caller(req);
      const { scope, user, role } = args(req);
      await identity.assignments.grant(caller, scope, user, role);
      return reply.code(204).send();
    });
    app.get(`${g.path}/:role`, async (req, reply) => {
      const caller = await rc.caller(req);
      const { scope, user, role } = args(req);
      identity.assignments.check(caller, scope, user, role);
      return reply.code(204).send();
    });
    app.delete(`${g.path}/:role`, async (req, reply) => {
      const caller = await rc.caller(req);
      const { scope, user, role } = args(req);
      await identity.assignments.revoke(caller, scope, user, role);
      return reply.code(204).send();
    });
  }

  app.get('/v3/role_assignments', async (req) => {
    const caller = await rc.caller(req);
    const q = req.query as Query;
    const self = `${rc.v3()}/role_assignments`;
    // No groups and no inheritance here: such filters match nothing.
    if (
      queryString(q['group.id']) !== undefined ||
      queryString(q['scope.OS-INHERIT:inherited_to']) !== undefined
    ) {
      return { role_assignments: [], links: collectionLinks(self) };
    }
    const project = queryString(q['scope.project.id']);
    const domain = queryString(q['scope.domain.id']);
    const system = queryString(q['scope.system']);
    if ([project, domain, system].filter((x) => x !== undefined).length > 1) {
      throw new InputError('Specify at most one of scope.project.id, scope.domain.id and scope.system.', {
        code: 'Invalid',
      });
    }
    const query: AssignmentQuery = { effective: queryFlag(q.effective) };
    const user = queryString(q['user.id']);
    const role = queryString(q['role.id']);
    if (user !== undefined) query.userId = user;
    if (role !== undefined) query.roleId = role;
    if (project !== undefined) query.scope = { type: 'project', id: project };
    else if (domain !== undefined) query.scope = { type: 'domain', id: domain };
    else if (system !== undefined) query.scope = { type: 'system' };
    const names = queryFlag(q.include_names);
    const entries = identity.assignments.query(caller, query);
    return {
      role_assignments: entries.map((e) => renderAssignment(rc.v3(), identity, e, names)),
      links: collectionLinks(self),
    };
  });
}
