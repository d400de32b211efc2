import type { FastifyInstance } from 'fastify';
import { notFound, type CatalogEndpoint, type CatalogService } from '../../identity/index.ts';
import type { RouteContext } from './context.ts';
import { collectionLinks } from './render.ts';
import { queryString } from './schemas.ts';

type Params = Record<string, string>;
type Query = Record<string, unknown>;

/** Services, endpoints and regions, derived from the catalog (read-only). */
export function catalogRoutes(app: FastifyInstance, rc: RouteContext): void {
  const { identity } = rc;

  const service = (s: CatalogService) => ({
    id: s.id,
    type: s.type,
    name: s.name,
    description: s.description,
    enabled: true,
    links: { self: `${rc.v3()}/services/${s.id}` },
  });
  const endpoint = (e: CatalogEndpoint) => ({
    id: e.id,
    interface: e.interface,
    region: e.region,
    region_id: e.region,
    service_id: e.serviceId,
    url: e.url,
    enabled: true,
    links: { self: `${rc.v3()}/endpoints/${e.id}` },
  });
  const region = () => ({
    id: identity.region,
    description: '',
    parent_region_id: null,
    links: { self: `${rc.v3()}/regions/${identity.region}` },
  });

  app.get('/v3/services', async (req) => {
    await rc.caller(req);
    const q = req.query as Query;
    const type = queryString(q.type);
    const name = queryString(q.name);
    const services = identity.catalog
      .all()
      .filter((s) => (type === undefined || s.type === type) && (name === undefined || s.name === name));
    return { services: services.map(service), links: collectionLinks(`${rc.v3()}/services`) };
  });
  app.get('/v3/services/:id', async (req) => {
    await rc.caller(req);
    const id = (req.params as Params).id!;
    const s = identity.catalog.all().find((x) => x.id === id);
    if (!s) throw notFound('service', id);
    return { service: service(s) };
  });

  app.get('/v3/endpoints', async (req) => {
    await rc.caller(req);
    const q = req.query as Query;
    const iface = queryString(q.interface);
    const serviceId = queryString(q.service_id);
    const regionId = queryString(q.region_id) ?? queryString(q.region);
    const endpoints = identity.catalog
      .all()
      .flatMap((s) => s.endpoints)
      .filter(
        (e) =>
          (iface === undefined || e.interface === iface) &&
          (serviceId === undefined || e.serviceId === serviceId) &&
          (regionId === undefined || e.region === regionId),
      );
    return { endpoints: endpoints.map(endpoint), links: collectionLinks(`${rc.v3()}/endpoints`) };
  });
  app.get('/v3/endpoints/:id', async (req) => {
    await rc.caller(req);
    const id = (req.params as Params).id!;
    const e = identity.catalog
      .all()
      .flatMap((s) => s.endpoints)
      .find((x) => x.id === id);
    if (!e) throw notFound('endpoint', id);
    return { endpoint: endpoint(e) };
  });

  app.get('/v3/regions', async (req) => {
    await rc.caller(req);
    return { regions: [region()], links: collectionLinks(`${rc.v3()}/regions`) };
  });
  app.get('/v3/regions/:id', async (req) => {
    await rc.caller(req);
    const id = (req.params as Params).id!;
    if (id !== identity.region) throw notFound('region', id);
    return { region: region() };
  });
}
