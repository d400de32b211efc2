import { z } from 'zod';
import type { EndpointInterface } from './clouds-config.ts';

/** The Keystone v3 service catalog, and choosing an endpoint from it. */

const EndpointSchema = z.looseObject({
  interface: z.string(),
  url: z.string(),
  region: z.string().nullish(),
  region_id: z.string().nullish(),
});

export const CatalogSchema = z.array(
  z.looseObject({
    type: z.string(),
    name: z.string().nullish(),
    endpoints: z.array(EndpointSchema).default([]),
  }),
);

/** A Keystone v3 service catalog. */
export type Catalog = z.infer<typeof CatalogSchema>;

/**
 * Other names a service type is published under (the service-types authority aliases);
 * `container-infra` falls back to `container` as python-magnumclient does.
 */
export const SERVICE_TYPE_ALIASES: Record<string, string[]> = {
  'block-storage': ['volumev3', 'block-store', 'volume'],
  volumev3: ['block-storage', 'volume'],
  volume: ['block-storage', 'volumev3'],
  'container-infra': ['container'],
  'load-balancer': [],
  'object-store': [],
  compute: [],
  network: [],
  image: [],
  identity: [],
};

/** Service types tried, in order, when looking up `serviceType`. */
export function serviceTypeCandidates(serviceType: string): string[] {
  return [serviceType, ...(SERVICE_TYPE_ALIASES[serviceType] ?? [])];
}

/**
 * URL of the endpoint for a service type, or undefined. Endpoints match on interface and,
 * when a region is asked for, on `region_id` or `region`; aliases are tried after the
 * type itself.
 */
export function findEndpoint(
  catalog: Catalog,
  serviceType: string,
  options: { region?: string; interface?: EndpointInterface } = {},
): string | undefined {
  const wanted = options.interface ?? 'public';
  for (const type of serviceTypeCandidates(serviceType)) {
    for (const service of catalog) {
      if (service.type !== type) continue;
      const match = service.endpoints.find(
        (e) =>
          e.interface.toLowerCase().replace(/url$/, '') === wanted &&
          (options.region === undefined || e.region_id === options.region || e.region === options.region),
      );
      if (match) return match.url;
    }
  }
  return undefined;
}

/** The message the openstack client prints when the catalog lacks an endpoint. */
export function endpointNotFoundMessage(
  serviceType: string,
  options: { region?: string; interface?: EndpointInterface },
): string {
  const region = options.region ? ` in ${options.region} region` : '';
  return `${options.interface ?? 'public'} endpoint for ${serviceType} service${region} not found`;
}

/**
 * Fill the project id into an endpoint template: `{project_id}`, `{tenant_id}`,
 * `$(project_id)s`, `%(tenant_id)s` and the like, as catalogs and overrides write it.
 */
export function substituteProjectId(url: string, projectId: string | undefined): string {
  const pattern = /\{(project_id|tenant_id)\}|\$\((project_id|tenant_id)\)s|%\((project_id|tenant_id)\)s/g;
  if (!pattern.test(url)) return url;
  if (projectId === undefined) {
    throw new Error(`endpoint ${url} needs a project id, but the session is not scoped to a project`);
  }
  return url.replace(pattern, encodeURIComponent(projectId));
}

/** Drop trailing slashes. */
export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
