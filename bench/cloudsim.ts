import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../src/api/index.ts';
import { CLOUD_PREFIX, embeddedCloud } from '../src/cloudsim/index.ts';
import {
  AuthenticationError,
  systemClock,
  type AuthContext,
  type IdentityProvider,
} from '../src/domain/index.ts';
import { SqliteStore } from '../src/store/index.ts';

/**
 * Embedded cloud benchmark: requests per second of Nova server create, show and delete on
 * loopback with zero simulated latency, on a SQLite file. The cloud is mounted alone (with a
 * fixed-token identity) so the figures are the cloud's own. Bounded: a few seconds per
 * scenario, under 30 s in all.
 */

const SECONDS = Number(process.env.MAGNETAR_BENCH_CLOUDSIM_SECONDS ?? 6);
const CONNECTIONS = 10;
const ADMIN_PROJECT = 'a0000000000000000000000000000001';
const DEMO_PROJECT = 'b0000000000000000000000000000002';

/** Two fixed tokens: `admin` and `demo`. */
function benchIdentity(): IdentityProvider {
  const ctx = (token: string, projectId: string, admin: boolean): AuthContext => ({
    token,
    userId: `${token}-user`,
    userName: token,
    userDomainId: 'default',
    projectId,
    projectName: token,
    projectDomainId: 'default',
    roles: admin ? ['admin', 'member', 'reader'] : ['member', 'reader'],
    isServiceAccount: false,
    isAdmin: admin,
    expiresAt: '2099-01-01T00:00:00Z',
    methods: ['token'],
  });
  const tokens = new Map([
    ['admin', ctx('admin', ADMIN_PROJECT, true)],
    ['demo', ctx('demo', DEMO_PROJECT, false)],
  ]);
  return {
    validate: async (token) => {
      const c = tokens.get(token);
      if (!c) throw new AuthenticationError('bad token');
      return c;
    },
    getProject: async () => undefined,
    listProjects: async () => [],
  };
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, pipelining: 1, ...opts }, (err: unknown, result) =>
      err ? reject(err instanceof Error ? err : new Error(JSON.stringify(err))) : resolve(result),
    );
  });
}

function report(name: string, r: autocannon.Result): void {
  const errors = r.errors + r.non2xx;
  console.log(
    `${name.padEnd(28)} ${r.requests.average.toFixed(0).padStart(6)} req/s  p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms  (${r.requests.total} requests${errors ? `, ${errors} errors/non-2xx` : ''})`,
  );
}

/** Run the embedded cloud benchmark. */
export async function benchCloudsim(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'magnetar-bench-cloudsim-'));
  const store = new SqliteStore({ path: join(dataDir, 'bench.sqlite') });
  const cloudsim = embeddedCloud({ store, identity: benchIdentity(), clock: systemClock, latencyMs: 0 });
  const app = await buildServer({
    config: { bodyLimitBytes: 1024 * 1024, logLevel: 'silent' },
    plugins: [{ name: 'cloud', prefix: CLOUD_PREFIX, plugin: cloudsim.plugin }],
  });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    await cloudsim.seed({ adminProjectId: ADMIN_PROJECT });
    const addr = app.server.address();
    const cloud = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/cloud`;
    const admin = { token: 'admin' };
    const demo = { token: 'demo', projectId: DEMO_PROJECT };
    const h = (token: string) => ({
      'x-auth-token': token,
      'content-type': 'application/json',
      'openstack-api-version': 'compute 2.79',
    });
    // room for many servers
    await json(
      await fetch(`${cloud}/compute/v2.1/os-quota-sets/${demo.projectId}`, {
        method: 'PUT',
        headers: h(admin.token),
        body: JSON.stringify({ quota_set: { instances: -1, cores: -1, ram: -1 } }),
      }),
    );
    await json(
      await fetch(`${cloud}/network/v2.0/quotas/${demo.projectId}`, {
        method: 'PUT',
        headers: h(admin.token),
        body: JSON.stringify({ quota: { port: -1 } }),
      }),
    );
    const net = (await json(
      await fetch(`${cloud}/network/v2.0/networks`, {
        method: 'POST',
        headers: h(demo.token),
        body: JSON.stringify({ network: { name: 'bench' } }),
      }),
    )) as {
      network: { id: string };
    };
    await json(
      await fetch(`${cloud}/network/v2.0/subnets`, {
        method: 'POST',
        headers: h(demo.token),
        body: JSON.stringify({
          subnet: { network_id: net.network.id, cidr: '10.128.0.0/16', ip_version: 4 },
        }),
      }),
    );
    const images = (await json(
      await fetch(`${cloud}/image/v2/images?name=fedora-coreos-38`, { headers: h(demo.token) }),
    )) as { images: { id: string }[] };
    const imageRef = images.images[0]!.id;

    console.log(
      `# embedded cloud: ${CONNECTIONS} connections, ${SECONDS} s per scenario, zero simulated latency, SQLite file`,
    );
    const ids: string[] = [];
    let n = 0;
    report(
      'POST /servers',
      await run({
        url: `${cloud}/compute/v2.1/servers`,
        method: 'POST',
        headers: h(demo.token),
        duration: SECONDS,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                server: {
                  name: `bench-${n++}`,
                  flavorRef: '2',
                  imageRef,
                  networks: [{ uuid: net.network.id }],
                },
              }),
            }),
            onResponse: (status, body) => {
              if (status === 202) ids.push((JSON.parse(body) as { server: { id: string } }).server.id);
            },
          },
        ],
      }),
    );
    let i = 0;
    report(
      'GET /servers/{id}',
      await run({
        url: `${cloud}/compute/v2.1/servers`,
        headers: h(demo.token),
        duration: SECONDS,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              path: `/cloud/compute/v2.1/servers/${ids[i++ % ids.length]!}`,
            }),
          },
        ],
      }),
    );
    const toDelete = [...ids];
    report(
      'DELETE /servers/{id}',
      await run({
        url: `${cloud}/compute/v2.1/servers`,
        method: 'DELETE',
        headers: h(demo.token),
        duration: SECONDS,
        amount: toDelete.length,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              path: `/cloud/compute/v2.1/servers/${toDelete.pop() ?? 'none'}`,
            }),
          },
        ],
      }),
    );
    console.log(`servers created: ${ids.length}`);
  } finally {
    await cloudsim.close();
    await app.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
