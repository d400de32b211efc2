import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import {
  caCertHash,
  kubeadmApiVersion,
  renderCloudInit,
} from '../../src/controllers/kubeadm-config/cloud-init.ts';
import { ManualClock, bootstrapCommandOf, bootstrapTokenOf } from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { StorePki } from '../../src/workload/index.ts';

async function material() {
  const store = new SqliteStore({ path: ':memory:' });
  const pki = new StorePki({ store, clock: new ManualClock(), encryptionKey: Buffer.alloc(32, 7) });
  const m = await pki.kubeadmMaterial({ namespace: 'p1', name: 'c1-abcd1234', displayName: 'c1' });
  await store.close();
  return m;
}

function filesOf(data: string): Map<string, string> {
  assert.ok(data.startsWith('## template: jinja\n#cloud-config\n'));
  const doc = parse(data) as { write_files: { path: string; content: string }[]; runcmd: string[] };
  return new Map(doc.write_files.map((f) => [f.path, f.content]));
}

void test('the first control plane machine gets the cluster CAs and a kubeadm init configuration for its version', async () => {
  const m = await material();
  const data = renderCloudInit({
    role: 'init',
    kubernetesVersion: 'v1.31.4',
    clusterName: 'c1-abcd1234',
    controlPlaneEndpoint: { host: '172.24.4.20', port: 6443 },
    podSubnet: '10.100.0.0/16',
    serviceSubnet: '10.254.0.0/16',
    pki: [
      { path: 'ca.crt', content: m.ca.certPem },
      { path: 'ca.key', content: m.ca.keyPem },
      { path: 'sa.pub', content: m.serviceAccount.certPem },
    ],
    spec: {},
  });
  const files = filesOf(data);
  assert.match(files.get('/etc/kubernetes/pki/ca.crt')!, /BEGIN CERTIFICATE/);
  assert.match(files.get('/etc/kubernetes/pki/ca.key')!, /PRIVATE KEY/);
  const docs = parseAllDocuments(files.get('/run/kubeadm/kubeadm.yaml')!).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  const cc = docs.find((d) => d.kind === 'ClusterConfiguration')!;
  assert.equal(cc.apiVersion, 'kubeadm.k8s.io/v1beta4');
  assert.equal(cc.kubernetesVersion, 'v1.31.4');
  assert.equal(cc.controlPlaneEndpoint, '172.24.4.20:6443');
  assert.deepEqual(cc.networking, {
    dnsDomain: 'cluster.local',
    podSubnet: '10.100.0.0/16',
    serviceSubnet: '10.254.0.0/16',
  });
  assert.ok(docs.some((d) => d.kind === 'InitConfiguration'));
  assert.equal(bootstrapCommandOf(data), 'init');
  assert.equal(bootstrapTokenOf(data), undefined);
  assert.match(
    data,
    /kubeadm init --config \/run\/kubeadm\/kubeadm.yaml && echo success > \/run\/cluster-api\/bootstrap-success.complete/,
  );
});

void test('a worker joins with a bootstrap token and the CA hash kubeadm checks, and carries no keys', async () => {
  const m = await material();
  const data = renderCloudInit({
    role: 'join-worker',
    kubernetesVersion: 'v1.30.6',
    clusterName: 'c1',
    controlPlaneEndpoint: { host: '172.24.4.20', port: 6443 },
    caCertPem: m.ca.certPem,
    token: 'abcdef.0123456789abcdef',
    spec: {
      joinConfiguration: {
        nodeRegistration: {
          kubeletExtraArgs: [{ name: 'node-labels', value: 'magnum.openstack.org/role=worker' }],
        },
      },
    },
  });
  const files = filesOf(data);
  assert.ok(![...files.keys()].some((p) => p.endsWith('.key')), 'no private keys on workers');
  const join = parse(files.get('/run/kubeadm/kubeadm-join-config.yaml')!) as {
    apiVersion: string;
    discovery: { bootstrapToken: { apiServerEndpoint: string; token: string; caCertHashes: string[] } };
    nodeRegistration: { kubeletExtraArgs: Record<string, string> };
    controlPlane?: unknown;
  };
  assert.equal(join.apiVersion, kubeadmApiVersion('v1.30.6'));
  assert.equal(join.apiVersion, 'kubeadm.k8s.io/v1beta3');
  assert.equal(join.discovery.bootstrapToken.apiServerEndpoint, '172.24.4.20:6443');
  assert.equal(join.discovery.bootstrapToken.token, 'abcdef.0123456789abcdef');
  assert.equal(join.discovery.bootstrapToken.caCertHashes[0], caCertHash(m.ca.certPem));
  assert.equal(join.nodeRegistration.kubeletExtraArgs['node-labels'], 'magnum.openstack.org/role=worker');
  assert.equal(join.controlPlane, undefined);
  assert.equal(bootstrapTokenOf(data), 'abcdef.0123456789abcdef');
  assert.equal(bootstrapCommandOf(data), 'join');
});

void test('the CA hash is the one openssl computes from the CA public key', async (t) => {
  let openssl = true;
  try {
    execFileSync('openssl', ['version']);
  } catch {
    openssl = false;
  }
  if (!openssl) return t.skip('openssl not installed');
  const m = await material();
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-ca-'));
  writeFileSync(join(dir, 'ca.crt'), m.ca.certPem);
  const der = execFileSync('openssl', ['x509', '-in', join(dir, 'ca.crt'), '-pubkey', '-noout']);
  writeFileSync(join(dir, 'pub.pem'), der);
  const spki = execFileSync('openssl', ['pkey', '-pubin', '-in', join(dir, 'pub.pem'), '-outform', 'DER']);
  const hex = execFileSync('openssl', ['dgst', '-sha256', '-hex'], { input: spki })
    .toString()
    .trim()
    .split('= ')[1];
  assert.equal(caCertHash(m.ca.certPem), `sha256:${hex}`);
});
