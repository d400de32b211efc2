import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { silentLogger, type Clock, type IdentityProvider, type Logger } from '../domain/index.ts';
import type { ObjectStore } from '../store/index.ts';
import { computePlugin } from './compute/index.ts';
import { adminRoutes } from './core/admin-routes.ts';
import type { CloudContext } from './core/context.ts';
import { CallCounts } from './core/calls.ts';
import { FaultInjector } from './core/faults.ts';
import { buildInventory, type Inventory } from './core/inventory.ts';
import { DEFAULT_QUOTAS, Quotas } from './core/quotas.ts';
import type { QuotaSet } from './core/records.ts';
import { createRepos, reindexRepos } from './core/repos.ts';
import { seedRegion } from './core/seed.ts';
import { TransitionScheduler } from './core/transitions.ts';
import { imagePlugin } from './image/index.ts';
import { loadBalancerPlugin } from './loadbalancer/index.ts';
import { NetworkService, networkPlugin } from './network/index.ts';
import { objectStorePlugin } from './objectstore/index.ts';
import { volumePlugin } from './volume/index.ts';
import { VolumeService } from './volume/service.ts';

export {
  FaultInjector,
  SERVICE_NAMES,
  type FaultRule,
  type FaultRuleInput,
  type FaultFailure,
  type ServiceName,
} from './core/faults.ts';
export type { Inventory, InventoryItem } from './core/inventory.ts';
export { CLOUD_API_VERSION, CLOUD_KINDS, cloudType, type CloudKind } from './core/kinds.ts';
export { DEFAULT_QUOTAS } from './core/quotas.ts';
export { SEED_FLAVORS, SEED_IMAGES, SEED_PUBLIC } from './core/seed.ts';

/** The URL prefix the plugin must be mounted at. */
export const CLOUD_PREFIX = '/cloud';

/** Dependencies and options of {@link embeddedCloud}. */
export interface EmbeddedCloudDeps {
  store: ObjectStore;
  identity: IdentityProvider;
  clock: Clock;
  /** Duration of each simulated asynchronous step (server build, LB provisioning, volume creation, deletes), ms. */
  latencyMs: number;
  /** @default the logger of the server the cloud is registered in (component `embedded-cloud`) */
  log?: Logger;
  /** Availability zones of compute and volume. @default ['AZ-1', 'AZ-2', 'AZ-3'] */
  availabilityZones?: string[];
  /** Per-project quota defaults, merged over {@link DEFAULT_QUOTAS}. */
  quotaDefaults?: { [A in keyof QuotaSet]?: Record<string, number> };
}

/** A service endpoint to register in the identity catalog; `path` may hold `{project_id}`. */
export interface CloudService {
  type: string;
  name: string;
  path: string;
}

/** A running embedded cloud. */
export interface EmbeddedCloud {
  /** Mount at {@link CLOUD_PREFIX} (`/cloud`). */
  plugin: FastifyPluginAsync;
  /** What to register in the identity catalog. */
  services: CloudService[];
  /** Fault injection for tests and chaos runs. */
  faults: FaultInjector;
  /** Every resource per project (all projects when absent). */
  inventory(projectId?: string): Promise<Inventory>;
  /** Seed the region (idempotent): flavors, images, the external network `public`. */
  seed(options: { adminProjectId: string }): Promise<void>;
  /** Re-arm stored pending transitions (done by the plugin at start; idempotent). */
  resume(): Promise<number>;
  /** Cancel timers and wait for transitions under way. */
  close(): Promise<void>;
}

/** The services' catalog entries, devstack style. */
export const CLOUD_SERVICES: readonly CloudService[] = [
  { type: 'compute', name: 'nova', path: '/cloud/compute/v2.1' },
  { type: 'network', name: 'neutron', path: '/cloud/network' },
  { type: 'load-balancer', name: 'octavia', path: '/cloud/load-balancer' },
  { type: 'volumev3', name: 'cinderv3', path: '/cloud/volume/v3/{project_id}' },
  { type: 'block-storage', name: 'cinder', path: '/cloud/volume/v3/{project_id}' },
  { type: 'image', name: 'glance', path: '/cloud/image' },
  { type: 'object-store', name: 'swift', path: '/cloud/object-store/v1/AUTH_{project_id}' },
];

/**
 * Magnetar's embedded OpenStack-compatible cloud: Nova, Neutron, Octavia, Cinder, Glance and a
 * small Swift over HTTP, in the real services' wire format, with state in Magnetar's store.
 */
export function embeddedCloud(deps: EmbeddedCloudDeps): EmbeddedCloud {
  const log = deps.log ?? silentLogger;
  const repos = createRepos(deps.store);
  const defaults: QuotaSet = {
    compute: { ...DEFAULT_QUOTAS.compute, ...(deps.quotaDefaults?.compute ?? {}) },
    network: { ...DEFAULT_QUOTAS.network, ...(deps.quotaDefaults?.network ?? {}) },
    volume: { ...DEFAULT_QUOTAS.volume, ...(deps.quotaDefaults?.volume ?? {}) },
    loadbalancer: { ...DEFAULT_QUOTAS.loadbalancer, ...(deps.quotaDefaults?.loadbalancer ?? {}) },
  };
  const ctx: CloudContext = {
    store: deps.store,
    identity: deps.identity,
    clock: deps.clock,
    latencyMs: deps.latencyMs,
    log,
    faults: new FaultInjector(),
    calls: new CallCounts(),
    transitions: new TransitionScheduler(deps.clock, log),
    repos,
    quotas: new Quotas(repos, defaults),
    availabilityZones: deps.availabilityZones ?? ['AZ-1', 'AZ-2', 'AZ-3'],
    region: 'RegionOne',
  };
  const net = new NetworkService(ctx);
  const vol = new VolumeService(ctx);
  const compute = computePlugin(ctx, net, vol);
  const network = networkPlugin(ctx, net);
  const volume = volumePlugin(ctx, vol);
  const image = imagePlugin(ctx);
  const loadBalancer = loadBalancerPlugin(ctx, net);
  const objectStore = objectStorePlugin(ctx);

  let resumed: Promise<number> | undefined;
  // Rows stored by an older version get their index labels before any route reads through them.
  const resume = () =>
    (resumed ??= reindexRepos(repos).then((relabelled) => {
      if (relabelled > 0) ctx.log.info({ relabelled }, 'embedded cloud: rows given their index labels');
      return ctx.transitions.resume();
    }));

  const plugin: FastifyPluginAsync = async (app: FastifyInstance) => {
    // Built before the server, the cloud logs through the server's logger unless given its own.
    if (!deps.log) {
      ctx.log = app.log.child({ component: 'embedded-cloud' });
      ctx.transitions.log = ctx.log;
    }
    await app.register(compute, { prefix: '/compute' });
    await app.register(network, { prefix: '/network' });
    await app.register(loadBalancer, { prefix: '/load-balancer' });
    await app.register(volume, { prefix: '/volume' });
    await app.register(image, { prefix: '/image' });
    await app.register(objectStore, { prefix: '/object-store' });
    await app.register(adminRoutes(ctx));
    await resume();
  };

  return {
    plugin,
    services: CLOUD_SERVICES.map((s) => ({ ...s })),
    faults: ctx.faults,
    inventory: (projectId) => buildInventory(deps.store, projectId),
    seed: async ({ adminProjectId }) => {
      await seedRegion(ctx, adminProjectId);
      await resume();
    },
    resume,
    close: () => ctx.transitions.close(),
  };
}
