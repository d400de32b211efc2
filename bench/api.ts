import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../src/cli/load-config.ts';
import { startMagnetar, type Magnetar } from '../src/main.ts';
import { PostgresStore } from '../src/store/index.ts';
import { randomBytes } from 'node:crypto';

/**
 * API benchmark: token issue, cluster page, cluster show with 1000 clusters stored, template
 * create — on SQLite and (when MAGNETAR_TEST_PG_URL is set) PostgreSQL. Then a soak of cluster
 * show that samples RSS to show whether memory stays flat.
 */

interface CloudEntry {
  auth: { auth_url: string; username: string; password: string; project_name: string };
}

const SECONDS = Number(process.env.MAGNETAR_BENCH_SECONDS ?? 10);
const SOAK_SECONDS = Number(process.env.MAGNETAR_BENCH_SOAK_SECONDS ?? 60);
const CLUSTERS = Number(process.env.MAGNETAR_BENCH_API_CLUSTERS ?? 1000);

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

async function token(m: Magnetar, cloud: CloudEntry): Promise<string> {
  const res = await fetch(`${m.url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(passwordAuth(cloud)),
  });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${await res.text()}`);
  return res.headers.get('x-subject-token')!;
}

function passwordAuth(cloud: CloudEntry) {
  return {
    auth: {
      identity: {
        methods: ['password'],
        password: {
          user: { name: cloud.auth.username, password: cloud.auth.password, domain: { name: 'Default' } },
        },
      },
      scope: { project: { name: cloud.auth.project_name, domain: { name: 'Default' } } },
    },
  };
}

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 20, pipelining: 1, duration: SECONDS, ...opts }, (err, result) =>
      err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result),
    );
  });
}

function report(engine: string, name: string, r: autocannon.Result): void {
  const errors = r.errors + r.non2xx;
  console.log(
    `${engine.padEnd(8)} ${name.padEnd(34)} ${r.requests.average.toFixed(0).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms${errors ? `  (${errors} errors/non-2xx)` : ''}`,
  );
}

