import 'reflect-metadata';
import type { FastifyInstance } from 'fastify';
import { resolve } from 'node:path';
import { buildServer, type MountedPlugin } from './api/index.ts';
import {
  defaultPolicy,
  silentLogger,
  systemClock,
  type Clock,
  type Config,
  type Logger,
} from './domain/index.ts';
import { SqliteStore, startFeedCompaction, type ObjectStore } from './store/index.ts';
import {
  BOOTSTRAP,
  KeystoneIdentity,
  keystoneServiceAuth,
  LocalIdentity,
  type MagnetarIdentity,
} from './identity/index.ts';
import { createCloudLookup, loadCloudConfig } from './cloud/index.ts';
import { identityRoutes } from './api/identity/index.ts';
import { magnumRoutes, seedPublicTemplates } from './api/magnum/index.ts';
import { KeyMakerThread, StorePki, loadOrCreateKey, type KeyMaker } from './workload/index.ts';
import { CLOUD_PREFIX, CLOUD_SERVICES, embeddedCloud } from './cloudsim/index.ts';
import { cloudProxy, moveCloudRecords, startCloudThread, type CloudThread } from './embedded-cloud-thread.ts';
import { startEmulatorThread, type EmulatorThread } from './workload-emulator-thread.ts';
import type { ControllerManager } from './controllers/index.ts';

/**
 * The only place that wires concrete engines together: store engine, identity, the
 * embedded or a real cloud, API façades, controllers.
 */

/** Options of {@link startMagnetar}. */
export interface StartOptions {
  config: Config;
  /** @default systemClock */
  clock?: Clock;
  /** Use this store instead of the configured one (tests). */
  store?: ObjectStore;
  /** Fastify logger on/off. @default per config.logLevel */
  logger?: boolean;
  /** Start the controllers (when the role allows). @default true */
  controllers?: boolean;
  /** Print first-start credentials to stdout. @default false */
  printBootstrap?: boolean;
}

/** A running Magnetar. */
export interface Magnetar {
  app: FastifyInstance;
  /** Base URL, e.g. http://127.0.0.1:9511 */
  url: string;
  store: ObjectStore;
  config: Config;
  clock: Clock;
  /** The embedded cloud's thread, when it runs on one (docs/adr/0013). */
  cloudThread?: CloudThread;
  /** The workload emulator's thread, when it has one (docs/adr/0023). */
  emulatorThread?: EmulatorThread;
  /** The controller manager, when this process runs the controllers (benchmarks, diagnostics). */
  controllers?: ControllerManager;
  /** The key-making thread, when keys are made on one (docs/adr/0014). */
  keyMakerThread?: KeyMakerThread;
  close(): Promise<void>;
}

/** Open the configured store. */
export async function openStore(config: Config): Promise<ObjectStore> {
  switch (config.store.engine) {
    case 'sqlite': {
      const url = config.store.url ?? 'magnetar.sqlite';
      return new SqliteStore({ path: url === ':memory:' ? url : resolve(config.dataDir, url) });
    }
    case 'postgres': {
      const { PostgresStore } = await import('./store/postgres/index.ts');
      if (!config.store.url)
        throw new Error('store.url: a PostgreSQL connection URL is required for engine postgres');
      return PostgresStore.connect({ url: config.store.url });
    }
  }
}

