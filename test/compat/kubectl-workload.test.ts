import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import {
  CapiAnnotations,
  CapiTypes,
  silentLogger,
  systemClock,
  type CapiClusterObject,
} from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { StorePki, WorkloadAccess, WorkloadEmulator } from '../../src/workload/index.ts';
import { createCapiCluster, createMachine, PROJECT } from '../workload/fixtures.ts';

/**
 * The real `kubectl` against an emulated workload cluster, with a kubeconfig from the cluster
 * PKI: listing nodes, pods and namespaces, version, cordon and a drain that has to wait for
 * the CoreDNS disruption budget, and refusal of a client certificate from another CA.
 * Real time (kubectl waits in real time); the emulation's delays are shortened.
 * Skips when kubectl is missing, unless MAGNETAR_REQUIRE_REAL_CLIENTS=1, where it fails.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const installed = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const skip = installed
  ? false
  : required
    ? false
    : 'kubectl is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)';

const CLUSTER = 'demo-5e6f7a8b';
const ref = { namespace: PROJECT, name: CLUSTER, displayName: 'demo' };

let dir: string;
let store: SqliteStore;
let pki: StorePki;
let emulator: WorkloadEmulator;
let endpoint: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(args: string[], kubeconfig = join(dir, 'config')): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), '--request-timeout=20s', ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await kubectl(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Rows of a kubectl table: header → column index. */
function table(out: string): Record<string, string>[] {
  const lines = out.trimEnd().split('\n');
  const header = lines[0]!;
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  return lines
    .slice(1)
    .map((line) =>
      Object.fromEntries(
        starts.map((c, i) => [c.name, line.slice(c.at, starts[i + 1]?.at ?? line.length).trim()]),
      ),
    );
}

