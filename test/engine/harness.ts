import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig } from '../../src/cli/load-config.ts';
import { loadCloudConfig, Session, createCloudClients, type CloudClients } from '../../src/cloud/index.ts';
import {
  CapiTypes,
  ManualClock,
  defaultBackupPolicy,
  MagnumTypes,
  magnumStatus,
  type ApiObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../src/domain/index.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { SqliteStore, type ObjectStore } from '../../src/store/index.ts';

/**
 * A whole Magnetar (identity, embedded cloud, Magnum API, controllers, workload emulation) on
 * an ephemeral port, in virtual time, driven as a user would: the Magnum API with the demo
 * service account's credentials, the embedded cloud's admin API for faults and inventory.
 */
export interface Harness {
  m: Magnetar;
  clock: ManualClock;
  store: ObjectStore;
  dir: string;
  /** The demo service account (creates clusters). */
  user: Session;
  userCloud: CloudClients;
  /** The admin (faults, inventory). */
  admin: Session;
  projectId: string;
  /** Call the Magnum API as the demo service account. */
  magnum<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Stop Magnetar and start a new one on the same store and data directory (a crash and restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(
  options: { latencyMs?: number; controllers?: boolean } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-engine-'));
  const clock = new ManualClock();
  const store = new SqliteStore({ path: join(dir, 'store.sqlite'), now: () => clock.now() });
  const config = testConfig({
    dataDir: dir,
    cloud: { mode: 'embedded', cloudName: 'magnetar', simulatedLatencyMs: options.latencyMs ?? 0 },
  });
  const start = () =>
    startMagnetar({
      config,
      clock,
      store,
      logger: false,
      ...(options.controllers === false ? { controllers: false } : {}),
    });
  let m = await start();
  const session = (cloud: string) =>
    new Session(loadCloudConfig({ cloud, env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }), {
      clock,
      maxRetries: 0,
    });
  let user = session('magnetar-demo-sa');
  let admin = session('magnetar-admin');
  const projectId = (await user.projectId())!;
  const h: Harness = {
    get m() {
      return m;
    },
    clock,
    store,
    dir,
    get user() {
      return user;
    },
    get userCloud() {
      return createCloudClients(user);
    },
    get admin() {
      return admin;
    },
    projectId,
    async magnum<T>(method: string, path: string, body?: unknown) {
      const res = await user.request<T>('container-infra', method, path.replace(/^\/v1/, ''), {
        ...(body === undefined ? {} : { body }),
        headers: { 'OpenStack-API-Version': 'container-infra latest' },
        expect: [200, 201, 202, 204, 400, 403, 404, 409],
        retry: false,
      });
      return { status: res.status, body: res.body };
    },
    async restart() {
      user.close();
      admin.close();
      await m.close();
      m = await start();
      user = session('magnetar-demo-sa');
      admin = session('magnetar-admin');
    },
    async close() {
      user.close();
      admin.close();
      await m.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/**
 * Advance virtual time in `stepMs` steps, letting real I/O run between steps, until `check`
 * returns a value (not undefined/false). Fails with `what` and the last observation.
 */
export async function eventually<T>(
  h: Harness,
  what: string,
  check: () => Promise<T | undefined | false>,
  options: { stepMs?: number; maxSteps?: number; describe?: () => Promise<string> } = {},
): Promise<T> {
  const steps = options.maxSteps ?? 600;
  for (let i = 0; i < steps; i++) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    await h.clock.advance(options.stepMs ?? 1000);
    await new Promise<void>((r) => setImmediate(r));
  }
  const detail = options.describe ? await options.describe() : '';
  assert.fail(`timed out waiting for ${what}${detail ? `: ${detail}` : ''}`);
}

/** The stored Magnum cluster by name. */
export async function magnumCluster(h: Harness, name: string): Promise<MagnumClusterObject | undefined> {
  return h.store.get<MagnumClusterObject>(MagnumTypes.Cluster, h.projectId, name);
}

/** Node groups of a Magnum cluster. */
export async function nodeGroups(h: Harness, clusterUid: string): Promise<NodeGroupObject[]> {
  const all = await h.store.list<NodeGroupObject>(MagnumTypes.NodeGroup, { namespace: h.projectId });
  return all.items.filter((g) => g.spec.clusterId === clusterUid);
}

/** Magnum status string of a cluster (as the API shows it), with its reason. */
export async function statusOf(
  h: Harness,
  name: string,
): Promise<{ status: string; reason: string } | undefined> {
  const c = await magnumCluster(h, name);
  return c ? { status: magnumStatus(c), reason: c.status.reason ?? '' } : undefined;
}

/** Create a cluster with the user guide's arguments (overridable); returns its uuid. */
export async function createCluster(
  h: Harness,
  name: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const body = {
    name,
    cluster_template_id: 'k8s-v1.31',
    master_count: 3,
    master_flavor_id: 'm1.medium',
    node_count: 3,
    flavor_id: 'm1.medium',
    keypair: 'my-keypair',
    ...overrides,
  };
  const res = await h.magnum<{ uuid: string }>('POST', '/v1/clusters', body);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.uuid;
}

/** Create the demo service account's keypair `my-keypair`. */
export async function createKeypair(h: Harness, name = 'my-keypair'): Promise<void> {
  await h.userCloud.compute.createKeypair({
    name,
    publicKey:
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5hZ25ldGFyLXRlc3Qta2V5LW5vdC1yZWFsLTAwMDAw magnetar-test',
  });
}

/** Wait until the cluster reaches `want` (or any *_FAILED / other terminal status, which fails the test). */
export async function waitForStatus(
  h: Harness,
  name: string,
  want: string,
  maxSteps = 900,
): Promise<{ status: string; reason: string }> {
  return eventually(
    h,
    `${name} to be ${want}`,
    async () => {
      const s = await statusOf(h, name);
      if (!s) return want === 'gone' ? { status: 'gone', reason: '' } : undefined;
      if (s.status === want) return s;
      if (s.status.endsWith('_FAILED') && !want.endsWith('_FAILED'))
        assert.fail(`${name} is ${s.status}: ${s.reason}`);
      return undefined;
    },
    { maxSteps, describe: async () => JSON.stringify(await statusOf(h, name)) },
  );
}

/** The embedded cloud's inventory of a project, via its admin API. */
export async function inventory(
  h: Harness,
  projectId = h.projectId,
): Promise<Record<string, { id: string; name: string; status?: string }[]>> {
  const token = await h.admin.token();
  const res = await fetch(`${h.m.url}/cloud/_inventory?project_id=${projectId}`, {
    headers: { 'X-Auth-Token': token },
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    projects: Record<string, Record<string, { id: string; name: string; status?: string }[]>>;
  };
  return body.projects[projectId] ?? {};
}

/** Add a fault rule to the embedded cloud. */
export async function addFault(h: Harness, rule: Record<string, unknown>): Promise<void> {
  const token = await h.admin.token();
  const res = await fetch(`${h.m.url}/cloud/_faults`, {
    method: 'POST',
    headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
    body: JSON.stringify(rule),
  });
  assert.equal(res.status, 201, await res.text());
}

/** Remove every fault rule. */
export async function clearFaults(h: Harness): Promise<void> {
  const token = await h.admin.token();
  await fetch(`${h.m.url}/cloud/_faults`, { method: 'DELETE', headers: { 'X-Auth-Token': token } });
}

/** CAPI objects of a kind in the demo project. */
export async function capi<T extends ApiObject>(
  h: Harness,
  type: (typeof CapiTypes)[keyof typeof CapiTypes],
): Promise<T[]> {
  return (await h.store.list<T>(type, { namespace: h.projectId })).items;
}

/** Count resources of each kind in an inventory (only kinds present). */
export function counts(inv: Record<string, unknown[]>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(inv)
      .filter(([, v]) => v.length > 0)
      .map(([k, v]) => [k, v.length]),
  );
}

/** Cloud resources of the project beyond what exists without any cluster (its default security group, keypairs). */
export async function leftovers(h: Harness): Promise<Record<string, number>> {
  const inv = await inventory(h);
  const defaults = new Set<string>();
  for (const g of await h.userCloud.network.listSecurityGroups({ name: 'default' })) {
    defaults.add(g.id);
    for (const r of g.rules) defaults.add(r.id);
  }
  const out: Record<string, unknown[]> = {};
  // etcd backups are kept after a cluster is deleted, on purpose (ADR 0007): not a leak.
  const backup = (k: string, i: { name: string }) =>
    (k === 'Container' && i.name === defaultBackupPolicy.container) ||
    (k === 'StoredObject' && i.name.endsWith('.etcd-snapshot.enc'));
  for (const [k, v] of Object.entries(inv))
    if (k !== 'Keypair') out[k] = v.filter((i) => !defaults.has(i.id) && !backup(k, i));
  return counts(out);
}
