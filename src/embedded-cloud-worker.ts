import 'reflect-metadata';
import { resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { buildServer } from './api/index.ts';
import { CLOUD_PREFIX, embeddedCloud } from './cloudsim/index.ts';
import {
  currentThreadId,
  majorGcCounter,
  systemClock,
  type AuthContext,
  type IdentityProvider,
} from './domain/index.ts';
import type { CloudWorkerData } from './embedded-cloud-thread.ts';
import { LocalIdentity } from './identity/index.ts';
import { openStore } from './main.ts';
import { SqliteStore, startFeedCompaction, type ObjectStore } from './store/index.ts';

/**
 * The embedded cloud's thread (see embedded-cloud-thread.ts): its services on a loopback
 * listener of their own, their records in their own store, tokens checked against Magnetar's
 * identity records through a read-only connection of this thread.
 */
const data = workerData as CloudWorkerData;
const port = parentPort!;

/** Magnetar's store, read here only for identity: no checkpointing thread of its own. */
async function openIdentityStore(): Promise<ObjectStore> {
  const { config } = data;
  if (config.store.engine === 'sqlite') {
    return new SqliteStore({
      path: resolve(config.dataDir, config.store.url ?? 'magnetar.sqlite'),
      backgroundCheckpoints: false,
    });
  }
  return openStore(config);
}

/**
 * The cloud's records. Its own SQLite file keeps no revision feed: the cloud's services read
 * records and never watch them, so a write stores its record once (feed entries an earlier
 * version left are dropped). On PostgreSQL the cloud shares Magnetar's database and its feed.
 */
async function openCloudStore(): Promise<{ store: ObjectStore; feed: boolean }> {
  const { config, cloudStore } = data;
  if (cloudStore.engine !== 'sqlite') {
    return { store: await openStore({ ...config, store: cloudStore }), feed: true };
  }
  const store = new SqliteStore({ path: resolve(config.dataDir, cloudStore.url!), feed: false });
  await store.compact((await store.currentRevision()) + 1);
  return { store, feed: false };
}

async function run(): Promise<void> {
  const { config } = data;
  const identityStore = await openIdentityStore();
  const { store: cloudStore, feed } = await openCloudStore();
  const local = await LocalIdentity.open({
    store: identityStore,
    clock: systemClock,
    baseUrl: () => '',
    region: config.region,
  });
  // This thread sees Magnetar's identity writes up to a second late: a token it cannot place
  // (a project or role assignment made a moment ago) is checked again once it has caught up.
  const identity: IdentityProvider = {
    async validate(token: string): Promise<AuthContext> {
      try {
        return await local.validate(token);
      } catch {
        await local.refresh();
        return local.validate(token);
      }
    },
    getProject: (id) => local.getProject(id),
    listProjects: () => local.listProjects(),
  };
  const cloud = embeddedCloud({
    store: cloudStore,
    identity,
    clock: systemClock,
    latencyMs: config.cloud.simulatedLatencyMs,
  });
  const app = await buildServer({
    config,
    plugins: [{ name: 'embedded cloud', prefix: CLOUD_PREFIX, plugin: cloud.plugin }],
  });
  await app.listen({ host: data.host, port: 0 });
  if (data.adminProjectId) await cloud.seed({ adminProjectId: data.adminProjectId });
  else await cloud.resume();
  const stopCompaction = feed
    ? startFeedCompaction({
        store: cloudStore,
        clock: systemClock,
        log: app.log.child({ component: 'embedded-cloud' }),
      })
    : async () => {};
  const address = app.server.address();
  port.postMessage({
    ready: typeof address === 'object' && address ? address.port : 0,
    tid: currentThreadId(),
    gcs: majorGcCounter(),
  });
  port.on('message', (m) => {
    if (m !== 'close') return;
    void (async () => {
      await stopCompaction();
      await app.close();
      await cloud.close();
      await local.close();
      await cloudStore.close();
      await identityStore.close();
      port.close();
    })();
  });
}

run().catch((err: unknown) => {
  port.postMessage({ failed: err instanceof Error ? (err.stack ?? err.message) : String(err) });
});
