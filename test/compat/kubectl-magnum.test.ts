import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { testConfig } from '../../src/cli/load-config.ts';
import { loadCloudConfig, Session, createCloudClients } from '../../src/cloud/index.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { coe } from '../cli/helpers.ts';

/**
 * The Cluster API article's kubectl workflow on a cluster built through the Magnum API, with
 * the real kubectl and the real provisioning engine (embedded cloud, emulated workload
 * clusters, real time): `kubectl get clusters,machines,…` shows the Magnum cluster's objects,
 * `kubectl delete machine` has the worker replaced, `kubectl apply -f machine.yaml` adds a
 * worker that joins, `kubectl scale machinedeployment` resizes the node group within the
 * operator's rules. Also the "Done when" of the kubeconfigs: `openstack coe cluster config` /
 * `coe cluster config` → `kubectl get nodes` lists every node Ready, and after `coe ca rotate`
 * the old kubeconfig is refused.
 *
 * Skips when kubectl is missing (the openstack client steps when openstack is missing), unless
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1, where they fail.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const hasOpenstack = spawnSync('openstack', ['--version'], { encoding: 'utf8' }).status === 0;
const why = (what: string) => `${what} is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)`;
const skip = hasKubectl || required ? false : why('kubectl');
const skipOpenstack = hasOpenstack || required ? false : why('the openstack CLI');
const COE = fileURLToPath(new URL('../../bin/coe.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let m: Magnetar;
let dir: string;
let user: Session;
let projectId = '';
/** The CAPI Cluster name of the Magnum cluster `prod`. */
let capi = '';
let md = '';
let kcp = '';

function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => !e[0].startsWith('OS_') && e[0] !== 'KUBECONFIG' && e[1] !== undefined,
    ),
  );
}

