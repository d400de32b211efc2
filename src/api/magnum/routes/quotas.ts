import type { FastifyInstance } from 'fastify';
import {
  ConflictError,
  InputError,
  MAGNUM_API_VERSION,
  MagnumTypes,
  NotAllowedError,
  NotFoundError,
  type QuotaObject,
} from '../../../domain/index.ts';
import { quotaStoreName } from '../cluster-create.ts';
import { requireRole, stateOf, type Env } from '../context.ts';
import { requireVersion } from '../microversion.ts';
import { compareValues, param, parseListQuery, nextLink, type Query } from '../pagination.ts';
import { QuotaCreateSchema, QuotaPatchSchema, parseBody } from '../schemas.ts';
import { magnumTime } from '../wire.ts';
import { stamped } from '../writes.ts';
import { ANNOTATION_MAGNUM_UPDATED_AT } from '../../../domain/index.ts';

/**
 * `/v1/quotas` (≥1.6): Magnum's only quota resource is `Cluster` (clusters per project). Reads of
 * one's own project need the reader role; listing and every write need admin. A project without
 * a row gets the default limit from the operator policy.
 */

const RESOURCES = ['Cluster'];
const QUOTA_SORT_KEYS = ['project_id', 'resource', 'hard_limit', 'created_at', 'updated_at'];

function quotaWire(q: QuotaObject): Record<string, unknown> {
  return {
    id: q.spec.id,
    project_id: q.spec.projectId,
    resource: q.spec.resource,
    hard_limit: q.spec.hardLimit,
    created_at: magnumTime(q.metadata.creationTimestamp),
    updated_at: magnumTime(q.metadata.annotations[ANNOTATION_MAGNUM_UPDATED_AT]),
  };
}

function checkResource(resource: string): void {
  if (!RESOURCES.includes(resource)) {
    throw new InputError(
      `Invalid input for field/attribute resource: value should be one of ${RESOURCES.join(', ')} (got '${resource}').`,
      {
        code: 'Invalid',
      },
    );
  }
}

function quotaNotFound(projectId: string, resource: string): NotFoundError {
  return new NotFoundError(
    `Quota could not be found: no quota for project ${projectId} and resource ${resource}.`,
    { code: 'QuotaNotFound' },
  );
}

export function quotaRoutes(app: FastifyInstance, env: Env): void {
  const { store } = env;
  const load = (projectId: string, resource: string) =>
    store.get<QuotaObject>(MagnumTypes.Quota, projectId, quotaStoreName(projectId, resource));

  app.get('/quotas', async (req) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 6, 'GET /v1/quotas');
    requireRole(caller, 'admin', 'quota:get_all');
    const query = req.query as Query;
    const q = parseListQuery(query, QUOTA_SORT_KEYS, { markerIsInt: true });
    const allTenants = /^(true|1|yes|on|t|y)$/i.test(param(query, 'all_tenants') ?? '');
    const r = await store.list<QuotaObject>(
      MagnumTypes.Quota,
      allTenants ? {} : { namespace: caller.projectId },
    );
    const dir = q.sortDir === 'desc' ? -1 : 1;
    const rows = r.items.map(quotaWire);
    rows.sort(
      (a, b) =>
        (q.sortKey === 'id'
          ? (a.id as number) - (b.id as number)
          : compareValues(a[q.sortKey], b[q.sortKey]) || (a.id as number) - (b.id as number)) * dir,
    );
    let start = 0;
    if (q.marker !== undefined) {
      start = rows.findIndex((x) => String(x.id) === q.marker) + 1;
      if (start === 0)
        throw new NotFoundError(`Quota ${q.marker} could not be found (marker).`, { code: 'QuotaNotFound' });
    }
    const page = rows.slice(start, start + q.limit);
    const next = nextLink(
      env.deps.baseUrl(),
      'quotas',
      q,
      page.length,
      page.at(-1) ? String(page.at(-1)!.id) : undefined,
      allTenants ? { all_tenants: 'True' } : {},
    );
    return { quotas: page, ...(next ? { next } : {}) };
  });

  app.get<{ Params: { project: string; resource: string } }>('/quotas/:project/:resource', async (req) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 6, 'GET /v1/quotas/{project}/{resource}');
    requireRole(caller, 'reader', 'quota:get');
    const { project, resource } = req.params;
    if (!caller.isAdmin && project !== caller.projectId) {
      throw new NotAllowedError(
        `Policy doesn't allow quota:get to be performed: only an administrator may read the quota of another project.`,
        {
          code: 'PolicyNotAuthorized',
        },
      );
    }
    const row = await load(project, resource);
    if (row) return quotaWire(row);
    checkResource(resource);
    return {
      project_id: project,
      resource,
      hard_limit: env.deps.policy.defaultClusterQuota,
      created_at: null,
      updated_at: null,
    };
  });

  app.post('/quotas', async (req, reply) => {
    const { caller, version } = stateOf(req);
    requireVersion(version, 6, 'POST /v1/quotas');
    requireRole(caller, 'admin', 'quota:create');
    const body = parseBody(QuotaCreateSchema, req.body, 'quota');
    checkResource(body.resource);
    const project = await env.deps.identity.getProject(body.project_id);
    if (!project)
      throw new NotFoundError(`Project ${body.project_id} could not be found.`, { code: 'ProjectNotFound' });
    const all = await store.list<QuotaObject>(MagnumTypes.Quota);
    const id = all.items.reduce((m, x) => Math.max(m, x.spec.id), 0) + 1;
    try {
      const created = await store.create<QuotaObject>({
        apiVersion: MAGNUM_API_VERSION,
        kind: 'Quota',
        metadata: { name: quotaStoreName(body.project_id, body.resource), namespace: body.project_id },
        spec: { id, projectId: body.project_id, resource: body.resource, hardLimit: body.hard_limit ?? 1 },
        status: {},
      });
      return reply.code(201).send(quotaWire(created));
    } catch (err) {
      if (err instanceof ConflictError && err.code === 'AlreadyExists') {
        throw new ConflictError(
          `Quota for project ${body.project_id} already exists for resource ${body.resource}: use "openstack coe quotas update" to change it.`,
          { code: 'QuotaAlreadyExists' },
        );
      }
      throw err;
    }
  });

  app.patch<{ Params: { project: string; resource: string } }>(
    '/quotas/:project/:resource',
    async (req, reply) => {
      const { caller, version } = stateOf(req);
      requireVersion(version, 6, 'PATCH /v1/quotas/{project}/{resource}');
      requireRole(caller, 'admin', 'quota:update');
      const body = parseBody(QuotaPatchSchema, req.body, 'quota');
      const { project, resource } = req.params;
      const row = await load(project, resource);
      if (!row) throw quotaNotFound(project, resource);
      const now = new Date(env.deps.clock.now()).toISOString();
      const saved = await store.update<QuotaObject>(
        stamped({ ...row, spec: { ...row.spec, hardLimit: body.hard_limit } }, now),
      );
      return reply.code(202).send(quotaWire(saved));
    },
  );

  app.delete<{ Params: { project: string; resource: string } }>(
    '/quotas/:project/:resource',
    async (req, reply) => {
      const { caller, version } = stateOf(req);
      requireVersion(version, 6, 'DELETE /v1/quotas/{project}/{resource}');
      requireRole(caller, 'admin', 'quota:delete');
      const { project, resource } = req.params;
      const row = await load(project, resource);
      if (!row) throw quotaNotFound(project, resource);
      await store.delete(MagnumTypes.Quota, row.metadata.namespace, row.metadata.name);
      return reply.code(204).send();
    },
  );
}
