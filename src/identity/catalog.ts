import { createHash } from 'node:crypto';

/** A service another module adds to the catalog. */
export interface ServiceRegistration {
  /** Catalog type, e.g. `container-infra`, `compute`, `identity`. */
  type: string;
  /** Service name, e.g. `magnum`, `nova`. */
  name: string;
  /**
   * The endpoint URL for a project. Called with the literal template {@link PROJECT_ID_TEMPLATE}
   * to list endpoints independently of a project; an endpoint whose URL does not depend on the
   * project simply ignores the argument.
   */
  urlForProject: (projectId: string) => string;
  /**
   * The endpoint URL of the `internal` interface, where the service listens for other services
   * (Keystone's internal endpoints). @default the public URL
   */
  internalUrlForProject?: (projectId: string) => string;
  /** @default '' */
  description?: string;
}

/** What Keystone writes in an endpoint URL where the project id goes. */
export const PROJECT_ID_TEMPLATE = '$(project_id)s';

/** The three interfaces every service is published on. */
export const INTERFACES = ['public', 'internal', 'admin'] as const;
export type EndpointInterface = (typeof INTERFACES)[number];

/** One endpoint of a service. */
export interface CatalogEndpoint {
  id: string;
  serviceId: string;
  interface: EndpointInterface;
  region: string;
  url: string;
}

/** One service with its endpoints. */
export interface CatalogService {
  id: string;
  type: string;
  name: string;
  description: string;
  endpoints: CatalogEndpoint[];
}

function stableId(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/**
 * The service catalog: built from registrations at start (not stored), with ids derived from
 * type and name so that every process and every restart shows the same ids.
 */
export class ServiceCatalog {
  private readonly registrations = new Map<string, ServiceRegistration>();

  constructor(readonly region: string) {}

  /** Add a service, or replace the one with the same type and name. */
  register(reg: ServiceRegistration): void {
    this.registrations.set(`${reg.type}\u0000${reg.name}`, reg);
  }

  private build(reg: ServiceRegistration, projectId: string): CatalogService {
    const id = stableId('service', reg.type, reg.name);
    const url = reg.urlForProject(projectId);
    const internal = reg.internalUrlForProject?.(projectId) ?? url;
    return {
      id,
      type: reg.type,
      name: reg.name,
      description: reg.description ?? '',
      endpoints: INTERFACES.map((iface) => ({
        id: stableId('endpoint', id, iface, this.region),
        serviceId: id,
        interface: iface,
        region: this.region,
        url: iface === 'internal' ? internal : url,
      })),
    };
  }

  /**
   * The catalog a token shows. With a project, every URL is made for it; without one, only
   * services whose URL does not depend on a project are listed (as Keystone does).
   */
  forScope(projectId: string | undefined): CatalogService[] {
    const out: CatalogService[] = [];
    for (const reg of this.registrations.values()) {
      const template = reg.urlForProject(PROJECT_ID_TEMPLATE);
      if (projectId !== undefined) out.push(this.build(reg, projectId));
      else if (!template.includes(PROJECT_ID_TEMPLATE)) out.push(this.build(reg, PROJECT_ID_TEMPLATE));
    }
    return out;
  }

  /** Every service with endpoint URLs as templates (`/v3/services`, `/v3/endpoints`). */
  all(): CatalogService[] {
    return [...this.registrations.values()].map((reg) => this.build(reg, PROJECT_ID_TEMPLATE));
  }
}
