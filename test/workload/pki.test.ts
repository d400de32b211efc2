import 'reflect-metadata';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate, webcrypto } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { parse as parseYaml } from 'yaml';
import { InputError, ManualClock, NotAllowedError, type PkiClusterRef } from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { loadOrCreateKey, StorePki } from '../../src/workload/index.ts';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const REQUIRE_REAL = process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1';
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (!hasOpenssl && REQUIRE_REAL)
  throw new Error('openssl is required (MAGNETAR_REQUIRE_REAL_CLIENTS=1) but was not found');
const opensslSkip = hasOpenssl ? false : 'openssl is not installed';

const DAY = 24 * 60 * 60 * 1000;
const ref: PkiClusterRef = { namespace: 'proj-1', name: 'prod-1a2b3c4d', displayName: 'prod' };

let dir: string;
let store: SqliteStore;
let clock: ManualClock;
let pki: StorePki;
let key: Buffer;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'magnetar-pki-'));
  key = loadOrCreateKey(dir);
  store = new SqliteStore({ path: ':memory:' });
  clock = new ManualClock(Date.now());
  pki = new StorePki({ store, clock, encryptionKey: key });
});

after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function openssl(args: string[], input?: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('openssl', args, { cwd: dir, input, encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function rsaKeys(bits = 2048): Promise<CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: bits,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  );
}

async function csrPem(name: string, extensions: x509.Extension[] = [], bits = 2048): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: await rsaKeys(bits),
    signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    extensions,
  });
  return csr.toString('pem');
}

