import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotAllowedError } from '../../domain/index.ts';
import type { CloudContext } from '../core/context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, baseUrl, ServiceRoutes } from '../core/http.ts';
import { microversionHook, type MicroversionRange } from '../core/microversion.ts';
import type { NetworkService } from '../network/index.ts';
import type { VolumeService } from '../volume/service.ts';
import { registerFlavorRoutes } from './flavors.ts';
import { registerKeypairRoutes } from './keypairs.ts';
import { registerComputeMiscRoutes } from './misc.ts';
import { ServerCreator } from './server-create.ts';
import { ServerLifecycle } from './server-lifecycle.ts';
import { registerServerPartRoutes } from './server-parts.ts';
import { registerServerRoutes } from './servers.ts';

/** Nova's microversions served: 2.1 to 2.79. */
export const NOVA_VERSIONS: MicroversionRange = {
  service: 'compute',
  legacyHeader: 'X-OpenStack-Nova-API-Version',
  major: 2,
  minMinor: 1,
  maxMinor: 79,
};

function versionDoc(req: FastifyRequest) {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: `2.${NOVA_VERSIONS.maxMinor}`,
    min_version: '2.1',
    updated: '2013-07-23T11:33:21Z',
    links: [
      { rel: 'self', href: `${baseUrl(req)}/cloud/compute/v2.1/` },
      { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
  };
}

/** Nova (compute v2.1), mounted at `/cloud/compute`. */
export function computePlugin(ctx: CloudContext, net: NetworkService, vol: VolumeService) {
  const life = new ServerLifecycle(ctx, net, vol);
  const creator = new ServerCreator(ctx, net, vol, life);
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('nova', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('nova'));
    app.get('/', async (req) => {
      const { id, status, version, min_version, updated } = versionDoc(req);
      return {
        versions: [
          {
            id,
            status,
            version,
            min_version,
            updated,
            links: [{ rel: 'self', href: `${baseUrl(req)}/cloud/compute/v2.1/` }],
          },
        ],
      };
    });
    app.get('/v2.1', async (req) => ({ version: versionDoc(req) }));

    await app.register(
      async (priv) => {
        priv.addHook('onRequest', microversionHook(NOVA_VERSIONS));
        priv.addHook('onRequest', authHook(ctx));
        const r = new ServiceRoutes(priv, ctx, 'compute', (resource, operation) => {
          if (operation.startsWith('compute.keypairs'))
            return new NotAllowedError('Quota exceeded, too many key pairs.', { code: 'QuotaExceeded' });
          const what = resource ?? 'instances';
          return new NotAllowedError(
            `Quota exceeded for ${what}: Requested 1, but already used 0 of 0 ${what}`,
            { code: 'QuotaExceeded' },
          );
        });
        registerFlavorRoutes(r, ctx);
        registerKeypairRoutes(r, ctx);
        registerServerRoutes(r, ctx, creator, life);
        registerServerPartRoutes(r, ctx, net, vol);
        registerComputeMiscRoutes(r, ctx);
      },
      { prefix: '/v2.1' },
    );
  };
}
