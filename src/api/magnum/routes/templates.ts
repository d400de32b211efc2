import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  InputError,
  MAGNUM_API_VERSION,
  MagnumTypes,
  NotAllowedError,
  templateName,
  type ClusterTemplateObject,
  type ClusterTemplateSpec,
} from '../../../domain/index.ts';
import { requireRole, stateOf, type Caller, type Env } from '../context.ts';
import { COMMON_INTERNAL, applyMagnumPatch, changedAttributes, parsePatch } from '../json-patch.ts';
import { findTemplate, templateVisible } from '../lookup.ts';
import { generateName } from '../names.ts';
import { nextLink, pageOf, parseListQuery, type Query } from '../pagination.ts';
import { checkResources } from '../resource-checks.ts';
import { TemplateCreateSchema, parseBody } from '../schemas.ts';
import { templateSpecFromBody } from '../template-spec.ts';
import { templateToWire } from '../wire.ts';
import { stamped } from '../writes.ts';

/** `/v1/clustertemplates`: list, show, create (201 + Location), JSON-Patch update, delete. */

const TEMPLATE_SORT_KEYS = [
  'uuid',
  'name',
  'coe',
  'image_id',
  'flavor_id',
  'master_flavor_id',
  'keypair_id',
  'external_network_id',
  'network_driver',
  'docker_volume_size',
  'server_type',
  'cluster_distro',
  'public',
  'hidden',
  'tls_disabled',
  'registry_enabled',
  'apiserver_port',
  'created_at',
  'updated_at',
  'project_id',
  'user_id',
  'tags',
];

/** Attributes that stay editable while clusters use the template. */
const EDITABLE_WHEN_REFERENCED = new Set(['name', 'public', 'hidden', 'tags']);
const READ_ONLY = ['uuid', 'links', 'created_at', 'updated_at', 'project_id', 'user_id'];

function publishDenied(): NotAllowedError {
  return new NotAllowedError(
    'Not authorized to set public or hidden flag for cluster template: only an administrator may publish or hide templates.',
    {
      code: 'ClusterTemplatePublishDenied',
    },
  );
}

/** Templates the caller may change: their project's (admins: any). */
function requireOwnership(t: ClusterTemplateObject, caller: Caller, rule: string): void {
  requireRole(caller, 'member', rule);
  if (!caller.isAdmin && t.metadata.namespace !== caller.projectId) {
    throw new NotAllowedError(
      `Policy doesn't allow ${rule} to be performed. Cluster template ${templateName(t)} belongs to another project; only its project or an administrator may change it.`,
      { code: 'PolicyNotAuthorized' },
    );
  }
}