function write(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

describe('cluster CAs', () => {
  test('are created on first use as Cluster API secrets with the private keys encrypted', async () => {
    const caPem = await pki.caPem(ref);
    assert.match(caPem, /^-----BEGIN CERTIFICATE-----/);
    for (const suffix of ['ca', 'etcd', 'proxy', 'sa']) {
      const s = await store.get('Secret', ref.namespace, `${ref.name}-${suffix}`);
      assert.ok(s, `secret ${suffix} exists`);
      assert.equal(s.apiVersion, 'v1');
      assert.equal(s.kind, 'Secret');
      assert.equal(s.metadata.labels['cluster.x-k8s.io/cluster-name'], ref.name);
      assert.equal(s.spec.type, 'cluster.x-k8s.io/secret');
      const data = s.spec.data as Record<string, string>;
      const decoded = Object.values(data).map((v) => Buffer.from(v, 'base64').toString('utf8'));
      assert.ok(!JSON.stringify(s).includes('PRIVATE KEY'), 'no clear private key in the stored object');
      assert.ok(
        !decoded.some((v) => v.includes('PRIVATE KEY')),
        'no base64 private key in the stored object',
      );
    }
    const ca = new X509Certificate(caPem);
    assert.equal(ca.subject, 'CN=prod');
    assert.ok(ca.ca);
    assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  });

  test('each kind of CA is distinct and stable across calls', async () => {
    const [k, e, f] = await Promise.all([
      pki.caPem(ref, 'kubernetes'),
      pki.caPem(ref, 'etcd'),
      pki.caPem(ref, 'front_proxy'),
    ]);
    assert.equal(new Set([k, e, f]).size, 3);
    assert.equal(await pki.caPem(ref), k);
  });

  test('concurrent first uses, also from two processes sharing the store, agree on one CA', async () => {
    const other = new StorePki({ store, clock, encryptionKey: key });
    const r = { namespace: 'proj-1', name: 'race-00000000', displayName: 'race' };
    const pems = await Promise.all([pki.caPem(r), other.caPem(r), pki.caPem(r), other.caPem(r)]);
    assert.equal(new Set(pems).size, 1);
  });

  test('kubeadm material holds every CA certificate with its matching private key', async () => {
    const m = await pki.kubeadmMaterial(ref);
    for (const pair of [m.ca, m.etcd, m.frontProxy]) {
      const cert = new X509Certificate(pair.certPem);
      assert.ok(cert.checkPrivateKey(createPrivateKey(pair.keyPem)));
    }
    assert.equal(m.ca.certPem, await pki.caPem(ref));
    const saPub = createPublicKey(m.serviceAccount.certPem).export({ format: 'jwk' });
    const saFromPriv = createPublicKey(createPrivateKey(m.serviceAccount.keyPem)).export({ format: 'jwk' });
    assert.deepEqual(saPub, saFromPriv);
  });

  test('another encryption key cannot read the stored keys', async () => {
    const wrong = new StorePki({ store, clock, encryptionKey: Buffer.alloc(32, 7) });
    await assert.rejects(
      wrong.kubeadmMaterial(ref),
      /encrypted with key [0-9a-f]{8}, but the configured key is/,
    );
  });

  test('delete removes every CA secret of the cluster', async () => {
    const r = { namespace: 'proj-1', name: 'gone-00000000', displayName: 'gone' };
    await pki.caPem(r);
    await pki.deleteCluster(r);
    for (const suffix of ['ca', 'etcd', 'proxy', 'sa'])
      assert.equal(await store.get('Secret', r.namespace, `${r.name}-${suffix}`), undefined);
    await pki.deleteCluster(r); // idempotent
  });
});

describe('the encryption key file', () => {
  test('is created once with mode 0600 and read back unchanged', () => {
    const d = mkdtempSync(join(tmpdir(), 'magnetar-key-'));
    try {
      const k1 = loadOrCreateKey(join(d, 'nested'));
      const file = join(d, 'nested', 'workload-encryption.key');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(k1.length, 32);
      assert.deepEqual(loadOrCreateKey(join(d, 'nested')), k1);
      writeFileSync(file, 'c2hvcnQ=');
      assert.throws(() => loadOrCreateKey(join(d, 'nested')), /32-byte key/);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('signing client CSRs (Magnum rules)', () => {
  test(
    'an openssl RSA-2048 CSR for admin is signed as Magnum does and verifies with openssl',
    { skip: opensslSkip },
    async () => {
      const gen = openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'admin.key',
        '-subj',
        '/CN=admin/O=system:masters',
        '-sha256',
      ]);
      assert.equal(gen.status, 0, gen.stderr);
      const csr = gen.stdout;
      const before = clock.now();
      const pem = await pki.signCsr(ref, csr, { allowSystemMasters: true });
      assert.ok(pem.startsWith('-----BEGIN CERTIFICATE-----'));
      assert.ok(pem.endsWith('-----END CERTIFICATE-----'), 'no trailing newline');
      const cert = new x509.X509Certificate(pem);
      assert.equal(cert.subject, 'CN=admin, O=system:masters');
      assert.equal(cert.issuer, 'CN=prod');
      assert.equal(cert.notBefore.getTime(), Math.floor((before - DAY) / 1000) * 1000);
      assert.equal(cert.notAfter.getTime(), Math.floor((before + 1825 * DAY) / 1000) * 1000);
      assert.equal(cert.signatureAlgorithm.hash.name, 'SHA-256');
      const bc = cert.getExtension(x509.BasicConstraintsExtension);
      assert.ok(bc && !bc.ca);
      assert.ok(cert.getExtension(x509.SubjectKeyIdentifierExtension));
      const allowed = new Set(['2.5.29.15', '2.5.29.37', '2.5.29.17', '2.5.29.19', '2.5.29.14', '2.5.29.35']);
      for (const e of cert.extensions) assert.ok(allowed.has(e.type), `unexpected extension ${e.type}`);
      const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
      assert.deepEqual([...(eku?.usages ?? [])], [x509.ExtendedKeyUsage.clientAuth]);

      write('ca.pem', await pki.caPem(ref));
      write('cert.pem', pem);
      const v = openssl(['verify', '-CAfile', 'ca.pem', 'cert.pem']);
      assert.equal(v.status, 0, v.stdout + v.stderr);
      assert.match(v.stdout, /cert\.pem: OK/);
      const matches = openssl(['x509', '-noout', '-pubkey', '-in', 'cert.pem']);
      const fromKey = openssl(['pkey', '-pubout', '-in', 'admin.key']);
      assert.equal(matches.stdout, fromKey.stdout, 'the certificate is for the requester key');
    },
  );

  test('serial numbers are random and positive', async () => {
    const csr = await csrPem('CN=alice');
    const serials = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const cert = new X509Certificate(await pki.signCsr(ref, csr, { allowSystemMasters: false }));
      serials.add(cert.serialNumber);
      assert.ok(cert.serialNumber.length >= 30);
    }
    assert.equal(serials.size, 5);
  });

  test('requested SANs and usages are kept, other extensions dropped', async () => {
    const csr = await csrPem('CN=bob, O=dev', [
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'bob.example' }]),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.clientAuth,
        x509.ExtendedKeyUsage.serverAuth,
      ]),
      new x509.Extension('1.2.3.4.5', false, new Uint8Array([5, 0])),
    ]);
    const cert = new x509.X509Certificate(await pki.signCsr(ref, csr, { allowSystemMasters: false }));
    assert.equal(cert.subject, 'CN=bob, O=dev');
    assert.deepEqual(cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON(), [
      { type: 'dns', value: 'bob.example' },
    ]);
    assert.deepEqual(
      [...(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])],
      [x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth],
    );
    assert.equal(cert.getExtension('1.2.3.4.5'), null);
  });

  test('a weak RSA key is refused', async () => {
    const csr = await csrPem('CN=weak', [], 1024);
    await assert.rejects(
      pki.signCsr(ref, csr, { allowSystemMasters: false }),
      (e: unknown) => e instanceof InputError && e.code === 'WeakKey' && /1024/.test(e.message),
    );
  });

  test('a CSR whose signature does not match is refused', async () => {
    const good = await csrPem('CN=mallory');
    const der = Buffer.from(x509.PemConverter.decodeFirst(good));
    der[der.length - 5] = der[der.length - 5]! ^ 0xff;
    const bad = x509.PemConverter.encode(der, 'CERTIFICATE REQUEST');
    await assert.rejects(
      pki.signCsr(ref, bad, { allowSystemMasters: false }),
      (e: unknown) => e instanceof InputError && e.code === 'InvalidCsr' && /signature/.test(e.message),
    );
  });

  test('text that is not a CSR is refused as invalid', async () => {
    await assert.rejects(
      pki.signCsr(ref, 'hello', { allowSystemMasters: false }),
      (e: unknown) => e instanceof InputError && e.code === 'InvalidCsr',
    );
    await assert.rejects(
      pki.signCsr(ref, '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----', {
        allowSystemMasters: false,
      }),
      (e: unknown) => e instanceof InputError && e.code === 'InvalidCsr',
    );
  });

  test('a request for a CA certificate is refused', async () => {
    const csr = await csrPem('CN=sub-ca', [new x509.BasicConstraintsExtension(true, undefined, true)]);
    await assert.rejects(
      pki.signCsr(ref, csr, { allowSystemMasters: false }),
      (e: unknown) => e instanceof InputError && e.code === 'CertificateValidationError',
    );
    const ku = await csrPem('CN=signer', [new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)]);
    await assert.rejects(
      pki.signCsr(ref, ku, { allowSystemMasters: false }),
      (e: unknown) => e instanceof InputError && e.code === 'CertificateValidationError',
    );
  });

  test('a critical extension outside the allowed list is refused', async () => {
    const csr = await csrPem('CN=odd', [new x509.Extension('1.2.3.4.5', true, new Uint8Array([5, 0]))]);
    await assert.rejects(
      pki.signCsr(ref, csr, { allowSystemMasters: false }),
      (e: unknown) =>
        e instanceof InputError && e.code === 'CertificateValidationError' && /1\.2\.3\.4\.5/.test(e.message),
    );
  });

  test('O=system:masters is refused unless the caller may have it', async () => {
    const csr = await csrPem('CN=admin, O=system:masters');
    await assert.rejects(
      pki.signCsr(ref, csr, { allowSystemMasters: false }),
      (e: unknown) => e instanceof NotAllowedError && e.code === 'SystemMastersNotAllowed',
    );
    const cert = new X509Certificate(await pki.signCsr(ref, csr, { allowSystemMasters: true }));
    assert.match(cert.subject, /O=system:masters/);
  });

  test('an EC P-256 CSR is accepted', async () => {
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ]);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=ec-user',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    });
    const cert = new X509Certificate(
      await pki.signCsr(ref, csr.toString('pem'), { allowSystemMasters: false }),
    );
    assert.ok(cert.verify(new X509Certificate(await pki.caPem(ref)).publicKey));
  });
});

