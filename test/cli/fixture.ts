import { join } from 'node:path';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { testConfig } from '../../src/cli/load-config.ts';
import {
  MagnumTypes,
  type ApiObject,
  type ManualClock,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../src/domain/index.ts';
import { CloudError, loadCloudConfig, Session } from '../../src/cloud/index.ts';
import { runCoe, type CoeIo } from '../../src/cli/coe.ts';
import { Capture, tempDir, type CoeRun } from './helpers.ts';

/**
 * A Magnetar for the `coe` end-to-end tests: real HTTP on an ephemeral port, in-memory SQLite,
 * the clouds.yaml it generates. No controllers run: tests play the Magnum driver by writing the
 * status a driver would write, so every transition happens exactly when the test says.
 */
export interface CoeFixture {
  magnetar: Magnetar;
  dataDir: string;
  /** Environment selecting Magnetar's clouds.yaml (cloud chosen per call). */
  env(cloud?: string): NodeJS.ProcessEnv;
  /** Run `coe` in-process as the given cloud (default: the demo project's service account). */
  coe(
    args: string[],
    options?: { cloud?: string; cwd?: string; clock?: ManualClock; env?: NodeJS.ProcessEnv },
  ): Promise<CoeRun>;
  /** Start `coe` without waiting for it (for --wait). */
  start(args: string[], options?: { cloud?: string; clock?: ManualClock }): RunningCoe;
  /** Finish every pending create/update of Magnum clusters and nodegroups, as the driver would. */
  completeAll(options?: { apiAddress?: string }): Promise<void>;
  /** Fail the pending operation of a cluster with a reason. */
  failCluster(uuid: string, reason: string): Promise<void>;
  /** Let pending deletes of clusters and nodegroups finish (drop the driver's finalizer). */
  finishDeletes(): Promise<void>;
  close(): Promise<void>;
}

export interface RunningCoe {
  stdout: Capture;
  stderr: Capture;
  done: Promise<number>;
}

/** A fresh Magnetar and its clouds.yaml. */
export async function startFixture(): Promise<CoeFixture> {
  const tmp = tempDir('coe-e2e-');
  const magnetar = await startMagnetar({ config: testConfig({ dataDir: tmp.dir }), controllers: false });
  const store = magnetar.store;
  const env = (cloud = 'magnetar-demo-sa'): NodeJS.ProcessEnv => ({
    OS_CLIENT_CONFIG_FILE: join(tmp.dir, 'clouds.yaml'),
    OS_CLOUD: cloud,
    HOME: tmp.dir,
    SHELL: '/bin/bash',
  });
  const io = (o: {
    cloud?: string;
    cwd?: string;
    clock?: ManualClock;
    env?: NodeJS.ProcessEnv;
  }): Omit<CoeIo, 'stdout' | 'stderr'> => ({
    env: { ...env(o.cloud), ...o.env },
    cwd: o.cwd ?? tmp.dir,
    ...(o.clock ? { clock: o.clock } : {}),
  });

  async function pending<T extends MagnumClusterObject | NodeGroupObject>(type: string): Promise<T[]> {
    return (await store.list<T>(type)).items.filter(
      (o) => !o.metadata.deletionTimestamp && o.metadata.generation > (o.status.observedGeneration ?? 0),
    );
  }

  const fixture: CoeFixture = {
    magnetar,
    dataDir: tmp.dir,
    env,
    async coe(args, options = {}) {
      const stdout = new Capture();
      const stderr = new Capture();
      const code = await runCoe(['node', 'coe', ...args], { ...io(options), stdout, stderr });
      return { code, stdout: stdout.text, stderr: stderr.text };
    },
    start(args, options = {}) {
      const stdout = new Capture();
      const stderr = new Capture();
      const done = runCoe(['node', 'coe', ...args], { ...io(options), stdout, stderr });
      return { stdout, stderr, done };
    },
    async completeAll(options = {}) {
      for (const ng of await pending<NodeGroupObject>(MagnumTypes.NodeGroup)) {
        const n = ng.spec.nodeCount;
        await store.updateStatus({
          ...ng,
          status: {
            ...ng.status,
            observedGeneration: ng.metadata.generation,
            observedAction: ng.spec.action,
            outcome: 'Complete',
            reason: `${ng.spec.name} has ${n} ready node(s)`,
            nodeAddresses: Array.from({ length: n }, (_, i) => `10.0.0.${10 + i}`),
          },
        });
      }
      for (const c of await pending<MagnumClusterObject>(MagnumTypes.Cluster)) {
        await store.updateStatus({
          ...c,
          status: {
            ...c.status,
            observedGeneration: c.metadata.generation,
            observedAction: c.spec.action,
            outcome: 'Complete',
            reason: 'Cluster is ready',
            apiAddress: options.apiAddress ?? 'https://10.0.0.5:6443',
            healthStatus: 'HEALTHY',
          },
        });
      }
    },
    async failCluster(uuid, reason) {
      const c = await store.getByUid<MagnumClusterObject>(MagnumTypes.Cluster, uuid);
      if (!c) throw new Error(`no cluster ${uuid}`);
      await store.updateStatus({
        ...c,
        status: {
          ...c.status,
          observedGeneration: c.metadata.generation,
          observedAction: c.spec.action,
          outcome: 'Failed',
          reason,
        },
      });
    },
    async finishDeletes() {
      for (const type of [MagnumTypes.NodeGroup, MagnumTypes.Cluster]) {
        for (const o of (await store.list<ApiObject<unknown, unknown>>(type)).items) {
          if (o.metadata.deletionTimestamp)
            await store.update({ ...o, metadata: { ...o.metadata, finalizers: [] } });
        }
      }
    },
    async close() {
      await magnetar.close();
      tmp.remove();
    },
  };
  await ensureKeypair(fixture);
  return fixture;
}

/**
 * The keypair the tests' clusters name, created for the cluster creator in the embedded cloud
 * when the catalog has a compute endpoint (Magnum checks that it exists once a cloud is wired).
 */
async function ensureKeypair(fixture: CoeFixture): Promise<void> {
  const session = sessionFor(fixture);
  try {
    await session.request('compute', 'POST', '/os-keypairs', { body: { keypair: { name: 'my-keypair' } } });
  } catch (err) {
    const noCompute =
      err instanceof CloudError && err.status === undefined && /endpoint/.test(err.cloudMessage);
    if (!noCompute && !(err instanceof CloudError && err.status === 409)) throw err;
  } finally {
    session.close();
  }
}

/**
 * Drive a `--wait` run in virtual time: whenever the poller sleeps, move the clock by `stepMs`,
 * until the run ends.
 */
export async function driveClock(
  clock: ManualClock,
  run: RunningCoe,
  stepMs: number,
  maxSteps = 100,
): Promise<number> {
  let settled = false;
  void run.done.finally(() => {
    settled = true;
  });
  for (let i = 0; i < maxSteps && !settled; i++) {
    while (!settled && clock.pendingTimers === 0) await new Promise((r) => setImmediate(r));
    if (!settled) await clock.advance(stepMs);
  }
  return run.done;
}

/** An authenticated session as one of Magnetar's clouds (for checks made around `coe`). */
export function sessionFor(fixture: CoeFixture, cloud = 'magnetar-demo-sa'): Session {
  return new Session(
    loadCloudConfig({ env: fixture.env(cloud), cwd: fixture.dataDir, home: fixture.dataDir }),
  );
}
