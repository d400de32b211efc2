import { z } from 'zod';
import { UnavailableError } from '../domain/index.ts';
import { INTERFACES, PROJECT_ID_TEMPLATE, type ServiceRegistration } from './catalog.ts';

/** How {@link publishToKeystone} talks to Keystone: one authenticated call (service token). */
export type KeystoneCall = (
  method: string,
  path: string,
  body?: unknown,
  options?: { idempotent?: boolean },
) => Promise<Response>;

/** What one registration changed in the external catalog. */
export interface PublishedService {
  type: string;
  serviceId: string;
  /** `created` / `updated` / `unchanged` per interface. */
  endpoints: Record<(typeof INTERFACES)[number], 'created' | 'updated' | 'unchanged'>;
  url: string;
}

const ServiceList = z.object({
  services: z.array(z.object({ id: z.string(), type: z.string(), name: z.string().optional() })),
});
const EndpointList = z.object({
  endpoints: z.array(
    z.object({
      id: z.string(),
      interface: z.string(),
      url: z.string(),
      region_id: z.string().nullable().optional(),
      region: z.string().nullable().optional(),
      enabled: z.boolean().optional(),
    }),
  ),
});
const Created = z.object({ service: z.object({ id: z.string() }) });

/** Keystone's SQL catalog writes the project id placeholder as `%(project_id)s`. */
function keystoneUrl(reg: ServiceRegistration): string {
  return reg.urlForProject(PROJECT_ID_TEMPLATE).split(PROJECT_ID_TEMPLATE).join('%(project_id)s');
}

async function expectOk(res: Response, what: string): Promise<unknown> {
  if (res.status >= 200 && res.status < 300) return res.status === 204 ? undefined : res.json();
  const text = (await res.text()).slice(0, 300);
  throw new UnavailableError(
    `Registering Magnetar in the external Keystone's catalog failed: ${what} answered HTTP ${res.status}${
      text ? ` (${text})` : ''
    }. The service user needs the admin role to write the catalog.`,
    { code: 'CatalogRegistrationFailed' },
  );
}

/**
 * Register services in an external Keystone's catalog, idempotently: the service of that type
 * (created when missing, preferring one with the same name) gets one endpoint per interface in
 * `region`, created when missing and updated when its URL differs. Endpoints of other regions
 * are left alone. Safe to run at every start, by several processes.
 */
export async function publishToKeystone(
  call: KeystoneCall,
  registrations: readonly ServiceRegistration[],
  region: string,
): Promise<PublishedService[]> {
  const out: PublishedService[] = [];
  // Keystone bootstrap makes the first region; a catalog without this one gets it (409: someone else did).
  const regionRes = await call('GET', `/regions/${encodeURIComponent(region)}`);
  if (regionRes.status === 404) {
    await regionRes.body?.cancel();
    const made = await call('POST', '/regions', { region: { id: region } }, { idempotent: true });
    if (made.status !== 409) await expectOk(made, `creating region ${region}`);
    else await made.body?.cancel();
  } else await expectOk(regionRes, `reading region ${region}`);

  for (const reg of registrations) {
    const url = keystoneUrl(reg);
    const listed = ServiceList.parse(
      await expectOk(await call('GET', `/services?type=${encodeURIComponent(reg.type)}`), 'listing services'),
    ).services.filter((s) => s.type === reg.type);
    let serviceId = (listed.find((s) => s.name === reg.name) ?? listed[0])?.id;
    if (!serviceId) {
      const made = Created.parse(
        await expectOk(
          await call('POST', '/services', {
            service: { type: reg.type, name: reg.name, description: reg.description ?? '', enabled: true },
          }),
          `creating service ${reg.type}`,
        ),
      );
      serviceId = made.service.id;
    }
    const endpoints = EndpointList.parse(
      await expectOk(
        await call('GET', `/endpoints?service_id=${encodeURIComponent(serviceId)}`),
        'listing endpoints',
      ),
    ).endpoints.filter((e) => (e.region_id ?? e.region) === region);
    const result = {} as PublishedService['endpoints'];
    for (const itf of INTERFACES) {
      const mine = endpoints.filter((e) => e.interface === itf);
      const current = mine[0];
      if (!current) {
        await expectOk(
          await call('POST', '/endpoints', {
            endpoint: { service_id: serviceId, interface: itf, url, region_id: region, enabled: true },
          }),
          `creating the ${itf} endpoint of ${reg.type}`,
        );
        result[itf] = 'created';
      } else if (current.url !== url || current.enabled === false) {
        await expectOk(
          await call(
            'PATCH',
            `/endpoints/${encodeURIComponent(current.id)}`,
            { endpoint: { url, enabled: true } },
            { idempotent: true },
          ),
          `updating the ${itf} endpoint of ${reg.type}`,
        );
        result[itf] = 'updated';
      } else result[itf] = 'unchanged';
      // Duplicates of the same interface and region would make clients pick one at random.
      for (const extra of mine.slice(1)) {
        const del = await call('DELETE', `/endpoints/${encodeURIComponent(extra.id)}`);
        if (del.status !== 404) await expectOk(del, `removing a duplicate ${itf} endpoint of ${reg.type}`);
        else await del.body?.cancel();
      }
    }
    out.push({ type: reg.type, serviceId, endpoints: result, url });
  }
  return out;
}