describe('admin access', () => {
  test('the admin kubeconfig carries the cluster CA and a fresh cluster-admin certificate from it', async () => {
    const text = await pki.adminKubeconfig(ref, 'https://127.0.0.1:6443');
    const cfg = parseYaml(text) as {
      clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
      'current-context': string;
    };
    assert.equal(cfg.clusters[0]!.cluster.server, 'https://127.0.0.1:6443');
    assert.equal(cfg['current-context'], `${ref.name}-admin@${ref.name}`);
    const ca = new X509Certificate(
      Buffer.from(cfg.clusters[0]!.cluster['certificate-authority-data'], 'base64'),
    );
    assert.equal(ca.toString().trim(), (await pki.caPem(ref)).trim());
    const cert = new X509Certificate(Buffer.from(cfg.users[0]!.user['client-certificate-data'], 'base64'));
    assert.ok(cert.verify(ca.publicKey));
    assert.match(cert.subject, /O=system:masters/);
    assert.ok(
      cert.checkPrivateKey(createPrivateKey(Buffer.from(cfg.users[0]!.user['client-key-data'], 'base64'))),
    );
  });

  test('in-process client credentials are reused until the CA changes', async () => {
    const r = { namespace: 'proj-2', name: 'reuse-00000000', displayName: 'reuse' };
    const a = await pki.clientTlsOptions(r);
    const b = await pki.clientTlsOptions(r);
    assert.equal(a.cert, b.cert);
    await pki.rotateCa(r);
    const c = await pki.clientTlsOptions(r);
    assert.notEqual(c.cert, a.cert);
    assert.notEqual(c.ca, a.ca);
  });

  test('a CA rotated by another process sharing the store is seen by the next call here', async () => {
    const other = new StorePki({ store, clock, encryptionKey: key });
    const r = { namespace: 'proj-2', name: 'shared-00000000', displayName: 'shared' };
    const a = await pki.clientTlsOptions(r);
    const version = await pki.caVersion(r);
    assert.equal(await pki.caVersion(r), version, 'unchanged while the Secret is unchanged');
    await other.rotateCa(r);
    assert.notEqual(await pki.caVersion(r), version);
    const b = await pki.clientTlsOptions(r);
    assert.notEqual(b.ca, a.ca);
    assert.equal(b.ca, await other.caPem(r));
  });
});

