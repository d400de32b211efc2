import 'reflect-metadata';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ManualClock } from '../../src/domain/index.ts';
import { generateKeyAndCsr } from '../../src/cli/csr.ts';
import { driveClock, startFixture, type CoeFixture } from './fixture.ts';

let f: CoeFixture;
let uuid: string;
before(async () => {
  f = await startFixture();
  const r = await f.coe([
    'cluster',
    'create',
    '--cluster-template',
    'k8s-v1.32',
    '--master-count',
    '1',
    '--master-flavor',
    'm1.medium',
    '--node-count',
    '1',
    '--flavor',
    'm1.medium',
    '--keypair',
    'my-keypair',
    'prod',
  ]);
  assert.equal(r.code, 0, r.stderr);
  uuid = /[0-9a-f-]{36}/.exec(r.stdout)![0];
  await f.completeAll({ apiAddress: 'https://10.0.0.5:6443' });
});
after(() => f.close());

interface Kubeconfig {
  clusters: { cluster: { 'certificate-authority-data': string; server: string }; name: string }[];
  contexts: { context: { cluster: string; user: string }; name: string }[];
  'current-context': string;
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}

const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** Verify `certPem` against `caPem` with openssl when installed, else with node:crypto. */
function verifyChain(dir: string, caPem: string, certPem: string): void {
  const which = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  if (which.status === 0) {
    writeFileSync(join(dir, 'verify-ca.pem'), caPem);
    writeFileSync(join(dir, 'verify-cert.pem'), certPem);
    const r = spawnSync(
      'openssl',
      ['verify', '-CAfile', join(dir, 'verify-ca.pem'), join(dir, 'verify-cert.pem')],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /: OK/);
  }
  const ca = new X509Certificate(caPem);
  const cert = new X509Certificate(certPem);
  assert.ok(cert.verify(ca.publicKey), 'certificate signed by the cluster CA');
  assert.ok(cert.checkIssued(ca));
}

