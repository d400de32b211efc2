import type { FastifyInstance } from 'fastify';
import { InputError, MagnumTypes, NotAllowedError, type MServiceObject } from '../../../domain/index.ts';
import { requireRole, stateOf, type Env } from '../context.ts';
import { requireVersion } from '../microversion.ts';
import { param, type Query } from '../pagination.ts';
import { magnumTime } from '../wire.ts';

/** `GET /v1/mservices` (admin) and `GET /v1/stats` (≥1.4). */

/** Magnum's `service_down_time`: a service is up when its last heartbeat is at most this old. */
export const SERVICE_DOWN_SECONDS = 180;

export function serviceRoutes(app: FastifyInstance, env: Env): void {
  app.get('/mservices', async (req) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'admin', 'magnum-service:get_all');
    const r = await env.store.list<MServiceObject>(MagnumTypes.MService);
    const now = env.deps.clock.now();
    const mservices = r.items
      .map((s) => {
        const last = Date.parse(s.status.lastSeen ?? '');
        const up = Number.isFinite(last) && now - last <= SERVICE_DOWN_SECONDS * 1000;
        return {
          id: s.spec.id,
          host: s.spec.host,
          binary: s.spec.binary,
          state: up ? 'up' : 'down',
          disabled: s.spec.disabled,
          disabled_reason: s.spec.disabledReason,
          report_count: s.status.reportCount ?? 0,
          created_at: magnumTime(s.metadata.creationTimestamp),
          updated_at: magnumTime(s.status.lastSeen),
        };
      })
      .sort((a, b) => a.id - b.id);
    return { mservices };
  });

  app.get('/stats', async (req) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 4, 'GET /v1/stats');
    requireRole(caller, 'reader', 'stats:get_all');
    const query = req.query as Query;
    const type = param(query, 'type') ?? 'cluster';
    if (type !== 'cluster') {
      throw new InputError(`Invalid stats type ${type}. Valid values are: cluster.`, {
        code: 'InvalidParameterValue',
      });
    }
    const requested = param(query, 'project_id');
    let project: string | undefined = requested === '' ? undefined : requested;
    if (!caller.isAdmin) {
      if (project !== undefined && project !== caller.projectId) {
        throw new NotAllowedError(
          `Policy doesn't allow stats:get_all to be performed: only an administrator may read the statistics of another project.`,
          {
            code: 'PolicyNotAuthorized',
          },
        );
      }
      project = caller.projectId;
    }
    const clusters = env.model.clustersOf(project);
    let nodes = 0;
    for (const c of clusters)
      for (const g of env.model.nodeGroupsOf(c.metadata.uid)) nodes += g.spec.nodeCount;
    return { clusters: clusters.length, nodes };
  });
}