/** kubectl with the management kubeconfig (default) or a workload one. */
function kubectl(args: string[], kubeconfig = join(dir, 'mgmt', 'config')): Promise<Run> {
  const env = { ...cleanEnv(), HOME: dir, KUBECONFIG: kubeconfig };
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--request-timeout=30s', ...args],
      { env, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[], kubeconfig?: string): Promise<string> {
  const r = await kubectl(args, kubeconfig);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function openstack(args: string[]): Promise<Run> {
  const env = {
    ...cleanEnv(),
    HOME: dir,
    OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'),
    OS_CLOUD: 'magnetar-demo-sa',
    // `cluster config` reads SHELL to choose its export line and fails without one.
    SHELL: '/bin/bash',
  };
  return new Promise((resolve) => {
    execFile('openstack', args, { env, timeout: 180_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

function coeEnv(): Record<string, string> {
  return {
    OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'),
    OS_CLOUD: 'magnetar-demo-sa',
    HOME: dir,
    SHELL: '/bin/bash',
  };
}

/** Rows of a kubectl table, by header. */
function table(out: string): Record<string, string>[] {
  const lines = out.trimEnd().split('\n');
  const header = lines[0] ?? '';
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((x) => ({ name: x[0], at: x.index }));
  return lines
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((line) =>
      Object.fromEntries(
        starts.map((c, i) => [c.name, line.slice(c.at, starts[i + 1]?.at ?? line.length).trim()]),
      ),
    );
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface MagnumCluster {
  status: string;
  node_count: number;
  master_count: number;
  coe_version: string;
}

async function magnum(): Promise<MagnumCluster> {
  const res = await user.request<MagnumCluster>('container-infra', 'GET', '/clusters/prod', {
    headers: { 'OpenStack-API-Version': 'container-infra latest' },
  });
  return res.body;
}

async function servers(): Promise<{ id: string; name: string; status: string }[]> {
  return (await createCloudClients(user).compute.listServers()).map((s) => ({
    id: s.id,
    name: s.name,
    status: s.status,
  }));
}

/** The server id of a provider ID (`openstack://<region>/<id>`). */
function serverOf(providerId: string): string {
  return providerId.slice(providerId.lastIndexOf('/') + 1);
}

/** `coe cluster config prod --dir <sub>`: the workload kubeconfig path. */
async function workloadKubeconfig(sub: string): Promise<string> {
  const r = await coe(['cluster', 'config', 'prod', '--dir', sub, '--force'], { env: coeEnv(), cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  return join(dir, sub, 'config');
}

/** Node name → row of `kubectl get nodes`. */
async function nodes(kubeconfig: string): Promise<Map<string, Record<string, string>>> {
  return new Map(table(await ok(['get', 'nodes'], kubeconfig)).map((r) => [r.NAME!, r]));
}

void describe(
  'the article’s kubectl workflow on a Magnum-built cluster',
  { skip, timeout: 15 * 60_000 },
  () => {
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'magnetar-kubectl-magnum-'));
      // a store file, as `npm start` runs: the embedded cloud on its own thread
      m = await startMagnetar({
        config: testConfig({ dataDir: dir, store: { engine: 'sqlite', url: 'magnetar.sqlite' } }),
        logger: false,
      });
      user = new Session(
        loadCloudConfig({
          cloud: 'magnetar-demo-sa',
          env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') },
        }),
        { maxRetries: 0 },
      );
      projectId = (await user.projectId())!;
      await createCloudClients(user).compute.createKeypair({
        name: 'my-keypair',
        publicKey:
          'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5hZ25ldGFyLXRlc3Qta2V5LW5vdC1yZWFsLTAwMDAw magnetar-test',
      });
      const created = await coe(
        [
          'cluster',
          'create',
          '--cluster-template',
          'k8s-v1.31',
          '--master-count',
          '3',
          '--master-flavor',
          'm1.medium',
          '--node-count',
          '2',
          '--flavor',
          'm1.medium',
          '--keypair',
          'my-keypair',
          'prod',
        ],
        { env: coeEnv(), cwd: dir },
      );
      assert.equal(created.code, 0, created.stderr);
      await until(
        'prod to be CREATE_COMPLETE',
        async () => {
          const c = await magnum();
          assert.ok(!c.status.endsWith('FAILED'), c.status);
          return c.status === 'CREATE_COMPLETE' ? c : undefined;
        },
        180_000,
      );
      const cfg = await coe(['management', 'config', '--dir', 'mgmt', '--exec-command', COE], {
        env: coeEnv(),
        cwd: dir,
      });
      assert.equal(cfg.code, 0, cfg.stderr);
    });
    after(async () => {
      user?.close();
      await m?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    void test('kubectl and the openstack client are installed', () => {
      assert.ok(hasKubectl, 'kubectl is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
      if (required) assert.ok(hasOpenstack, 'openstack is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
    });

    void test('kubectl get clusters,machines,machinedeployments,openstackmachines shows the Magnum cluster with the CRD columns', async () => {
      const clusters = table(await ok(['get', 'clusters']));
      assert.equal(clusters.length, 1);
      capi = clusters[0]!.NAME!;
      assert.match(capi, /^prod-/);
      assert.equal(clusters[0]!.PHASE, 'Provisioned');

      const machines = table(await ok(['get', 'machines']));
      assert.equal(machines.length, 5, JSON.stringify(machines));
      for (const row of machines) {
        assert.equal(row.CLUSTER, capi);
        assert.equal(row.PHASE, 'Running');
        assert.equal(row.NODENAME, row.NAME);
        assert.match(row.PROVIDERID!, /^openstack:\/\/[^/]*\/[0-9a-f-]{36}$/);
        assert.match(row.VERSION!, /^v1\.31\.\d+$/);
      }
      const mds = table(await ok(['get', 'machinedeployments']));
      assert.equal(mds.length, 1);
      md = mds[0]!.NAME!;
      assert.equal(mds[0]!.REPLICAS, '2');
      assert.equal(mds[0]!.READY, '2');
      assert.equal(mds[0]!.PHASE, 'Running');
      kcp = table(await ok(['get', 'kubeadmcontrolplanes']))[0]!.NAME!;

      const osms = table(await ok(['get', 'openstackmachines']));
      assert.equal(osms.length, 5);
      for (const row of osms) {
        assert.equal(row.INSTANCESTATE, 'ACTIVE');
        assert.equal(row.READY, 'true');
        assert.equal(row.MACHINE, row.NAME);
      }

      // All four at once, as the article lists them.
      const all = await ok([
        'get',
        'clusters,machines,machinedeployments,openstackmachines',
        '-n',
        projectId,
      ]);
      assert.match(all, new RegExp(`cluster\\.cluster\\.x-k8s\\.io/${capi}\\s`));
      assert.match(all, new RegExp(`machinedeployment\\.cluster\\.x-k8s\\.io/${md}\\s`));
      assert.equal(all.match(/^openstackmachine\.infrastructure\.cluster\.x-k8s\.io\//gm)?.length, 5);
    });

    void test(
      'openstack coe cluster config gives a kubeconfig: kubectl get nodes lists every master and worker Ready at the cluster version, and its certificate verifies',
      { skip: skipOpenstack },
      async () => {
        const d = join(dir, 'os-kube');
        mkdirSync(d);
        const r = await openstack(['coe', 'cluster', 'config', 'prod', '--dir', d]);
        assert.equal(r.code, 0, r.stderr);
        const version = (await magnum()).coe_version;
        const rows = [...(await nodes(join(d, 'config'))).values()];
        assert.equal(rows.length, 5);
        assert.equal(rows.filter((n) => n.ROLES === 'control-plane').length, 3);
        for (const n of rows) {
          assert.equal(n.STATUS, 'Ready');
          assert.equal(n.VERSION, version);
        }
        const kc = parseYaml(readFileSync(join(d, 'config'), 'utf8')) as {
          clusters: { cluster: { 'certificate-authority-data': string } }[];
          users: { user: { 'client-certificate-data': string } }[];
        };
        writeFileSync(
          join(d, 'ca.pem'),
          Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64'),
        );
        writeFileSync(
          join(d, 'cert.pem'),
          Buffer.from(kc.users[0]!.user['client-certificate-data'], 'base64'),
        );
        const verify = spawnSync('openssl', ['verify', '-CAfile', join(d, 'ca.pem'), join(d, 'cert.pem')], {
          encoding: 'utf8',
        });
        assert.match(verify.stdout, /cert\.pem: OK/, verify.stderr);
      },
    );

    void test('coe cluster config gives a kubeconfig with which kubectl get nodes lists every node Ready', async () => {
      const rows = [...(await nodes(await workloadKubeconfig('coe-kube'))).values()];
      assert.equal(rows.length, 5);
      assert.ok(rows.every((n) => n.STATUS === 'Ready' && /^v1\.31\.\d+$/.test(n.VERSION!)));
    });

    void test('kubectl delete machine: its MachineSet replaces the worker (new server, node joins, old server gone) and node_count stays', async () => {
      const kubeconfig = await workloadKubeconfig('coe-kube');
      const workers = table(await ok(['get', 'machines', '-l', `cluster.x-k8s.io/deployment-name=${md}`]));
      assert.equal(workers.length, 2);
      const victim = workers[0]!;
      const serverId = serverOf(victim.PROVIDERID!);
      assert.ok((await servers()).some((s) => s.id === serverId));

      const del = await ok(['delete', 'machine', victim.NAME!]);
      assert.match(del, new RegExp(`machine.cluster.x-k8s.io "${victim.NAME}" deleted`));

      const replaced = await until('a replacement worker Running', async () => {
        const now = table(await ok(['get', 'machines', '-l', `cluster.x-k8s.io/deployment-name=${md}`]));
        return now.length === 2 &&
          now.every((r) => r.PHASE === 'Running') &&
          !now.some((r) => r.NAME === victim.NAME)
          ? now
          : undefined;
      });
      const fresh = replaced.find((r) => r.NAME !== workers[1]!.NAME)!;
      const list = await servers();
      assert.ok(!list.some((s) => s.id === serverId), 'the old server is gone');
      assert.equal(list.find((s) => s.id === serverOf(fresh.PROVIDERID!))?.status, 'ACTIVE');
      const joined = await until('the new node Ready, the old one gone', async () => {
        const n = await nodes(kubeconfig);
        return n.get(fresh.NAME!)?.STATUS === 'Ready' && !n.has(victim.NAME!) ? n : undefined;
      });
      assert.equal(joined.size, 5);
      const c = await magnum();
      assert.equal(c.node_count, 2);
      assert.equal(c.status, 'CREATE_COMPLETE');
    });

    void test('kubectl apply -f machine.yaml naming the node group templates adds a worker that joins as a node', async () => {
      const templates = await ok(['get', 'kubeadmconfigtemplates,openstackmachinetemplates', '-o', 'name']);
      const boot = /kubeadmconfigtemplate\.bootstrap\.cluster\.x-k8s\.io\/(\S+)/.exec(templates)![1]!;
      const infra = new RegExp(
        `openstackmachinetemplate\\.infrastructure\\.cluster\\.x-k8s\\.io/(${md}-\\S+)`,
      ).exec(templates)![1]!;
      const version = table(await ok(['get', 'md', md]))[0]!.VERSION!;
      const manifest = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: extra-worker
  labels:
    set: node
spec:
  clusterName: ${capi}
  version: ${version}
  bootstrap:
    configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: ${boot}}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: ${infra}}
`;
      writeFileSync(join(dir, 'machine.yaml'), manifest);
      assert.match(
        await ok(['apply', '-f', join(dir, 'machine.yaml')]),
        /machine.cluster.x-k8s.io\/extra-worker created/,
      );
      const row = await until('extra-worker Running', async () => {
        const r = table(await ok(['get', 'machine', 'extra-worker']))[0];
        return r?.PHASE === 'Running' ? r : undefined;
      });
      assert.equal(row.NODENAME, 'extra-worker');
      const n = await until('extra-worker Ready in kubectl get nodes', async () => {
        const all = await nodes(await workloadKubeconfig('coe-kube'));
        return all.get('extra-worker')?.STATUS === 'Ready' ? all : undefined;
      });
      assert.equal(n.get('extra-worker')?.VERSION, version);
      assert.equal(
        await ok([
          'get',
          'machine',
          'extra-worker',
          '-o',
          'jsonpath={.spec.infrastructureRef.kind}/{.spec.bootstrap.configRef.kind}',
        ]),
        'OpenStackMachine/KubeadmConfig',
      );
      assert.equal((await magnum()).node_count, 2, 'a hand-made machine is not part of the node group');
      // The same manifest again is unchanged: apply reads the stored object.
      assert.match(
        await ok(['apply', '-f', join(dir, 'machine.yaml')]),
        /extra-worker (unchanged|configured)/,
      );
    });

    void test('the operator rules hold through kubectl: no node group above 10, no even master count, nothing changes', async () => {
      const over = await kubectl(['scale', 'machinedeployment', md, '--replicas', '11']);
      assert.equal(over.code, 1);
      assert.match(
        over.stderr,
        new RegExp(
          `The MachineDeployment "${md}" is invalid: spec.replicas: Invalid value: 11: .*exceeds the limit of 10 worker nodes per node group`,
        ),
      );
      const even = await kubectl(['scale', 'kubeadmcontrolplane', kcp, '--replicas', '2']);
      assert.equal(even.code, 1);
      assert.match(even.stderr, /is invalid: spec.replicas/);
      assert.match(even.stderr, /even/);
      const edit = await kubectl([
        'patch',
        'machinedeployment',
        md,
        '--type',
        'merge',
        '-p',
        '{"spec":{"template":{"spec":{"version":"v1.32.0"}}}}',
      ]);
      assert.equal(edit.code, 1);
      assert.match(edit.stderr, /is invalid: spec: Forbidden: managed by Magnum .*openstack coe/);
      const gone = await kubectl(['delete', 'machinedeployment', md]);
      assert.equal(gone.code, 1);
      assert.match(
        gone.stderr,
        /Error from server \(Forbidden\).*openstack coe nodegroup delete prod default-worker/,
      );
      assert.equal(await ok(['get', 'md', md, '-o', 'jsonpath={.spec.replicas}']), '2');
      assert.equal(await ok(['get', 'kcp', kcp, '-o', 'jsonpath={.spec.replicas}']), '3');
      const c = await magnum();
      assert.deepEqual([c.node_count, c.master_count, c.status], [2, 3, 'CREATE_COMPLETE']);
    });

    void test('kubectl scale machinedeployment within the rules is a Magnum resize: node_count follows and the cluster updates', async () => {
      assert.match(await ok(['scale', 'machinedeployment', md, '--replicas', '3']), /scaled/);
      const during = await magnum();
      assert.equal(during.node_count, 3);
      assert.match(during.status, /^UPDATE_(IN_PROGRESS|COMPLETE)$/);
      await until('UPDATE_COMPLETE with 3 workers ready', async () => {
        const c = await magnum();
        const row = table(await ok(['get', 'md', md]))[0]!;
        return c.status === 'UPDATE_COMPLETE' && row.READY === '3' ? true : undefined;
      });
      const n = await nodes(await workloadKubeconfig('coe-kube'));
      assert.equal(
        n.size,
        7,
        `three masters, three node group workers and the hand-made one: ${JSON.stringify([...n.values()])} ${await ok(['get', 'machines'])}`,
      );
    });

    void test('kubectl scale down drains the chosen worker visibly in the workload cluster: cordoned, its pods evicted, then the node goes', async () => {
      const kubeconfig = await workloadKubeconfig('coe-kube');
      const workers = table(await ok(['get', 'machines', '-l', `cluster.x-k8s.io/deployment-name=${md}`]));
      assert.equal(workers.length, 3);
      const victim = workers[0]!.NAME!;
      // Put both CoreDNS replicas on the victim: cordon every other node, drain those that hold one.
      const others = [...(await nodes(kubeconfig)).keys()].filter((n) => n !== victim);
      for (const n of others) await ok(['cordon', n], kubeconfig);
      const dnsNodes = new Set(
        table(
          await ok(['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '-o', 'wide'], kubeconfig),
        ).map((p) => p.NODE!),
      );
      for (const n of dnsNodes)
        if (n !== victim)
          await ok(
            ['drain', n, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=60s'],
            kubeconfig,
          );
      await until('both CoreDNS replicas running on the victim', async () => {
        const pods = table(
          await ok(['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '-o', 'wide'], kubeconfig),
        );
        return pods.length === 2 && pods.every((p) => p.NODE === victim && p.STATUS === 'Running')
          ? pods
          : undefined;
      });
      for (const n of others) await ok(['uncordon', n], kubeconfig);

      const env = { ...cleanEnv(), HOME: dir, KUBECONFIG: kubeconfig };
      const watch = (what: string[]) => {
        const p = spawn('kubectl', ['get', ...what, '-w', '--output-watch-events', '--request-timeout=0'], {
          env,
        });
        const out = { text: '', stop: () => p.kill() };
        p.stdout.on('data', (d: Buffer) => (out.text += d.toString()));
        return out;
      };
      const nodeWatch = watch(['nodes']);
      const podWatch = watch(['pods', '-n', 'kube-system', '-o', 'wide']);
      try {
        await until('the watches to start', async () => (nodeWatch.text && podWatch.text ? true : undefined));
        // Cluster API's way to choose which machine a scale-down removes.
        await ok(['annotate', 'machine', victim, 'cluster.x-k8s.io/delete-machine=yes']);
        assert.match(await ok(['scale', 'machinedeployment', md, '--replicas', '2']), /scaled/);
        await until('the victim node deleted', async () =>
          new RegExp(`^DELETED\\s+${victim}\\s`, 'm').test(nodeWatch.text) ? true : undefined,
        );
        await until('UPDATE_COMPLETE', async () =>
          (await magnum()).status === 'UPDATE_COMPLETE' ? true : undefined,
        );
      } finally {
        nodeWatch.stop();
        podWatch.stop();
      }
      const nodeLines = nodeWatch.text.split('\n');
      const cordoned = nodeLines.findIndex((l) =>
        new RegExp(`^MODIFIED\\s+${victim}\\s+\\S*SchedulingDisabled`).test(l),
      );
      const deleted = nodeLines.findIndex((l) => new RegExp(`^DELETED\\s+${victim}\\s`).test(l));
      assert.ok(cordoned >= 0, `the node was cordoned:\n${nodeWatch.text}`);
      assert.ok(cordoned < deleted, 'cordoned before it went away');
      const evicted = podWatch.text
        .split('\n')
        .filter((l) => /^DELETED\s+coredns-/.test(l) && l.includes(victim));
      assert.equal(evicted.length, 2, `both CoreDNS pods were evicted from the node:\n${podWatch.text}`);
      const pods = table(
        await ok(['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '-o', 'wide'], kubeconfig),
      );
      assert.ok(pods.every((p) => p.NODE !== victim));
      assert.equal(
        table(await ok(['get', 'machines', '-l', `cluster.x-k8s.io/deployment-name=${md}`])).length,
        2,
      );
      assert.equal((await magnum()).node_count, 2);
    });

    void test('a tenant sees only its own project: another namespace is forbidden, -A lists only its own', async () => {
      const projects = (
        await user.request<{ projects: { id: string; name: string }[] }>('identity', 'GET', '/auth/projects')
      ).body.projects;
      assert.ok(projects.every((p) => p.id === projectId));
      const admin = new Session(
        loadCloudConfig({
          cloud: 'magnetar-admin',
          env: { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') },
        }),
        { maxRetries: 0 },
      );
      let adminProject: string;
      try {
        adminProject = (await admin.projectId())!;
      } finally {
        admin.close();
      }
      const other = await kubectl(['get', 'machines', '-n', adminProject]);
      assert.equal(other.code, 1);
      assert.match(other.stderr, /Error from server \(Forbidden\): machines.cluster.x-k8s.io is forbidden/);
      const everywhere = table(await ok(['get', 'machines', '-A']));
      assert.ok(everywhere.length > 0);
      assert.ok(everywhere.every((r) => r.NAMESPACE === projectId));
    });

    void test('the emulated workload API runs on a thread of its own; when that thread dies it comes back on the same endpoint', async () => {
      assert.ok(m.emulatorThread, 'a store file: the workload emulator has its own thread');
      const kubeconfig = await workloadKubeconfig('coe-kube');
      const before = await nodes(kubeconfig);
      await m.emulatorThread.kill();
      const back = await until('kubectl get nodes answering again after the thread died', async () => {
        const r = await kubectl(['get', 'nodes'], kubeconfig);
        return r.code === 0 ? table(r.stdout) : undefined;
      });
      assert.deepEqual(back.map((r) => r.NAME).sort(), [...before.keys()].sort());
      assert.ok(back.every((r) => r.STATUS === 'Ready'));
    });

    void test('after coe ca rotate, the old workload kubeconfig is refused and a new one works', async () => {
      const old = join(dir, 'old-kube');
      mkdirSync(old);
      copyFileSync(await workloadKubeconfig('coe-kube'), join(old, 'config'));
      const rotated = await coe(['ca', 'rotate', 'prod', '--wait'], { env: coeEnv(), cwd: dir });
      assert.equal(rotated.code, 0, rotated.stderr);
      const refused = await kubectl(['get', 'nodes'], join(old, 'config'));
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /certificate|x509|Unauthorized/i);
      const fresh = await nodes(await workloadKubeconfig('new-kube'));
      assert.equal(fresh.size, 6);
    });
  },
);