export function templateRoutes(app: FastifyInstance, env: Env): void {
  const list = (detail: boolean) => async (req: { query: unknown }, caller: Caller) => {
    requireRole(caller, 'reader', detail ? 'clustertemplate:detail' : 'clustertemplate:get_all');
    const q = parseListQuery(req.query as Query, TEMPLATE_SORT_KEYS);
    const base = env.deps.baseUrl();
    const visible = [...env.model.templates.values()]
      // the read model keeps templates in creation order (Magnum's default `id` order)
      .filter((t) => templateVisible(t, caller))
      .map((t) => ({ id: t.metadata.uid, wire: templateToWire(t, base), item: t }));
    const page = pageOf(visible, q);
    if (!page)
      throw new InputError(`ClusterTemplate ${q.marker} could not be found (marker).`, {
        code: 'ClusterTemplateNotFound',
      });
    const next = nextLink(
      base,
      detail ? 'clustertemplates/detail' : 'clustertemplates',
      q,
      page.length,
      page.at(-1)?.id,
    );
    return { clustertemplates: page.map((p) => p.wire), ...(next ? { next } : {}) };
  };

  app.get('/clustertemplates', async (req) => list(false)(req, stateOf(req).caller));
  app.get('/clustertemplates/detail', async (req) => list(true)(req, stateOf(req).caller));

  app.get<{ Params: { ident: string } }>('/clustertemplates/:ident', async (req) => {
    const { caller } = stateOf(req);
    const t = findTemplate(env, caller, req.params.ident);
    // Magnum checks `clustertemplate:get` only for templates that are not public.
    if (!t.spec.public) requireRole(caller, 'reader', 'clustertemplate:get');
    return templateToWire(t, env.deps.baseUrl());
  });

  app.post('/clustertemplates', async (req, reply) => {
    const { caller } = stateOf(req);
    requireRole(caller, 'member', 'clustertemplate:create');
    const body = parseBody(TemplateCreateSchema, req.body, 'cluster template');
    if ((body.public === true || body.hidden === true) && !caller.isAdmin) throw publishDenied();
    const spec = templateSpecFromBody(
      body,
      caller.userId,
      env.deps.policy,
      body.name ?? generateName('template'),
    );
    const facts = await checkResources(env.deps.cloud, caller, {
      image: spec.imageId,
      flavor: spec.flavorId,
      masterFlavor: spec.masterFlavorId,
      keypair: spec.keypairId,
      externalNetwork: spec.externalNetworkId,
      fixedNetwork: spec.fixedNetwork,
      fixedSubnet: spec.fixedSubnet,
    });
    if (facts.osDistro) spec.clusterDistro = facts.osDistro;
    if (!spec.driver && facts.driver) spec.driver = facts.driver;
    const uid = randomUUID();
    const created = await env.store.create<ClusterTemplateObject>({
      apiVersion: MAGNUM_API_VERSION,
      kind: 'ClusterTemplate',
      metadata: { name: uid, namespace: caller.projectId, uid },
      spec,
      status: {},
    });
    const base = env.deps.baseUrl();
    void reply.code(201).header('Location', `${base}/v1/clustertemplates/${uid}`);
    return templateToWire(created, base);
  });

  app.patch<{ Params: { ident: string } }>('/clustertemplates/:ident', async (req) => {
    const { caller } = stateOf(req);
    const ops = parsePatch(req.body, 'cluster template');
    const t = findTemplate(env, caller, req.params.ident);
    requireOwnership(t, caller, 'clustertemplate:update');
    const base = env.deps.baseUrl();
    const before = templateToWire(t, base);
    const after = applyMagnumPatch(before, ops, {
      internal: COMMON_INTERNAL,
      nonRemovable: [
        '/image_id',
        '/coe',
        '/network_driver',
        '/external_network_id',
        '/tls_disabled',
        '/public',
        '/server_type',
        '/registry_enabled',
        '/cluster_distro',
        '/hidden',
      ],
      literalPaths: ['/labels'],
      what: 'cluster template',
    });
    const changed = changedAttributes(before, after);
    if (changed.length === 0) return before;
    const doc: Record<string, unknown> = { ...after };
    for (const k of READ_ONLY) delete doc[k];
    const body = parseBody(TemplateCreateSchema, doc, 'cluster template');
    if ((changed.includes('public') || changed.includes('hidden')) && !caller.isAdmin) throw publishDenied();
    const inUse = env.model.clustersUsingTemplate(t.metadata.uid);
    if (inUse > 0) {
      const blocked = changed.filter((k) => !EDITABLE_WHEN_REFERENCED.has(k));
      if (blocked.length > 0) {
        throw new InputError(
          `ClusterTemplate ${t.metadata.uid} is referenced by one or multiple clusters. While ${inUse} cluster(s) use it only name, public, hidden and tags may change (refused: ${blocked.join(', ')}); create a new template and upgrade the clusters instead.`,
          { code: 'ClusterTemplateReferenced' },
        );
      }
    }
    const spec: ClusterTemplateSpec = templateSpecFromBody(
      body,
      t.spec.userId,
      env.deps.policy,
      body.name ?? templateName(t),
    );
    // cluster_distro comes from the image; it follows an image change unless set explicitly
    if (!changed.includes('cluster_distro'))
      spec.clusterDistro = changed.includes('image_id') ? spec.clusterDistro : t.spec.clusterDistro;
    const touched = (k: string) => changed.includes(k);
    const facts = await checkResources(env.deps.cloud, caller, {
      ...(touched('image_id') ? { image: spec.imageId } : {}),
      ...(touched('flavor_id') ? { flavor: spec.flavorId } : {}),
      ...(touched('master_flavor_id') ? { masterFlavor: spec.masterFlavorId } : {}),
      ...(touched('keypair_id') ? { keypair: spec.keypairId } : {}),
      ...(touched('external_network_id') ? { externalNetwork: spec.externalNetworkId } : {}),
      ...(touched('fixed_network') ? { fixedNetwork: spec.fixedNetwork } : {}),
      ...(touched('fixed_subnet') ? { fixedSubnet: spec.fixedSubnet } : {}),
    });
    if (touched('image_id') && !touched('cluster_distro') && facts.osDistro)
      spec.clusterDistro = facts.osDistro;
    const now = new Date(env.deps.clock.now()).toISOString();
    const saved = await env.store.update<ClusterTemplateObject>(stamped({ ...t, spec }, now));
    return templateToWire(saved, base);
  });

  app.delete<{ Params: { ident: string } }>('/clustertemplates/:ident', async (req, reply) => {
    const { caller } = stateOf(req);
    const t = findTemplate(env, caller, req.params.ident);
    requireOwnership(t, caller, 'clustertemplate:delete');
    if (env.model.clustersUsingTemplate(t.metadata.uid) > 0) {
      throw new InputError(`ClusterTemplate ${t.metadata.uid} is referenced by one or multiple clusters.`, {
        code: 'ClusterTemplateReferenced',
      });
    }
    await env.store.delete(MagnumTypes.ClusterTemplate, t.metadata.namespace, t.metadata.name);
    return reply.code(204).send();
  });
}
