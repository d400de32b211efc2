import type { FastifyInstance } from 'fastify';
import type { CloudContext } from '../core/context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, baseUrl, ServiceRoutes } from '../core/http.ts';
import { neutronErrors as E } from './errors.ts';
import { registerFloatingIpRoutes } from './routes-floating-ips.ts';
import { registerMiscRoutes } from './routes-misc.ts';
import { registerNetworkRoutes } from './routes-networks.ts';
import { registerPortRoutes } from './routes-ports.ts';
import { registerRouterRoutes } from './routes-routers.ts';
import { registerSecurityGroupRoutes } from './routes-security-groups.ts';
import type { NetworkService } from './service.ts';

export { NetworkService, derivedUuid, type PortRequest } from './service.ts';
export { portLabels, securityGroupLabels } from '../core/repos.ts';
export { neutronErrors } from './errors.ts';
export { narrowing, neutronFilter, neutronList, prefilter, projectFields } from './listing.ts';

const COLLECTIONS = [
  'networks',
  'subnets',
  'ports',
  'routers',
  'floatingips',
  'security-groups',
  'security-group-rules',
  'quotas',
  'extensions',
];

/** The Neutron quota resource an operation such as `network.floatingips.create` consumes. */
function quotaResourceOf(operation: string): string {
  const collection = operation.split('.')[1] ?? 'ports';
  const map: Record<string, string> = {
    floatingips: 'floatingip',
    security_groups: 'security_group',
    security_group_rules: 'security_group_rule',
  };
  return map[collection] ?? collection.replace(/s$/, '');
}

/** Neutron (networking v2.0), mounted at `/cloud/network`. */
export function networkPlugin(ctx: CloudContext, svc: NetworkService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('neutron', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('neutron'));

    const versionDoc = (req: Parameters<typeof baseUrl>[0]) => ({
      id: 'v2.0',
      status: 'CURRENT',
      links: [{ rel: 'self', href: `${baseUrl(req)}/cloud/network/v2.0/` }],
    });
    app.get('/', async (req) => ({ versions: [versionDoc(req)] }));

    await app.register(async (priv) => {
      priv.addHook('onRequest', authHook(ctx));
      const r = new ServiceRoutes(priv, ctx, 'network', (resource, operation) =>
        E.overQuota([resource ?? quotaResourceOf(operation)]),
      );
      r.get('/v2.0', 'resources.list', async (req) => ({
        resources: COLLECTIONS.map((c) => ({
          name: c.replace(/s$/, '').replace(/-/g, '_'),
          collection: c,
          links: [{ rel: 'self', href: `${baseUrl(req)}/cloud/network/v2.0/${c}` }],
        })),
      }));
      registerNetworkRoutes(r, ctx, svc);
      registerPortRoutes(r, ctx, svc);
      registerRouterRoutes(r, ctx, svc);
      registerSecurityGroupRoutes(r, ctx, svc);
      registerFloatingIpRoutes(r, ctx, svc);
      registerMiscRoutes(r, ctx, svc);
    });
  };
}
