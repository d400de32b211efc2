import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { testConfig } from '../src/cli/load-config.ts';
import { createCloudClients, loadCloudConfig, Session } from '../src/cloud/index.ts';
import {
  MagnumTypes,
  magnumStatus,
  threadCpuSeconds,
  type MagnumClusterObject,
} from '../src/domain/index.ts';
import { startMagnetar, type Magnetar } from '../src/main.ts';

/**
 * Scale benchmark of the provisioning engine: N Magnum clusters of 3 masters + 3 workers
 * created through the Magnum API on the embedded cloud (zero latency), then deleted. Prints
 * clusters/s and machines/s for create and delete, peak RSS, and the idle CPU with all N
 * clusters up (after a wind-down of `MAGNETAR_BENCH_SETTLE_S`, 30, and until the collections of
 * the burst's heap are over, over `MAGNETAR_BENCH_IDLE_S`, 60), and the CPU of one resync of every
 * object, which the controllers spread over each 10-minute sync period and the idle window does
 * not see. For the create, the resync and the delete it prints the calls the embedded cloud
 * answered per cluster. `MAGNETAR_BENCH_CLUSTERS=1000` for the full run.
 *
 * The store is a SQLite file, as `npm start` runs, so the embedded cloud runs on its own thread
 * with its own store file (ADR 0013) and the CPU figures count both threads;
 * `MAGNETAR_BENCH_STORE=memory` measures the engine on an in-memory database instead, with the
 * cloud on the main thread (the figure earlier reports gave).
 */