/** Start everything this process's role asks for and listen. */
export async function startMagnetar(options: StartOptions): Promise<Magnetar> {
  const config = options.config;
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config));
  let baseUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
  const getBaseUrl = () => baseUrl;
  const closers: (() => Promise<void>)[] = [];
  const plugins: MountedPlugin[] = [];

  // Each module adds its plugin(s) and closers in its own section below.
  // --- wiring: identity ---
  let identity: MagnetarIdentity;
  // Keystone the controllers authenticate at (the external one in mode keystone).
  let cloudAuthUrl = () => `${getBaseUrl()}/identity/v3`;
  if (config.cloud.mode === 'external' && config.identity.mode !== 'keystone')
    throw new Error(
      "cloud.mode external: needs identity.mode keystone (tenants' projects must be the real cloud's projects)",
    );
  if (config.identity.mode === 'keystone') {
    // An external Keystone validates tokens; Magnetar's service user is the configured cloud's user.
    const cloud = loadCloudConfig({ file: config.cloud.cloudsYaml, cloud: config.cloud.cloudName });
    const keystoneUrl = config.identity.keystoneUrl ?? cloud.auth.auth_url;
    if (!keystoneUrl)
      throw new Error(
        'identity.keystoneUrl: required for identity.mode keystone (or an auth_url in the cloud entry)',
      );
    identity = new KeystoneIdentity({
      keystoneUrl,
      service: keystoneServiceAuth(cloud.authType, cloud.auth),
      baseUrl: getBaseUrl,
      clock,
    });
    cloudAuthUrl = () => keystoneUrl;
  } else {
    const local = await LocalIdentity.open({
      store,
      clock,
      baseUrl: getBaseUrl,
      region: config.region,
      tokenTtlSeconds: config.identity.tokenTtlSeconds,
    });
    // Writes the first-start passwords to clouds.yaml at once; the real URL follows once listening.
    await local.bootstrap({ dataDir: config.dataDir });
    local.registerService({
      type: 'identity',
      name: 'keystone',
      urlForProject: () => `${getBaseUrl()}/identity/v3`,
    });
    plugins.push({
      name: 'identity',
      prefix: '/identity',
      plugin: identityRoutes(local, {
        // clouds.yaml needs the real port: write it (and print first-start passwords) once listening.
        onListening: (port) => {
          local.writeClientFiles({
            dataDir: config.dataDir,
            baseUrl: config.publicUrl ?? `http://${config.host}:${port}`,
            print: options.printBootstrap === true,
          });
        },
      }),
    });
    identity = local;
  }
  closers.push(() => identity.close());

  // --- wiring: embedded cloud ---
  // Controllers and look-ups call the cloud on this catalog interface.
  let cloudInterface: 'internal' | undefined;
  let movedCloudRecords = 0;
  let cloudThread: CloudThread | undefined;
  let emulatorThread: EmulatorThread | undefined;
  // The server's logger, once it exists (the cloud thread starts before the server is built).
  let lateLog: Logger = silentLogger;
  if (config.cloud.mode === 'embedded') {
    const cloudAdminProject = (await identity.listProjects()).find((p) => p.name === BOOTSTRAP.adminProject);
    const threaded =
      config.cloud.thread !== false &&
      !options.store &&
      (options.clock === undefined || options.clock === systemClock) &&
      identity instanceof LocalIdentity &&
      !(config.store.engine === 'sqlite' && config.store.url === ':memory:');
    // Where the services listen for other services (the catalog's internal endpoints), when apart.
    let internalBase: (() => string) | undefined;
    if (threaded) {
      // On a thread of its own (docs/adr/0013): tenants reach it under /cloud here, forwarded;
      // the controllers at its own listener, the catalog's internal endpoints.
      movedCloudRecords = await moveCloudRecords(store, config);
      const local = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      const thread = await startCloudThread({
        config,
        adminProjectId: cloudAdminProject?.id,
        host: local,
        log: () => lateLog,
      });
      cloudThread = thread;
      closers.push(() => thread.close());
      plugins.push({ name: 'embedded cloud', prefix: CLOUD_PREFIX, plugin: cloudProxy(() => thread.url) });
      internalBase = () => thread.url;
      cloudInterface = 'internal';
    } else {
      const embedded = embeddedCloud({ store, identity, clock, latencyMs: config.cloud.simulatedLatencyMs });
      plugins.push({ name: 'embedded cloud', prefix: CLOUD_PREFIX, plugin: embedded.plugin });
      if (cloudAdminProject) await embedded.seed({ adminProjectId: cloudAdminProject.id });
      closers.push(() => embedded.close());
    }
    const internal = internalBase;
    for (const s of CLOUD_SERVICES) {
      const path = (projectId: string) => s.path.replace('{project_id}', projectId);
      identity.registerService({
        type: s.type,
        name: s.name,
        urlForProject: (projectId) => `${getBaseUrl()}${path(projectId)}`,
        ...(internal ? { internalUrlForProject: (projectId) => `${internal()}${path(projectId)}` } : {}),
      });
    }
  }

  // --- wiring: key making ---
  // Clusters' CAs and certificates are made on a thread of their own, off the event loop the
  // controllers share; with an injected clock (the virtual-time suites), on this thread.
  let keys: KeyMaker | undefined;
  let keyMakerThread: KeyMakerThread | undefined;
  if (options.clock === undefined || options.clock === systemClock) {
    const thread = new KeyMakerThread(() => lateLog);
    keys = keyMakerThread = thread;
    closers.push(() => thread.close());
  }
  const pkiKeys = keys ? { keys } : {};

  // --- wiring: Magnum v1 API ---
  const magnumCloud = createCloudLookup({
    // The Keystone that issued the callers' tokens: each is exchanged there for its project's catalog.
    authUrl: () => cloudAuthUrl(),
    ...(cloudInterface ? { interface: cloudInterface } : {}),
  });
  closers.push(() => Promise.resolve(magnumCloud.close()));
  identity.registerService({
    type: 'container-infra',
    name: 'magnum',
    urlForProject: () => `${getBaseUrl()}/v1`,
  });
  plugins.push({
    name: 'magnum',
    prefix: '',
    plugin: magnumRoutes({
      store,
      identity,
      clock,
      policy: defaultPolicy,
      baseUrl: getBaseUrl,
      pki: new StorePki({ store, clock, encryptionKey: loadOrCreateKey(config.dataDir), ...pkiKeys }),
      // Images, flavors, keypairs and networks are checked as the caller sees them, before the 202.
      cloud: magnumCloud,
    }),
  });
  {
    // The operator's public templates, so a newcomer's `cluster template list` is not empty.
    const operatorProject = (await identity.listProjects()).find((p) => p.name === BOOTSTRAP.adminProject);
    if (operatorProject) {
      const operator = await identity.validate((await identity.issueServiceToken(operatorProject.id)).token);
      await seedPublicTemplates(store, { projectId: operatorProject.id, userId: operator.userId });
    }
  }

  // --- wiring: Kubernetes-style API ---
  {
    // The Cluster API objects with Kubernetes API conventions, for kubectl (`coe management config`).
    const { kubeRoutes, KUBE_PREFIX, loadOrCreateKubeTls, startKubeTlsFront } =
      await import('./api/kube/index.ts');
    let endpoint: () => { server: string; caPem?: string } = () => ({
      server: `${getBaseUrl()}${KUBE_PREFIX}`,
    });
    if (!getBaseUrl().startsWith('https:')) {
      // kubectl sends no credentials over plain HTTP: offer the API on a TLS port too (next to the main one).
      const local = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      const names = [...new Set(['127.0.0.1', 'localhost', local, new URL(getBaseUrl()).hostname])];
      const material = await loadOrCreateKubeTls(config.dataDir, names, Date.now());
      const front = await startKubeTlsFront({
        material,
        host: config.host,
        port: config.port === 0 ? 0 : config.port + 1,
        target: () => ({
          host: local,
          port: config.publicUrl ? config.port : Number(new URL(getBaseUrl()).port),
        }),
      });
      closers.push(() => front.close());
      endpoint = () => ({ server: `https://${local}:${front.port()}${KUBE_PREFIX}`, caPem: material.caPem });
    }
    plugins.push({
      name: 'kube',
      prefix: KUBE_PREFIX,
      plugin: kubeRoutes({ store, identity, clock, baseUrl: getBaseUrl, endpoint }),
    });
  }

  // --- wiring: dashboard ---
  {
    // A static single-page front end over the public APIs (identity, Magnum, compute).
    const { dashboardRoutes } = await import('./web/index.ts');
    plugins.push({
      name: 'dashboard',
      prefix: '/dashboard',
      plugin: dashboardRoutes({ policy: defaultPolicy }),
    });
  }

  void getBaseUrl;
  const app = await buildServer({
    config,
    plugins,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  lateLog = app.log;
  await app.listen({ host: config.host, port: config.port });
  const addr = app.server.address();
  if (!config.publicUrl && addr && typeof addr === 'object') baseUrl = `http://${config.host}:${addr.port}`;

  // --- wiring after listen: controllers, workload emulation ---

  // >>> revision feed compaction: the feed keeps at least five minutes of history, not all of it
  closers.push(startFeedCompaction({ store, clock, log: app.log.child({ component: 'store' }) }));
  if (movedCloudRecords > 0)
    app.log.info({ records: movedCloudRecords }, 'embedded cloud: records moved to its own store');
  // <<< revision feed compaction

  // >>> catalog registration (identity mode keystone): the Magnum API as container-infra
  if (
    identity instanceof KeystoneIdentity &&
    config.identity.registerCatalog !== false &&
    config.role !== 'controllers'
  ) {
    try {
      const published = await identity.publishCatalog(config.region);
      for (const p of published) app.log.info({ catalog: p }, `registered ${p.type} at ${p.url}`);
    } catch (err) {
      app.log.warn({ err }, 'could not register Magnetar in the external Keystone catalog');
    }
  }
  // <<< catalog registration

  // >>> workload emulation (embedded cloud only): the emulated clusters' Kubernetes APIs on loopback ports
  const emulateWorkload = config.cloud.emulateWorkload ?? config.cloud.mode === 'embedded';
  if (emulateWorkload && options.controllers !== false && config.role !== 'api') {
    const {
      WorkloadEmulator,
      StorePki: EmulatorPki,
      loadOrCreateKey: emulatorKey,
    } = await import('./workload/index.ts');
    const latencyMs = config.cloud.simulatedLatencyMs;
    const timing = { nodeReadyMs: latencyMs, podStartMs: Math.round(latencyMs / 2) };
    // One process of those sharing the store serves the emulated endpoints.
    const lease = {
      holder: `emulator-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
      ttlMs: config.controllers.leaseTtlSeconds * 1000,
    };
    if (cloudThread) {
      // Where the cloud has a thread of its own, so do the machines it runs (docs/adr/0023).
      const thread = await startEmulatorThread({
        config,
        store,
        host: '127.0.0.1',
        timing,
        lease,
        log: () => app.log,
        logLevel: app.log.level,
      });
      emulatorThread = thread;
      closers.push(() => thread.close());
    } else {
      const emulator = new WorkloadEmulator({
        store,
        pki: new EmulatorPki({ store, clock, encryptionKey: emulatorKey(config.dataDir), ...pkiKeys }),
        clock,
        host: '127.0.0.1',
        log: app.log,
        timing,
        lease,
      });
      await emulator.start();
      closers.push(() => emulator.stop());
    }
  }
  // <<< workload emulation

  // >>> controllers (provisioning engine)
  let controllerManager: ControllerManager | undefined;
  if (options.controllers !== false && config.role !== 'api') {
    const { ControllerManager, createEngine, createServiceClouds } = await import('./controllers/index.ts');
    const {
      WorkloadAccess,
      StorePki: ControllerStorePki,
      loadOrCreateKey: controllerKey,
    } = await import('./workload/index.ts');
    const { defaultPolicy: controllerPolicy } = await import('./domain/index.ts');
    const controllerPki = new ControllerStorePki({
      store,
      clock,
      encryptionKey: controllerKey(config.dataDir),
      ...pkiKeys,
    });
    const clouds = createServiceClouds({
      authUrl: cloudAuthUrl(),
      issueServiceToken: (projectId) => identity.issueServiceToken(projectId),
      clock,
      // A real cloud drops connections now and then: retry what is safe to repeat.
      session: { maxRetries: config.cloud.mode === 'external' ? 3 : 0, timeoutMs: 30_000 },
      ...(cloudInterface ? { interface: cloudInterface } : {}),
    });
    const manager = (controllerManager = new ControllerManager({
      store,
      clock,
      // reconcile failures, retries and relists reach the operator's log
      log: app.log.child({ component: 'controllers' }),
      workers: config.controllers.workers,
      resyncMs: config.controllers.resyncSeconds * 1000,
      leaseTtlMs: config.controllers.leaseTtlSeconds * 1000,
    }));
    const backupDeps = async () => {
      const { BackupKeys } = await import('./workload/index.ts');
      const { emulatedSnapshotter, unavailableSnapshotter } = await import('./controllers/index.ts');
      const { defaultBackupPolicy } = await import('./domain/index.ts');
      return {
        policy: defaultBackupPolicy,
        keys: new BackupKeys(store, controllerKey(config.dataDir)),
        snapshotter: config.cloud.mode === 'embedded' ? emulatedSnapshotter(store) : unavailableSnapshotter(),
      };
    };
    const engine = createEngine({
      store,
      cloud: (projectId) => clouds.cloud(projectId),
      // Reading another user's keypair is an admin call: with an external Keystone, make it in
      // the service user's own project (where it is admin), not the tenant's (where it is member).
      userKeypair: async (projectId, userId, name) =>
        clouds.userKeypair(
          identity instanceof KeystoneIdentity
            ? ((await identity.serviceProjectId()) ?? projectId)
            : projectId,
          userId,
          name,
        ),
      pki: controllerPki,
      workload: new WorkloadAccess({ pki: controllerPki, clock }),
      policy: controllerPolicy,
      clock,
      log: app.log.child({ component: 'controllers' }),
      region: config.region,
      settings: { endpointAnnotationOnly: emulateWorkload },
      // etcd backups (docs/adr): snapshots, schedules, restores, pre-upgrade snapshots.
      backup: await backupDeps(),
    });
    for (const r of engine.reconcilers) manager.register(r);
    await manager.start();
    closers.push(async () => {
      await manager.stop();
      engine.env.nodes.close();
      clouds.close();
    });
  }
  // <<< controllers (provisioning engine)

  let closed = false;
  return {
    app,
    url: baseUrl,
    store,
    config,
    clock,
    ...(cloudThread ? { cloudThread } : {}),
    ...(emulatorThread ? { emulatorThread } : {}),
    ...(controllerManager ? { controllers: controllerManager } : {}),
    ...(keyMakerThread ? { keyMakerThread } : {}),
    async close() {
      if (closed) return;
      closed = true;
      for (const c of closers.reverse()) await c();
      await app.close();
      if (!options.store) await store.close();
    },
  };
}
