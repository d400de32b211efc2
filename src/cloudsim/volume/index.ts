import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CloudContext } from '../core/context.ts';
import { cloudErrorHandler, cloudNotFoundHandler } from '../core/errors.ts';
import { authHook, baseUrl, ServiceRoutes } from '../core/http.ts';
import { microversionHook, type MicroversionRange } from '../core/microversion.ts';
import { registerVolumeRoutes } from './routes.ts';
import { quotaError, type VolumeService } from './service.ts';

export { VolumeService, DEFAULT_VOLUME_TYPE } from './service.ts';

/** Cinder's microversions served: 3.0 to 3.70 (Zed). */
export const CINDER_VERSIONS: MicroversionRange = { service: 'volume', major: 3, minMinor: 0, maxMinor: 70 };

function versions(req: FastifyRequest) {
  return {
    versions: [
      {
        id: 'v3.0',
        status: 'CURRENT',
        version: `3.${CINDER_VERSIONS.maxMinor}`,
        min_version: '3.0',
        updated: '2022-08-31T00:00:00Z',
        links: [
          { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
          { rel: 'self', href: `${baseUrl(req)}/cloud/volume/v3/` },
        ],
        'media-types': [
          { base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' },
        ],
      },
    ],
  };
}

/** Cinder (block-storage v3), mounted at `/cloud/volume`. */
export function volumePlugin(ctx: CloudContext, svc: VolumeService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(cloudErrorHandler('cinder', ctx.log));
    app.setNotFoundHandler(cloudNotFoundHandler('cinder'));
    app.get('/', async (req, reply) => reply.code(300).send(versions(req)));
    app.get('/v3', async (req) => versions(req));
    await app.register(async (priv) => {
      priv.addHook('onRequest', microversionHook(CINDER_VERSIONS));
      priv.addHook('onRequest', authHook(ctx));
      const r = new ServiceRoutes(priv, ctx, 'volume', () =>
        quotaError(
          'VolumeLimitExceeded',
          `Maximum number of volumes allowed (0) exceeded for quota 'volumes'.`,
        ),
      );
      registerVolumeRoutes(r, ctx, svc);
    });
  };
}
