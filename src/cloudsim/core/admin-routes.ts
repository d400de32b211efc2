import type { FastifyInstance } from 'fastify';
import { NotAllowedError, NotFoundError } from '../../domain/index.ts';
import type { CloudContext } from './context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from './errors.ts';
import { authHook, callerOf, p, q } from './http.ts';
import { buildInventory } from './inventory.ts';

/**
 * Admin-only endpoints for tests, chaos runs and the dashboard: `GET /cloud/_inventory`,
 * `GET|POST|DELETE /cloud/_faults`, `DELETE /cloud/_faults/{id}`, `GET /cloud/_faults/operations`,
 * `GET /cloud/_calls` (calls answered by operation since the cloud started).
 */
export function adminRoutes(ctx: CloudContext) {
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('admin', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('admin'));
    app.addHook('onRequest', authHook(ctx));
    app.addHook('preHandler', async (req) => {
      if (!callerOf(req).isAdmin)
        throw new NotAllowedError('The embedded cloud admin API requires the admin role.');
    });

    app.get('/_inventory', async (req) => buildInventory(ctx.store, q(req, 'project_id')));

    app.get('/_calls', async () => ctx.calls.snapshot());

    app.get('/_faults', async () => ({ faults: ctx.faults.list() }));
    app.get('/_faults/operations', async () => ({ operations: ctx.faults.operations() }));
    app.post('/_faults', async (req, reply) => {
      const rule = ctx.faults.add(req.body as Parameters<typeof ctx.faults.add>[0]);
      return reply.code(201).send({ fault: rule });
    });
    app.delete('/_faults', async (_req, reply) => {
      ctx.faults.clear();
      return reply.code(204).send();
    });
    app.delete('/_faults/:id', async (req, reply) => {
      if (!ctx.faults.remove(p(req, 'id'))) throw new NotFoundError(`fault rule ${p(req, 'id')} not found`);
      return reply.code(204).send();
    });
  };
}