void describe('kubectl against an emulated workload cluster', { skip, timeout: 5 * 60_000 }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'magnetar-kubectl-'));
    store = new SqliteStore({ path: ':memory:' });
    pki = new StorePki({ store, clock: systemClock, encryptionKey: randomBytes(32) });
    emulator = new WorkloadEmulator({
      store,
      pki,
      clock: systemClock,
      log: silentLogger,
      timing: { nodeReadyMs: 300, podStartMs: 300 },
    });
    await emulator.start();
    await createCapiCluster(store, CLUSTER, { displayName: 'demo' });
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'demo-cp-0',
      controlPlane: true,
      zone: 'az-1',
      ip: '10.0.0.11',
      boot: { role: 'init' },
    });
    const capi = await until('the endpoint annotation', async () => {
      const c = await store.get<CapiClusterObject>(CapiTypes.Cluster, PROJECT, CLUSTER);
      return c?.metadata.annotations[CapiAnnotations.workloadEndpoint] ? c : undefined;
    });
    endpoint = capi.metadata.annotations[CapiAnnotations.workloadEndpoint]!;
    const client = (await new WorkloadAccess({ pki, clock: systemClock }).forCluster(capi))!;
    await until('the control-plane node to be Ready', async () =>
      (await client.getNode('demo-cp-0'))?.status.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      )
        ? true
        : undefined,
    );
    await client.createBootstrapToken({ id: 'k8stst', secret: '0123456789abcdef', ttlSeconds: 900 });
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'demo-md-0',
      controlPlane: false,
      zone: 'az-2',
      ip: '10.0.0.21',
      boot: { role: 'join', token: 'k8stst.0123456789abcdef' },
    });
    await until('the worker to be Ready', async () =>
      (await client.getNode('demo-md-0'))?.status.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      )
        ? true
        : undefined,
    );
    writeFileSync(join(dir, 'config'), await pki.adminKubeconfig(ref, endpoint), { mode: 0o600 });
  });

  after(async () => {
    await emulator?.stop();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("kubectl get nodes lists every node Ready with the machines' version", async () => {
    const rows = table(await ok(['get', 'nodes']));
    assert.deepEqual(
      rows.map((r) => r.NAME),
      ['demo-cp-0', 'demo-md-0'],
    );
    for (const r of rows) {
      assert.equal(r.STATUS, 'Ready');
      assert.equal(r.VERSION, 'v1.31.4');
    }
    assert.equal(rows[0]!.ROLES, 'control-plane');
    assert.equal(rows[1]!.ROLES, '<none>');
    const wide = table(await ok(['get', 'nodes', '-o', 'wide']));
    assert.equal(wide[0]!['INTERNAL-IP'], '10.0.0.11');
    assert.equal(wide[0]!['OS-IMAGE'], 'Magnetar emulated node');
  });

  test('kubectl get pods -A shows the system pods running', async () => {
    const out = await ok(['get', 'pods', '-A']);
    assert.match(out.split('\n')[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    const rows = table(out);
    const names = rows.map((r) => r.NAME);
    for (const n of [
      'etcd-demo-cp-0',
      'kube-apiserver-demo-cp-0',
      'kube-controller-manager-demo-cp-0',
      'kube-scheduler-demo-cp-0',
    ])
      assert.ok(names.includes(n), n);
    assert.equal(rows.filter((r) => r.NAME?.startsWith('coredns-')).length, 2);
    assert.equal(rows.filter((r) => r.NAME?.startsWith('kube-proxy-')).length, 2);
    assert.ok(
      rows.every((r) => r.NAMESPACE === 'kube-system' && r.STATUS === 'Running' && r.READY === '1/1'),
    );
  });

  test('kubectl get namespaces and kubectl version', async () => {
    const ns = table(await ok(['get', 'namespaces'])).map((r) => r.NAME);
    assert.deepEqual(ns, ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    const v = await ok(['version']);
    assert.match(v, /Server Version: v1\.31\.4/);
  });

  test('kubectl apply creates and then updates a ConfigMap the user keeps in the cluster', async () => {
    const file = join(dir, 'cm.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n  namespace: default\ndata:\n  mode: prod\n',
    );
    assert.match(await ok(['apply', '-f', file]), /configmap\/app-settings created/);
    writeFileSync(
      file,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n  namespace: default\ndata:\n  mode: dev\n',
    );
    assert.match(await ok(['apply', '-f', file]), /configmap\/app-settings configured/);
    assert.equal(await ok(['get', 'configmap', 'app-settings', '-o', 'jsonpath={.data.mode}']), 'dev');
  });

  test('kubectl create namespace, configmap and secret (protobuf bodies) create what kubectl get then shows', async () => {
    assert.match(await ok(['create', 'namespace', 'shop']), /namespace\/shop created/);
    assert.match(
      await ok(['-n', 'shop', 'create', 'configmap', 'settings', '--from-literal=mode=prod']),
      /configmap\/settings created/,
    );
    assert.match(
      await ok(['-n', 'shop', 'create', 'secret', 'generic', 'db', '--from-literal=password=s3cr3t']),
      /secret\/db created/,
    );
    assert.ok(table(await ok(['get', 'namespaces'])).some((r) => r.NAME === 'shop'));
    assert.equal(
      await ok(['-n', 'shop', 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}']),
      'prod',
    );
    const password = await ok(['-n', 'shop', 'get', 'secret', 'db', '-o', 'jsonpath={.data.password}']);
    assert.equal(Buffer.from(password, 'base64').toString(), 's3cr3t');
    const again = await kubectl(['create', 'namespace', 'shop']);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /AlreadyExists|already exists/);
    // a kind the emulator does not read as protobuf is refused in words, and nothing is created
    const deploy = await kubectl(['-n', 'shop', 'create', 'deployment', 'web', '--image=nginx']);
    assert.notEqual(deploy.code, 0);
    assert.match(deploy.stderr, /does not allow this method|unknown format/);
    assert.match(await ok(['delete', 'namespace', 'shop']), /namespace "shop" deleted/);
  });

  test('kubectl cordon marks the node unschedulable', async () => {
    assert.match(await ok(['cordon', 'demo-cp-0']), /node\/demo-cp-0 cordoned/);
    const rows = table(await ok(['get', 'nodes']));
    assert.equal(rows.find((r) => r.NAME === 'demo-cp-0')?.STATUS, 'Ready,SchedulingDisabled');
  });

  test('kubectl drain evicts CoreDNS as its disruption budget allows and leaves DaemonSet pods', async () => {
    const r = await kubectl([
      'drain',
      'demo-cp-0',
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--timeout=90s',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const all = r.stdout + r.stderr;
    assert.match(all, /ignoring DaemonSet-managed Pods: kube-system\/kube-proxy-/);
    assert.match(
      all,
      /violate the pod's disruption budget/,
      'the second replica had to wait for the first replacement',
    );
    assert.match(all, /node\/demo-cp-0 drained/);
    // drain returns once the evicted pods are gone; the last replacement may still be starting.
    await until('both CoreDNS replicas running on the worker', async () => {
      const coredns = table(await ok(['get', 'pods', '-A', '-o', 'wide'])).filter((x) =>
        x.NAME?.startsWith('coredns-'),
      );
      return coredns.length === 2 && coredns.every((x) => x.NODE === 'demo-md-0' && x.STATUS === 'Running')
        ? true
        : undefined;
    });
    assert.match(await ok(['uncordon', 'demo-cp-0']), /uncordoned/);
  });

  test('a kubeconfig whose client certificate comes from another CA is refused', async () => {
    const foreignStore = new SqliteStore({ path: ':memory:' });
    try {
      const foreign = new StorePki({
        store: foreignStore,
        clock: systemClock,
        encryptionKey: randomBytes(32),
      });
      const elsewhere = { namespace: 'x', name: 'elsewhere', displayName: 'elsewhere' };
      const other = parseYaml(await foreign.adminKubeconfig(elsewhere, endpoint)) as {
        clusters: { cluster: Record<string, string> }[];
      };
      // Trust the real server, but present a certificate the cluster never issued.
      other.clusters[0]!.cluster['certificate-authority-data'] = Buffer.from(
        (await pki.caPem(ref)) + '\n',
      ).toString('base64');
      writeFileSync(join(dir, 'foreign'), stringify(other), { mode: 0o600 });
      const r = await kubectl(['get', 'nodes'], join(dir, 'foreign'));
      assert.notEqual(r.code, 0);
      assert.doesNotMatch(r.stdout, /demo-cp-0/);
      // With the foreign CA as its trust anchor, kubectl refuses the server itself.
      writeFileSync(join(dir, 'foreign-ca'), await foreign.adminKubeconfig(elsewhere, endpoint), {
        mode: 0o600,
      });
      const r2 = await kubectl(['get', 'nodes'], join(dir, 'foreign-ca'));
      assert.notEqual(r2.code, 0);
      assert.match(r2.stderr, /certificate|x509/i);
    } finally {
      await foreignStore.close();
    }
  });
});
