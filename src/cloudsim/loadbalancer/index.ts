import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudContext } from '../core/context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, baseUrl, ServiceRoutes } from '../core/http.ts';
import type { NetworkService } from '../network/index.ts';
import { LbEngine, octaviaErrors } from './engine.ts';
import { registerChildRoutes } from './routes-children.ts';
import { registerLbRoutes } from './routes-lb.ts';

const QUOTA_NAMES: Record<string, string> = {
  loadbalancers: 'Load Balancer',
  listeners: 'Listener',
  pools: 'Pool',
  members: 'Member',
  healthmonitors: 'Health Monitor',
};

function versions(req: FastifyRequest) {
  const href = `${baseUrl(req)}/cloud/load-balancer/v2`;
  const minors = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
  ];
  return {
    versions: [
      { id: 'v2.0', status: 'SUPPORTED', updated: '2016-12-11T00:00:00Z', links: [{ href, rel: 'self' }] },
      ...minors.slice(1).map((m, i) => ({
        id: `v2.${m}`,
        status: i === minors.length - 2 ? 'CURRENT' : 'SUPPORTED',
        updated: '2022-09-01T00:00:00Z',
        links: [{ href, rel: 'self' }],
      })),
    ],
  };
}

/** Octavia (load-balancer v2), mounted at `/cloud/load-balancer`; resources under `/v2/lbaas` and `/v2.0/lbaas`. */
export function loadBalancerPlugin(ctx: CloudContext, net: NetworkService) {
  const engine = new LbEngine(ctx, net);
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('octavia', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('octavia'));
    app.get('/', async (req) => versions(req));
    for (const prefix of ['/v2', '/v2.0']) {
      await app.register(
        async (priv) => {
          priv.addHook('onRequest', authHook(ctx));
          const r = new ServiceRoutes(priv, ctx, 'load-balancer', (resource, operation) =>
            octaviaErrors.quota(resource ?? QUOTA_NAMES[operation.split('.')[1] ?? ''] ?? 'Load Balancer'),
          );
          registerLbRoutes(r, ctx, engine, net);
          registerChildRoutes(r, ctx, engine);
        },
        { prefix },
      );
    }
  };
}