async function benchEngine(engine: 'sqlite' | 'postgres', storeUrl: string | undefined): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'magnetar-bench-'));
  const config = testConfig({
    dataDir,
    store: engine === 'sqlite' ? { engine, url: 'bench.sqlite' } : { engine, url: storeUrl! },
  });
  // PostgreSQL: a schema of its own, so the run starts from an empty store and bootstraps afresh.
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const pgStore = engine === 'postgres' ? await PostgresStore.connect({ url: storeUrl!, schema }) : undefined;
  const m = await startMagnetar({ config, controllers: false, logger: false, store: pgStore });
  try {
    const clouds = (
      parseYaml(readFileSync(join(dataDir, 'clouds.yaml'), 'utf8')) as { clouds: Record<string, CloudEntry> }
    ).clouds;
    const admin = clouds['magnetar-admin']!;
    const sa = clouds['magnetar-demo-sa']!;
    const adminToken = await token(m, admin);
    const saToken = await token(m, sa);
    const h = (t: string) => ({
      'x-auth-token': t,
      'content-type': 'application/json',
      accept: 'application/json',
      'openstack-api-version': 'container-infra latest',
    });
    // room for the clusters, then create them through the API
    const projects = (await json(
      await fetch(`${m.url}/identity/v3/projects?name=demo`, { headers: h(adminToken) }),
    )) as {
      projects: { id: string }[];
    };
    const projectId = projects.projects[0]!.id;
    await json(
      await fetch(`${m.url}/v1/quotas`, {
        method: 'POST',
        headers: h(adminToken),
        body: JSON.stringify({ project_id: projectId, resource: 'Cluster', hard_limit: CLUSTERS + 10 }),
      }),
    );
    const templates = (await json(await fetch(`${m.url}/v1/clustertemplates`, { headers: h(saToken) }))) as {
      clustertemplates: { uuid: string }[];
    };
    const tpl = templates.clustertemplates[0]!.uuid;
    // cluster create checks the creator's keypair in the cloud
    const catalog = (await json(
      await fetch(`${m.url}/identity/v3/auth/catalog`, { headers: h(saToken) }),
    )) as { catalog: { type: string; endpoints: { interface: string; url: string }[] }[] };
    const compute = catalog.catalog
      .find((s) => s.type === 'compute')!
      .endpoints.find((e) => e.interface === 'public')!.url;
    await json(
      await fetch(`${compute}/os-keypairs`, {
        method: 'POST',
        headers: h(saToken),
        body: JSON.stringify({ keypair: { name: 'bench' } }),
      }),
    );
    let lastUuid = '';
    const t0 = Date.now();
    for (let i = 0; i < CLUSTERS; i++) {
      const body = {
        name: `bench-${i}`,
        cluster_template_id: tpl,
        master_count: 3,
        node_count: 3,
        master_flavor_id: 'm1.medium',
        flavor_id: 'm1.medium',
        keypair: 'bench',
        create_timeout: 60,
        discovery_url: null,
      };
      const r = (await json(
        await fetch(`${m.url}/v1/clusters`, {
          method: 'POST',
          headers: h(saToken),
          body: JSON.stringify(body),
        }),
      )) as {
        uuid: string;
      };
      lastUuid = r.uuid;
    }
    console.log(
      `${engine.padEnd(8)} created ${CLUSTERS} clusters through the API in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );

    report(
      engine,
      'POST /identity/v3/auth/tokens',
      await run({
        url: `${m.url}/identity/v3/auth/tokens`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(passwordAuth(sa)),
      }),
    );
    report(
      engine,
      'GET /v1/clusters?limit=50',
      await run({ url: `${m.url}/v1/clusters?limit=50`, headers: h(saToken) }),
    );
    report(
      engine,
      'GET /v1/clusters/{uuid}',
      await run({ url: `${m.url}/v1/clusters/${lastUuid}`, headers: h(saToken) }),
    );
    let n = 0;
    report(
      engine,
      'POST /v1/clustertemplates',
      await run({
        url: `${m.url}/v1/clustertemplates`,
        method: 'POST',
        headers: h(saToken),
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                name: `bench-tpl-${n++}`,
                coe: 'kubernetes',
                image_id: 'fedora-coreos-38',
                external_network_id: 'public',
                flavor_id: 'm1.medium',
                master_flavor_id: 'm1.medium',
                network_driver: 'calico',
                labels: { kube_tag: 'v1.32.4' },
                master_lb_enabled: true,
              }),
            }),
          },
        ],
      }),
    );

    if (SOAK_SECONDS > 0) {
      const samples: number[] = [];
      const timer = setInterval(() => samples.push(process.memoryUsage().rss), 5000);
      const r = await run({
        url: `${m.url}/v1/clusters/${lastUuid}`,
        headers: h(saToken),
        duration: SOAK_SECONDS,
      });
      clearInterval(timer);
      report(engine, `soak GET /v1/clusters/{uuid} ${SOAK_SECONDS}s`, r);
      const mb = samples.map((s) => (s / 1048576).toFixed(0));
      const half = Math.floor(samples.length / 2);
      const first = samples.slice(1, half).reduce((a, b) => a + b, 0) / Math.max(1, half - 1);
      const second = samples.slice(half).reduce((a, b) => a + b, 0) / Math.max(1, samples.length - half);
      console.log(
        `${engine.padEnd(8)} RSS every 5 s (MiB): ${mb.join(' ')}; second half vs first half: ${((second - first) / 1048576).toFixed(1)} MiB`,
      );
    }
  } finally {
    await m.close();
    if (pgStore) {
      await pgStore.close();
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: storeUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Run the API benchmark on SQLite and, when configured, PostgreSQL. */
export async function benchApi(): Promise<void> {
  console.log(`# API benchmark: ${SECONDS} s per scenario, 20 connections, ${CLUSTERS} clusters stored`);
  await benchEngine('sqlite', undefined);
  const pg = process.env.MAGNETAR_TEST_PG_URL;
  if (pg) await benchEngine('postgres', pg);
  else console.log('postgres skipped: MAGNETAR_TEST_PG_URL not set');
}