export async function benchScale(options: { clusters?: number } = {}): Promise<void> {
  const n = options.clusters ?? Number(process.env.MAGNETAR_BENCH_CLUSTERS ?? 50);
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-bench-scale-'));
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 250);
  sampler.unref();
  const inMemory = process.env.MAGNETAR_BENCH_STORE === 'memory';
  const config = testConfig({
    dataDir: dir,
    store: { engine: 'sqlite', url: inMemory ? ':memory:' : 'magnetar.sqlite' },
    cloud: { mode: 'embedded', cloudName: 'magnetar', simulatedLatencyMs: 0 },
    controllers: { workers: 16, resyncSeconds: 600, leaseTtlSeconds: 15 },
  });
  const m = await startMagnetar({ config, logger: false });
  try {
    const session = new Session(
      loadCloudConfig({
        cloud: 'magnetar-demo-sa',
        env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') },
      }),
      { maxRetries: 3 },
    );
    const project = (await session.projectId())!;
    await createCloudClients(session).compute.createKeypair({
      name: 'bench-key',
      publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5hZ25ldGFyLWJlbmNoLWtleS1ub3QtcmVhbC0wMDAw bench',
    });
    const quotas = { 'OpenStack-API-Version': 'container-infra latest' };
    // Lift the project's Magnum cluster quota for the run (admin).
    const admin = new Session(
      loadCloudConfig({ cloud: 'magnetar-admin', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
    );
    await admin.request('container-infra', 'POST', '/quotas', {
      body: { project_id: project, resource: 'Cluster', hard_limit: n + 10 },
      headers: quotas,
      expect: [201, 409],
    });
    await liftCloudQuotas(admin, m.url, project, n);

    // The calls the embedded cloud answered, by operation: the load a real cloud's APIs carry.
    const cloudCalls = async (): Promise<CloudCalls> => {
      const res = await fetch(`${m.url}/cloud/_calls`, { headers: { 'X-Auth-Token': await admin.token() } });
      return (await res.json()) as CloudCalls;
    };
    const createCalls0 = await cloudCalls();
    const t0 = Date.now();
    const createCpu0 = process.cpuUsage();
    const threads0 = threadCpu(m);
    const names = Array.from({ length: n }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) =>
          session.request('container-infra', 'POST', '/clusters', {
            headers: quotas,
            body: {
              name,
              cluster_template_id: 'k8s-v1.31',
              master_count: 3,
              master_flavor_id: 'm1.small',
              node_count: 3,
              flavor_id: 'm1.small',
              keypair: 'bench-key',
            },
          }),
        ),
      );
    }
    const accepted = (Date.now() - t0) / 1000;
    // The clusters' statuses, followed through the revision feed: listing every cluster on each
    // poll would cost as much as a good part of what is being measured once N is large.
    const status = new Map<string, string>();
    let seen = 0;
    const states = async () => {
      for (;;) {
        let events;
        try {
          events = await m.store.changes(seen, { types: [MagnumTypes.Cluster], limit: 5000 });
        } catch {
          // compacted past our position: list once, then follow again
          const all = await m.store.list<MagnumClusterObject>(MagnumTypes.Cluster, { namespace: project });
          status.clear();
          for (const c of all.items) status.set(c.metadata.name, magnumStatus(c));
          seen = Number(all.resourceVersion);
          continue;
        }
        for (const e of events) {
          const c = e.object as unknown as MagnumClusterObject;
          if (c.metadata.namespace !== project) continue;
          if (e.type === 'DELETED') status.delete(c.metadata.name);
          else status.set(c.metadata.name, magnumStatus(c));
        }
        seen = events.at(-1)?.revision ?? seen;
        if (events.length < 5000) break;
      }
      const by: Record<string, number> = {};
      for (const st of status.values()) by[st] = (by[st] ?? 0) + 1;
      return { by, total: status.size };
    };
    const limitMs = Number(process.env.MAGNETAR_BENCH_TIMEOUT_S ?? 600) * 1000;
    let last = await states();
    // when a half and nine tenths of the clusters were complete: how long a cluster asked for in
    // the burst waits, not only the last one
    const reached = new Map<number, number>();
    const note = () => {
      for (const share of [0.5, 0.9])
        if (!reached.has(share) && (last.by.CREATE_COMPLETE ?? 0) >= share * n)
          reached.set(share, (Date.now() - t0) / 1000);
    };
    while ((last.by.CREATE_COMPLETE ?? 0) + (last.by.CREATE_FAILED ?? 0) < n && Date.now() - t0 < limitMs) {
      await new Promise((r) => setTimeout(r, 500));
      last = await states();
      note();
    }
    note();
    const created = (Date.now() - t0) / 1000;
    const createCpu = process.cpuUsage(createCpu0);
    const createCpuS = (createCpu.user + createCpu.system) / 1e6;
    const reasons = new Map<string, number>();
    for (const c of (await m.store.list<MagnumClusterObject>(MagnumTypes.Cluster, { namespace: project }))
      .items)
      if (magnumStatus(c) === 'CREATE_FAILED') {
        const r = c.status.reason ?? '(no reason)';
        reasons.set(r, (reasons.get(r) ?? 0) + 1);
      }
    for (const [r, k] of reasons) console.log(`CREATE_FAILED ×${k}: ${r}`);
    console.log(
      `clusters: ${n} (3 masters + 3 workers each) on a SQLite ${inMemory ? 'in-memory' : 'file'} store, API accepted all in ${accepted.toFixed(1)} s`,
    );
    console.log(
      `create: ${JSON.stringify(last.by)} after ${created.toFixed(1)} s → ${(n / created).toFixed(2)} clusters/s, ${((6 * n) / created).toFixed(1)} machines/s`,
    );
    console.log(
      `  complete: half after ${reached.get(0.5)?.toFixed(1) ?? '-'} s, nine tenths after ${reached.get(0.9)?.toFixed(1) ?? '-'} s`,
    );
    console.log(
      `create CPU: ${createCpuS.toFixed(1)} s (${((createCpuS * 1000) / n).toFixed(0)} ms per cluster, ${((100 * createCpuS) / created).toFixed(0)}% of one core)`,
    );
    // Each thread's part: the build is bound by the busiest one, or by both cores together.
    const byThread = threadsSince(threads0, threadCpu(m), createCpuS, created);
    if (byThread) console.log(`  by thread: ${byThread}`);
    console.log(`  cloud calls: ${callsPerCluster(createCalls0, await cloudCalls(), n)}`);

    // Idle: every cluster up, nothing asked for. First the wind-down after the burst: the last
    // reconciles, then the full collections of the heap the burst grew. The first comes when it
    // comes; once allocation has calmed down, V8's memory reducer follows with up to two more,
    // from a second to over twenty seconds apart, to give memory back (each about a second of CPU
    // on the main and helper threads at 1000 clusters). Each thread (the main one, the embedded
    // cloud's, the workload emulator's, the key maker's) has a heap of its own and collects it on
    // its own schedule, minutes apart. The wind-down lasts `MAGNETAR_BENCH_SETTLE_S` and on until
    // a full collection has been seen and none, on any thread, for `MAGNETAR_BENCH_GC_QUIET_S`
    // (45), four minutes at most. Then the idle window proper: one workload probe period (a
    // minute) by default, so each cluster's probe falls in it once, wherever it starts; a full
    // collection still seen in it, on any thread, is counted.
    const otherGcs = () => threadGcs(m);
    const windDown = await cpuOver(Number(process.env.MAGNETAR_BENCH_SETTLE_S ?? 30) * 1000, {
      untilGcQuiet: { quietMs: Number(process.env.MAGNETAR_BENCH_GC_QUIET_S ?? 45) * 1000, maxMs: 240_000 },
      otherGcs,
    });
    console.log(
      `CPU in the ${windDown.seconds} s after the last cluster completed: ${windDown.percent}% of one core (main thread's GC pauses ${windDown.gcPercent}%; ${gcCount(windDown)})`,
    );
    const idleThreads0 = threadCpu(m);
    const idle = await cpuOver(Number(process.env.MAGNETAR_BENCH_IDLE_S ?? 60) * 1000, { otherGcs });
    console.log(
      `idle CPU with ${n} clusters up: ${idle.percent}% of one core (over the next ${idle.seconds} s; main thread's GC pauses ${idle.gcPercent}%; ${gcCount(idle)})`,
    );
    const idleByThread = threadsSince(
      idleThreads0,
      threadCpu(m),
      (Number(idle.percent) / 100) * Number(idle.seconds),
      Number(idle.seconds),
    );
    if (idleByThread) console.log(`  by thread: ${idleByThread}`);
    // The periodic resync (every object reconciled once per sync period, spread over its first
    // half) does not fall in that window: run one now and spread its cost over the period.
    const resyncCalls0 = await cloudCalls();
    const resync = await cpuDuring(async () => {
      await m.controllers!.resyncAll();
      await m.controllers!.waitIdle();
    });
    const resyncCalls = callsPerCluster(resyncCalls0, await cloudCalls(), n);
    const periodS = config.controllers.resyncSeconds;
    const resyncCpuS = resync.cpuMs / 1000 - (Number(idle.percent) / 100) * (resync.wallMs / 1000);
    console.log(
      `one resync of every object: ${resyncCpuS.toFixed(1)} s of CPU beyond idle (${((resyncCpuS * 1000) / n).toFixed(0)} ms per cluster, ${(resync.wallMs / 1000).toFixed(1)} s) → ${((100 * resyncCpuS) / periodS).toFixed(1)}% of one core over the ${periodS / 60}-minute sync period, ${((100 * resyncCpuS) / (periodS / 2)).toFixed(1)}% over the half it is spread on`,
    );
    console.log(`  cloud calls: ${resyncCalls}`);
    // What an operator's graph shows over hours: the idle window's rate plus the resyncs.
    console.log(
      `idle CPU over a whole sync period, resync included: ${(Number(idle.percent) + (100 * resyncCpuS) / periodS).toFixed(1)}% of one core`,
    );
    console.log(`peak RSS: ${(Math.max(peakRss, process.memoryUsage().rss) / 1024 / 1024).toFixed(0)} MiB`);

    const deleteCalls0 = await cloudCalls();
    const d0 = Date.now();
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) =>
          session.request('container-infra', 'DELETE', `/clusters/${name}`, {
            headers: quotas,
            expect: [204, 404],
          }),
        ),
      );
    }
    let left = (await states()).total;
    while (left > 0 && Date.now() - d0 < limitMs) {
      await new Promise((r) => setTimeout(r, 500));
      left = (await states()).total;
    }
    const deleted = (Date.now() - d0) / 1000;
    console.log(
      `delete: ${n - left} of ${n} gone after ${deleted.toFixed(1)} s → ${((n - left) / deleted).toFixed(2)} clusters/s, ${((6 * (n - left)) / deleted).toFixed(1)} machines/s`,
    );
    console.log(`  cloud calls: ${callsPerCluster(deleteCalls0, await cloudCalls(), n)}`);
    const inv = await fetch(`${m.url}/cloud/_inventory?project_id=${project}`, {
      headers: { 'X-Auth-Token': await admin.token() },
    });
    const body = (await inv.json()) as {
      projects: Record<string, Record<string, { id: string; name: string }[]>>;
    };
    // Neutron's per-project default security group and its rules are the project's, not a cluster's.
    const defaults = (
      await session.request<{ security_groups: { id: string; security_group_rules: unknown[] }[] }>(
        'network',
        'GET',
        '/v2.0/security-groups',
        { query: { name: 'default' } },
      )
    ).body.security_groups;
    const defaultRules = defaults.reduce((k, g) => k + g.security_group_rules.length, 0);
    const leftovers = Object.entries(body.projects[project] ?? {})
      .map(([k, v]): [string, number] => {
        if (k === 'SecurityGroup') return [k, v.filter((g) => g.name !== 'default').length];
        if (k === 'SecurityGroupRule') return [k, v.length - defaultRules];
        return [k, v.length];
      })
      .filter(([k, count]) => k !== 'Keypair' && count > 0);
    console.log(
      `cloud resources left in the project: ${leftovers.length === 0 ? 'none (the default security group kept)' : JSON.stringify(leftovers)}`,
    );
    session.close();
    admin.close();
  } finally {
    clearInterval(sampler);
    await m.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `GET /cloud/_calls`: the calls the embedded cloud answered, by operation. */
interface CloudCalls {
  total: number;
  calls: Record<string, number>;
}

/** The calls between two readings, per cluster, with the five most made. */
function callsPerCluster(before: CloudCalls, after: CloudCalls, n: number): string {
  const per = (k: number) => (k / n).toFixed(1);
  const top = Object.entries(after.calls)
    .map(([op, k]): [string, number] => [op, k - (before.calls[op] ?? 0)])
    .filter(([, k]) => k > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([op, k]) => `${op} ${per(k)}`);
  return `${per(after.total - before.total)} per cluster (most: ${top.join(', ')})`;
}

interface ThreadCpu {
  main: number | undefined;
  cloud: number | undefined;
  keys: number | undefined;
  emulator: number | undefined;
}

/** CPU seconds so far of the main thread, the embedded cloud's and the key maker's (Linux). */
function threadCpu(m: Magnetar): ThreadCpu {
  return {
    main: threadCpuSeconds(process.pid),
    cloud: m.cloudThread?.cpuSeconds(),
    keys: m.keyMakerThread?.cpuSeconds(),
    emulator: m.emulatorThread?.cpuSeconds(),
  };
}

/**
 * Each thread's CPU between two readings, in seconds and in percent of one core over `wallS`,
 * and the rest of the process's `totalS` (V8's helper threads: garbage collection and the
 * optimizing compiler; libuv's pool); undefined where threads cannot be told apart. A thread
 * that started in between (the key maker starts with the first cluster) counts from zero.
 */
function threadsSince(
  before: ThreadCpu,
  after: ThreadCpu,
  totalS: number,
  wallS: number,
): string | undefined {
  if (before.main === undefined || after.main === undefined) return undefined;
  const part = (b: number | undefined, a: number | undefined) => (a === undefined ? 0 : a - (b ?? 0));
  const main = part(before.main, after.main);
  const cloud = part(before.cloud, after.cloud);
  const keys = part(before.keys, after.keys);
  const emulator = part(before.emulator, after.emulator);
  const show = (s: number) => `${s.toFixed(1)} s (${((100 * s) / Math.max(wallS, 1e-9)).toFixed(0)}%)`;
  return [
    `main ${show(main)}`,
    ...(after.cloud !== undefined ? [`embedded cloud ${show(cloud)}`] : []),
    ...(after.keys !== undefined ? [`key maker ${show(keys)}`] : []),
    ...(after.emulator !== undefined ? [`workload emulator ${show(emulator)}`] : []),
    `the rest (V8 helpers, libuv) ${show(Math.max(0, totalS - main - cloud - keys - emulator))}`,
  ].join(', ');
}

/**
 * This process's CPU over the next `ms`, as a percentage of one core, and the part of it the
 * garbage collector's pauses took (incremental marking between pauses is not in that part).
 */
async function cpuOver(
  ms: number,
  options: {
    untilGcQuiet?: { quietMs: number; maxMs: number };
    /** The full collections so far of the other threads (each thread has its own heap). */
    otherGcs?: () => number;
  } = {},
): Promise<{ percent: string; seconds: string; gcPercent: string; majorGcs: number; mainGcs: number }> {
  let gcMs = 0;
  let majorGcs = 0;
  let lastMajorAt = 0;
  // the other threads' collections, read once a second: their counts are seen, not their pauses
  const others0 = options.otherGcs?.() ?? 0;
  let others = others0;
  const lookAtOthers = () => {
    const now = options.otherGcs?.() ?? 0;
    if (now === others) return;
    others = now;
    lastMajorAt = Date.now();
  };
  const sleep = (waitMs: number) => new Promise((r) => setTimeout(r, waitMs));
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs += e.duration;
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        majorGcs++;
        lastMajorAt = Date.now();
      }
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const cpu0 = process.cpuUsage();
  const w0 = Date.now();
  while (Date.now() - w0 < ms) {
    await sleep(Math.min(1000, ms - (Date.now() - w0)));
    lookAtOthers();
  }
  const quiet = options.untilGcQuiet;
  while (
    quiet !== undefined &&
    (majorGcs + others - others0 === 0 || Date.now() - lastMajorAt < quiet.quietMs) &&
    Date.now() - w0 < quiet.maxMs
  ) {
    await sleep(1000);
    lookAtOthers();
  }
  const cpu = process.cpuUsage(cpu0);
  const elapsed = Date.now() - w0;
  gc.disconnect();
  return {
    percent: (((cpu.user + cpu.system) / 1000 / Math.max(1, elapsed)) * 100).toFixed(1),
    seconds: (elapsed / 1000).toFixed(0),
    gcPercent: ((gcMs / Math.max(1, elapsed)) * 100).toFixed(1),
    majorGcs: majorGcs + others - others0,
    mainGcs: majorGcs,
  };
}

