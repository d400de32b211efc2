import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../../src/api/index.ts';
import { identityRoutes } from '../../src/api/identity/index.ts';
import { testConfig } from '../../src/cli/load-config.ts';
import { embeddedCloud, type EmbeddedCloud } from '../../src/cloudsim/index.ts';
import { createCloudClients, loadCloudConfig, Session, type CloudClients } from '../../src/cloud/index.ts';
import { ControllerManager, createEngine, type Controllers } from '../../src/controllers/index.ts';
import { ManualClock, defaultPolicy, silentLogger } from '../../src/domain/index.ts';
import { LocalIdentity } from '../../src/identity/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { StorePki, WorkloadAccess } from '../../src/workload/index.ts';

/**
 * Identity + the embedded cloud over real HTTP + the provisioning controllers, without the
 * Magnum API or workload emulation: for testing the infrastructure controllers on objects
 * written by hand (as `kubectl apply` would). The controllers act as the demo service account.
 */
export interface InfraFixture {
  clock: ManualClock;
  store: SqliteStore;
  cloud: EmbeddedCloud;
  clients: CloudClients;
  projectId: string;
  manager: ControllerManager;
  engine: Controllers;
  /** Every request the embedded cloud answered so far, as `METHOD /path` (query left off). */
  requests: string[];
  /** Advance virtual time until `check` holds, letting I/O run. */
  until<T>(what: string, check: () => Promise<T | undefined | false>, maxSteps?: number): Promise<T>;
  /**
   * Advance virtual time until the project holds nothing beyond what Neutron makes by itself
   * (the `default` security group and its rules): nothing leaked.
   */
  untilCloudEmpty(): Promise<void>;
  close(): Promise<void>;
}

export async function startInfra(options: { latencyMs?: number } = {}): Promise<InfraFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-infra-'));
  const clock = new ManualClock();
  const store = new SqliteStore({ path: ':memory:', now: () => clock.now() });
  const config = testConfig({ dataDir: dir });
  let base = '';
  const identity = await LocalIdentity.open({
    store,
    clock,
    baseUrl: () => base,
    region: config.region,
    tokenTtlSeconds: 36000,
  });
  const boot = await identity.bootstrap();
  identity.registerService({
    type: 'identity',
    name: 'keystone',
    urlForProject: () => `${base}/identity/v3`,
  });
  const cloud = embeddedCloud({ store, identity, clock, latencyMs: options.latencyMs ?? 0 });
  for (const s of cloud.services)
    identity.registerService({
      type: s.type,
      name: s.name,
      urlForProject: (p) => `${base}${s.path.replace('{project_id}', p)}`,
    });
  const app = await buildServer({
    config,
    plugins: [
      { name: 'identity', prefix: '/identity', plugin: identityRoutes(identity, {}) },
      { name: 'cloud', prefix: '/cloud', plugin: cloud.plugin },
    ],
    logger: false,
  });
  const requests: string[] = [];
  app.server.on('request', (req: { method?: string; url?: string }) => {
    if (req.url?.startsWith('/cloud/')) requests.push(`${req.method} ${req.url.split('?')[0]}`);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const adminProject = (await identity.listProjects()).find((p) => p.name === 'admin')!;
  await cloud.seed({ adminProjectId: adminProject.id });
  identity.writeClientFiles({ dataDir: dir, baseUrl: base, print: false });
  void boot;
  const session = new Session(
    loadCloudConfig({ cloud: 'magnetar-demo-sa', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
    { clock, maxRetries: 0 },
  );
  const projectId = (await session.projectId())!;
  const clients = createCloudClients(session);
  const pki = new StorePki({ store, clock, encryptionKey: Buffer.alloc(32, 1) });
  const engine = createEngine({
    store,
    cloud: () => clients,
    pki,
    workload: new WorkloadAccess({ pki, clock }),
    policy: defaultPolicy,
    clock,
    log: silentLogger,
    region: 'RegionOne',
    settings: { endpointAnnotationOnly: true, cloudPollMs: 1000 },
  });
  const manager = new ControllerManager({ store, clock, workers: 4, serviceHeartbeatMs: 0 });
  for (const r of engine.reconcilers) manager.register(r);
  await manager.start();
  const until: InfraFixture['until'] = async (what, check, maxSteps = 300) => {
    for (let i = 0; i < maxSteps; i++) {
      const v = await check();
      if (v !== undefined && v !== false) return v;
      await clock.advance(500);
      await new Promise<void>((r) => setImmediate(r));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  return {
    clock,
    store,
    cloud,
    clients,
    projectId,
    manager,
    engine,
    requests,
    until,
    async untilCloudEmpty() {
      await until('the cloud to be empty', async () => {
        const inv = await cloud.inventory(projectId);
        const defaults = new Set<string>();
        for (const g of await clients.network.listSecurityGroups({ name: 'default' })) {
          defaults.add(g.id);
          for (const r of g.rules) defaults.add(r.id);
        }
        const left = Object.values(inv.projects[projectId] ?? {}).some((items) =>
          items.some((i) => !defaults.has(i.id)),
        );
        return !left;
      });
    },
    async close() {
      await manager.stop();
      session.close();
      await cloud.close();
      await app.close();
      await identity.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
