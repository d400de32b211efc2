import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testConfig } from '../../src/cli/load-config.ts';
import { runCoe } from '../../src/cli/coe.ts';
import { startMagnetar, type Magnetar } from '../../src/main.ts';
import { Capture } from '../cli/helpers.ts';

/**
 * The real kubectl against the management API, configured only by the kubeconfig that
 * `coe management config` writes (exec plugin `coe management token`, TLS front, the project
 * as namespace): apply, get with the CRD columns, scale, label, delete, and `get -w`.
 *
 * Controllers are off: the objects are the test's own, so what kubectl shows is exactly what
 * the API served. The article's end-to-end run on a cluster built through the Magnum API
 * (machines replaced by their MachineSet, an applied worker joining, scaling within the
 * operator's rules) is in kubectl-magnum.test.ts.
 *
 * Skips when kubectl is missing, unless MAGNETAR_REQUIRE_REAL_CLIENTS=1.
 */

const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const installed = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const skip = installed
  ? false
  : required
    ? false
    : 'kubectl is not installed (MAGNETAR_REQUIRE_REAL_CLIENTS=1 makes this fail)';
const COE = fileURLToPath(new URL('../../bin/coe.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let m: Magnetar;
let dir: string;

function kubectl(args: string[]): Promise<Run> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OS_') && k !== 'KUBECONFIG'),
  );
  const env = { ...clean, HOME: dir, KUBECONFIG: join(dir, 'kube', 'config') };
  return new Promise((resolve) => {
    execFile('kubectl', args, { env, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await kubectl(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const MANIFEST = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: workers
  labels: {cluster.x-k8s.io/cluster-name: demo}
spec:
  clusterName: demo
  replicas: 1
  selector: {matchLabels: {pool: workers}}
  template:
    metadata: {labels: {pool: workers}}
    spec:
      clusterName: demo
      version: v1.31.4
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: workers}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachineTemplate, name: workers}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: extra-node
  labels: {cluster.x-k8s.io/cluster-name: demo}
spec:
  clusterName: demo
  version: v1.31.4
  bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: extra-node}}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachine, name: extra-node}
`;

void describe('kubectl against the management API', { skip, timeout: 10 * 60_000 }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'magnetar-kubectl-'));
    m = await startMagnetar({ config: testConfig({ dataDir: dir }), controllers: false, logger: false });
  });
  after(async () => {
    await m?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void test('kubectl is installed', () => {
    assert.ok(installed, 'kubectl is required when MAGNETAR_REQUIRE_REAL_CLIENTS=1');
  });

  void test('coe management config writes a kubeconfig kubectl authenticates with', async () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await runCoe(
      ['node', 'coe', 'management', 'config', '--dir', 'kube', '--exec-command', COE],
      {
        env: {
          OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'),
          OS_CLOUD: 'magnetar-demo-sa',
          HOME: dir,
          SHELL: '/bin/bash',
        },
        cwd: dir,
        stdout,
        stderr,
      },
    );
    assert.equal(code, 0, stderr.text);
    assert.match(stdout.text, /^export KUBECONFIG=.*kube\/config\n$/);
    const r = await kubectl(['get', 'machines']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /No resources found in [0-9a-f]{32} namespace/);
  });

  void test('kubectl apply -f creates the objects, and get shows the CRD columns', async () => {
    writeFileSync(join(dir, 'manifest.yaml'), MANIFEST);
    const applied = await ok(['apply', '-f', join(dir, 'manifest.yaml')]);
    assert.match(applied, /machinedeployment.cluster.x-k8s.io\/workers created/);
    assert.match(applied, /machine.cluster.x-k8s.io\/extra-node created/);
    const machines = await ok(['get', 'machines']);
    assert.match(machines, /^NAME\s+CLUSTER\s+NODENAME\s+PROVIDERID\s+PHASE\s+AGE\s+VERSION\n/);
    assert.match(machines, /\nextra-node\s+demo\s+\d+s\s+v1\.31\.4\n/);
    const again = await ok(['apply', '-f', join(dir, 'manifest.yaml')]);
    assert.match(again, /workers unchanged|workers configured/);
  });

  void test('kubectl scale machinedeployment changes the replicas, and get -w shows the update', async () => {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('OS_') && k !== 'KUBECONFIG'),
    );
    const w = spawn('kubectl', ['get', 'machinedeployments', '-w', '--request-timeout=60s'], {
      env: { ...clean, HOME: dir, KUBECONFIG: join(dir, 'kube', 'config') },
    });
    let seen = '';
    const gotTwo = new Promise<void>((resolve) => {
      w.stdout.on('data', (d: Buffer) => {
        seen += d.toString();
        if (/workers\s+demo\s+2\s/.test(seen)) resolve();
      });
    });
    try {
      await new Promise<void>((resolve) => {
        const check = () => (/workers\s+demo\s+1\s/.test(seen) ? resolve() : setTimeout(check, 50));
        check();
      });
      assert.match(await ok(['scale', 'machinedeployment', 'workers', '--replicas', '2']), /scaled/);
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no update in: ${seen}`)), 30_000).unref(),
      );
      await Promise.race([gotTwo, timeout]);
    } finally {
      w.kill();
    }
    assert.match(await ok(['get', 'md', 'workers', '-o', 'jsonpath={.spec.replicas}']), /^2$/);
  });

  void test('kubectl label and delete machine work; a missing machine is NotFound', async () => {
    await ok(['label', 'machine', 'extra-node', 'role=spare']);
    assert.match(
      await ok(['get', 'machines', '-l', 'role=spare', '-o', 'name']),
      /machine.cluster.x-k8s.io\/extra-node/,
    );
    assert.match(await ok(['delete', 'machine', 'extra-node']), /"extra-node" deleted/);
    const gone = await kubectl(['get', 'machine', 'extra-node']);
    assert.equal(gone.code, 1);
    assert.match(
      gone.stderr,
      /Error from server \(NotFound\): machines.cluster.x-k8s.io "extra-node" not found/,
    );
  });

  void test('kubectl get on an unknown resource type fails with a client error, never a 500', async () => {
    const r = await kubectl(['get', 'widgets']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the server doesn't have a resource type "widgets"/);
  });
});