describe('CA rotation', () => {
  test(
    'replaces every CA; certificates signed before no longer verify against the new CA',
    { skip: opensslSkip },
    async () => {
      const r = { namespace: 'proj-3', name: 'rot-00000000', displayName: 'rot' };
      const oldCa = await pki.caPem(r);
      const oldEtcd = await pki.caPem(r, 'etcd');
      const oldProxy = await pki.caPem(r, 'front_proxy');
      const oldSa = (await pki.kubeadmMaterial(r)).serviceAccount.certPem;
      const oldCert = await pki.signCsr(r, await csrPem('CN=before'), { allowSystemMasters: false });
      await pki.rotateCa(r);
      const newCa = await pki.caPem(r);
      assert.notEqual(newCa, oldCa);
      assert.notEqual(await pki.caPem(r, 'etcd'), oldEtcd);
      assert.notEqual(await pki.caPem(r, 'front_proxy'), oldProxy);
      assert.equal((await pki.kubeadmMaterial(r)).serviceAccount.certPem, oldSa, 'service-account key kept');
      const s = await store.get('Secret', r.namespace, `${r.name}-ca`);
      assert.equal(s?.metadata.annotations['workload.magnetar.io/ca-generation'], '2');
      write('rot-new-ca.pem', newCa);
      write('rot-old-cert.pem', oldCert);
      const v = openssl(['verify', '-CAfile', 'rot-new-ca.pem', 'rot-old-cert.pem']);
      assert.notEqual(v.status, 0, 'old certificate must not verify against the rotated CA');
      const newCert = await pki.signCsr(r, await csrPem('CN=after'), { allowSystemMasters: false });
      write('rot-new-cert.pem', newCert);
      assert.equal(openssl(['verify', '-CAfile', 'rot-new-ca.pem', 'rot-new-cert.pem']).status, 0);
      assert.ok(readFileSync(join(dir, 'rot-new-ca.pem'), 'utf8').includes('BEGIN CERTIFICATE'));
    },
  );
});