/** Full collections on every thread, and how many of them were the main thread's. */
function gcCount(w: { majorGcs: number; mainGcs: number }): string {
  return `${plural(w.majorGcs, 'full collection')}, ${w.mainGcs} on the main thread`;
}

/** Full collections so far on the threads other than the main one. */
function threadGcs(m: Magnetar): number {
  return (
    (m.cloudThread?.majorGcs() ?? 0) +
    (m.keyMakerThread?.majorGcs() ?? 0) +
    (m.emulatorThread?.majorGcs() ?? 0)
  );
}

/** `n thing` or `n things`. */
function plural(n: number, thing: string): string {
  return `${n} ${thing}${n === 1 ? '' : 's'}`;
}

/** CPU of the whole process (every thread) and wall time while `work` runs. */
async function cpuDuring(work: () => Promise<void>): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu0 = process.cpuUsage();
  const w0 = Date.now();
  await work();
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: Date.now() - w0 };
}

/** Raise the embedded cloud's quotas of the project so N clusters fit (admin, Nova/Neutron/Octavia quota APIs). */
export async function liftCloudQuotas(
  admin: Session,
  _base: string,
  project: string,
  n: number,
): Promise<void> {
  const big = n * 10 + 100;
  const tries: [string, string, unknown][] = [
    [
      'compute',
      `/os-quota-sets/${project}`,
      { quota_set: { instances: big, cores: big * 4, ram: big * 8192 } },
    ],
    [
      'network',
      `/v2.0/quotas/${project}`,
      {
        quota: {
          network: big,
          subnet: big,
          router: big,
          port: big * 2,
          floatingip: big,
          security_group: big,
          security_group_rule: big * 10,
        },
      },
    ],
    [
      'load-balancer',
      `/v2/lbaas/quotas/${project}`,
      { quota: { load_balancer: big, listener: big, pool: big, member: big * 4, health_monitor: big } },
    ],
  ];
  for (const [service, path, body] of tries) {
    try {
      await admin.request(service, 'PUT', path, { body });
    } catch (err) {
      console.log(`(could not raise ${service} quotas: ${err instanceof Error ? err.message : String(err)})`);
    }
  }
}