test('cluster config creates the directory and writes a kubeconfig whose certificate verifies against the CA', async () => {
  const dir = join(f.dataDir, 'kube', 'prod');
  const r = await f.coe(['cluster', 'config', 'prod', '--dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `export KUBECONFIG=${join(dir, 'config')}\n`);
  const text = readFileSync(join(dir, 'config'), 'utf8');
  assert.equal(statSync(join(dir, 'config')).mode & 0o777, 0o600);
  const kc = parseYaml(text) as Kubeconfig;
  assert.equal(kc['current-context'], 'default');
  assert.deepEqual(kc.contexts, [{ context: { cluster: 'prod', user: 'admin' }, name: 'default' }]);
  assert.equal(kc.clusters[0]!.name, 'prod');
  assert.equal(kc.clusters[0]!.cluster.server, 'https://10.0.0.5:6443');
  const caPem = unb64(kc.clusters[0]!.cluster['certificate-authority-data']);
  const certPem = unb64(kc.users[0]!.user['client-certificate-data']);
  const keyPem = unb64(kc.users[0]!.user['client-key-data']);
  assert.match(keyPem, /^-----BEGIN RSA PRIVATE KEY-----/);
  verifyChain(f.dataDir, caPem, certPem);
  const cert = new X509Certificate(certPem);
  assert.match(cert.subject, /CN=admin/);
  assert.match(cert.subject, /O=system:masters/);
  assert.ok(
    cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(keyPem)),
    'key matches the certificate',
  );
  // The CA in the kubeconfig is the one `ca show` prints.
  const shown = await f.coe(['ca', 'show', 'prod']);
  assert.equal(shown.stdout.trim(), caPem.trim());
});

test('cluster config refuses to overwrite without --force, and overwrites with it', async () => {
  const dir = join(f.dataDir, 'kube', 'prod');
  const before = readFileSync(join(dir, 'config'), 'utf8');
  const refused = await f.coe(['cluster', 'config', 'prod', '--dir', dir]);
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, `coe: File ${join(dir, 'config')} exists, aborting.\n`);
  assert.equal(readFileSync(join(dir, 'config'), 'utf8'), before);
  const forced = await f.coe(['cluster', 'config', 'prod', '--dir', dir, '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.notEqual(readFileSync(join(dir, 'config'), 'utf8'), before, 'a new key and certificate');
});

test('cluster config --output-certs also writes key, cert and CA files; --dir is relative to the working directory', async () => {
  const cwd = join(f.dataDir, 'work');
  mkdirSync(cwd);
  const r = await f.coe(['cluster', 'config', 'prod', '--dir', 'certs', '--output-certs'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `export KUBECONFIG=${join(cwd, 'certs', 'config')}\n`);
  for (const name of ['key.pem', 'cert.pem', 'ca.pem', 'config'])
    assert.ok(existsSync(join(cwd, 'certs', name)), name);
  verifyChain(
    f.dataDir,
    readFileSync(join(cwd, 'certs', 'ca.pem'), 'utf8'),
    readFileSync(join(cwd, 'certs', 'cert.pem'), 'utf8'),
  );
});

test('cluster config prints setenv for csh users', async () => {
  const dir = join(f.dataDir, 'kube', 'csh');
  const r = await f.coe(['cluster', 'config', 'prod', '--dir', dir], { env: { SHELL: '/bin/tcsh' } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `setenv KUBECONFIG ${join(dir, 'config')}\n`);
});

test('cluster config of a cluster without an API address yet is an error that says to wait', async () => {
  const r0 = await f.coe([
    'cluster',
    'create',
    '--cluster-template',
    'k8s-v1.32',
    '--master-count',
    '1',
    '--master-flavor',
    'm1.medium',
    '--node-count',
    '1',
    '--flavor',
    'm1.medium',
    '--keypair',
    'my-keypair',
    'young',
  ]);
  assert.equal(r0.code, 0, r0.stderr);
  const dir = join(f.dataDir, 'kube', 'young');
  const r = await f.coe(['cluster', 'config', 'young', '--dir', dir]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'coe: cluster young has no API address yet (status CREATE_IN_PROGRESS); try again when it is CREATE_COMPLETE\n',
  );
  assert.ok(!existsSync(join(dir, 'config')));
  await f.completeAll();
});

test('ca sign prints a certificate for a CSR file that verifies against the CA', async () => {
  const { csr } = await generateKeyAndCsr({ cn: 'jane', o: 'developers' });
  writeFileSync(join(f.dataDir, 'jane.csr'), csr);
  const r = await f.coe(['ca', 'sign', 'prod', 'jane.csr']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
  const ca = (await f.coe(['ca', 'show', 'prod'])).stdout;
  verifyChain(f.dataDir, ca, r.stdout);
  assert.match(new X509Certificate(r.stdout).subject, /CN=jane/);
});

test('ca show of an unknown cluster fails with one line', async () => {
  const r = await f.coe(['ca', 'show', 'nope']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^coe: Cluster nope could not be found \(HTTP 404\)/);
});

test('ca rotate --wait replaces the CA: old certificates no longer verify', async () => {
  const oldCa = (await f.coe(['ca', 'show', 'prod'])).stdout;
  const clock = new ManualClock();
  const run = f.start(['ca', 'rotate', 'prod', '--wait'], { clock });
  await run.stderr.until(/cluster prod: UPDATE_IN_PROGRESS/);
  assert.equal(
    run.stdout.text,
    `Request to rotate the CA certificate for cluster ${uuid} has been accepted.\n`,
  );
  await f.completeAll();
  assert.equal(await driveClock(clock, run, 5000), 0, run.stderr.text);
  const newCa = (await f.coe(['ca', 'show', 'prod'])).stdout;
  assert.notEqual(newCa, oldCa);
  const dir = join(f.dataDir, 'kube', 'rotated');
  assert.equal((await f.coe(['cluster', 'config', 'prod', '--dir', dir])).code, 0);
  const kc = parseYaml(readFileSync(join(dir, 'config'), 'utf8')) as Kubeconfig;
  const cert = new X509Certificate(unb64(kc.users[0]!.user['client-certificate-data']));
  assert.ok(cert.verify(new X509Certificate(newCa).publicKey));
  assert.ok(!cert.verify(new X509Certificate(oldCa).publicKey));
});
