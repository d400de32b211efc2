import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startFixture, type CoeFixture } from './fixture.ts';

/**
 * `coe` against the real `openstack coe` client on the same Magnetar: the same output for
 * the same state, and kubeconfigs that agree. Skips without the client, unless
 * MAGNETAR_REQUIRE_REAL_CLIENTS=1 (CI), where a missing client is a failure.
 */
const hasOpenstack = spawnSync('openstack', ['--version'], { encoding: 'utf8' }).status === 0;
const required = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const skip =
  !hasOpenstack && !required
    ? 'the openstack client (python3-openstackclient, python3-magnumclient) is not installed'
    : false;

let f: CoeFixture;

function openstack(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Asynchronous: the server answering it runs in this process.
    execFile(
      'openstack',
      args,
      { cwd, env: { ...process.env, ...f.env(), PATH: process.env.PATH ?? '' }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

before(async () => {
  if (skip) return;
  assert.ok(hasOpenstack, 'MAGNETAR_REQUIRE_REAL_CLIENTS=1 but the openstack client is not installed');
  f = await startFixture();
  const r = await f.coe([
    'cluster',
    'create',
    '--cluster-template',
    'k8s-v1.32',
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
    '--labels',
    'team=a',
    '--merge-labels',
    'prod',
  ]);
  assert.equal(r.code, 0, r.stderr);
  await f.completeAll();
  const ng = await f.coe([
    'nodegroup',
    'create',
    '--node-count',
    '2',
    '--labels',
    'availability_zone=AZ-2',
    'prod',
    'az2',
  ]);
  assert.equal(ng.code, 0, ng.stderr);
  await f.completeAll();
});
after(async () => {
  if (f) await f.close();
});

// Each openstack call costs seconds of CPU: one command per output shape.
const SAME_OUTPUT = [
  'cluster template show k8s-v1.32',
  'cluster template list -f json -c tags -c name',
  'cluster list',
  'cluster show prod',
  'cluster show prod -f yaml',
  'cluster list -f value -c name -c uuid',
  'nodegroup list prod --role worker',
  'nodegroup show prod az2 -f json',
];

test('coe prints exactly what openstack coe prints for the same state', { skip }, async () => {
  for (const cmd of SAME_OUTPUT) {
    const args = cmd.split(' ');
    const theirs = await openstack(['coe', ...args], f.dataDir);
    const ours = await f.coe(args);
    assert.equal(theirs.code, 0, `openstack coe ${cmd}: ${theirs.stderr}`);
    assert.equal(ours.code, 0, `coe ${cmd}: ${ours.stderr}`);
    assert.equal(ours.stdout, theirs.stdout, `coe ${cmd}`);
  }
});

test('errors read the same: message, status and request id, exit 1', { skip }, async () => {
  const theirs = await openstack(['coe', 'cluster', 'show', 'nope'], f.dataDir);
  const ours = await f.coe(['cluster', 'show', 'nope']);
  assert.equal(theirs.code, 1);
  assert.equal(ours.code, 1);
  const strip = (s: string) =>
    s
      .replace(/^coe: /, '')
      .replace(/req-[0-9a-f-]+/, 'req-X')
      .trim();
  assert.equal(strip(ours.stderr), strip(theirs.stderr));
});

test('cluster config from both clients gives kubeconfigs for the same server and CA', { skip }, async () => {
  const theirs = await openstack(['coe', 'cluster', 'config', 'prod', '--dir', f.dataDir], f.dataDir);
  assert.equal(theirs.code, 0, theirs.stderr);
  const oursDir = join(f.dataDir, 'ours');
  const ours = await f.coe(['cluster', 'config', 'prod', '--dir', oursDir]);
  assert.equal(ours.code, 0, ours.stderr);
  assert.equal(theirs.stdout.trim(), `export KUBECONFIG=${join(f.dataDir, 'config')}`);
  assert.equal(ours.stdout.trim(), `export KUBECONFIG=${join(oursDir, 'config')}`);
  type Kc = {
    clusters: { cluster: Record<string, string>; name: string }[];
    contexts: unknown;
    users: { name: string; user: Record<string, string> }[];
    'current-context': string;
  };
  const a = parseYaml(readFileSync(join(f.dataDir, 'config'), 'utf8')) as Kc;
  const b = parseYaml(readFileSync(join(oursDir, 'config'), 'utf8')) as Kc;
  assert.deepEqual(b.clusters, a.clusters, 'same cluster entry, CA data included');
  assert.deepEqual(b.contexts, a.contexts);
  assert.equal(b['current-context'], a['current-context']);
  assert.deepEqual(
    b.users.map((u) => u.name),
    a.users.map((u) => u.name),
  );
  const ca = new X509Certificate(
    Buffer.from(a.clusters[0]!.cluster['certificate-authority-data']!, 'base64'),
  );
  for (const kc of [a, b]) {
    const cert = new X509Certificate(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64'));
    assert.ok(cert.verify(ca.publicKey));
    assert.equal(
      cert.subject,
      new X509Certificate(Buffer.from(a.users[0]!.user['client-certificate-data']!, 'base64')).subject,
    );
  }
});
