import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign, verify, X509Certificate } from 'node:crypto';
import { ipBytes, namedBits, oid, readElement, time, unsignedInteger } from '../../src/workload/pki/der.ts';
import {
  createCa,
  createServiceAccountKey,
  issueKeyPair,
  issuingCa,
} from '../../src/workload/pki/issuing.ts';
import { SigningCaCache } from '../../src/workload/pki/key-maker.ts';
import { x509 } from '../../src/workload/pki/x509.ts';

const NOW = Date.parse('2026-12-01T00:00:00Z');
const DAY = 24 * 3600 * 1000;

void test('a CA is self-signed, valid ten years from a day back, and marked as a CA that signs certificates', async () => {
  const ca = await createCa('prod cluster', NOW);
  const cert = new X509Certificate(ca.certPem);
  assert.equal(cert.ca, true);
  assert.equal(cert.subject, 'CN=prod cluster');
  assert.equal(cert.issuer, 'CN=prod cluster');
  assert.ok(cert.verify(cert.publicKey), 'signed by its own key');
  assert.equal(Date.parse(cert.validFrom), NOW - DAY);
  assert.equal(Date.parse(cert.validTo), NOW + 3650 * DAY);
  assert.ok(cert.checkPrivateKey(createPrivateKey(ca.keyPem)));
  assert.equal(createPrivateKey(ca.keyPem).asymmetricKeyDetails?.namedCurve, 'prime256v1');
  // read through a general X.509 parser too: the key usages a CA needs, a key identifier
  const parsed = new x509.X509Certificate(ca.certPem);
  const usages = parsed.getExtension(x509.KeyUsagesExtension)!;
  assert.equal(usages.critical, true);
  assert.equal(
    usages.usages,
    x509.KeyUsageFlags.digitalSignature |
      x509.KeyUsageFlags.keyEncipherment |
      x509.KeyUsageFlags.keyCertSign |
      x509.KeyUsageFlags.cRLSign,
  );
  assert.ok(parsed.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);
  assert.equal(parsed.getExtension(x509.BasicConstraintsExtension)?.critical, true);
});

void test('an issued server certificate chains to its CA and names every DNS name and IP asked for', async () => {
  const ca = await createCa('c1', NOW);
  const pair = await issueKeyPair(issuingCa(ca), {
    commonName: 'kube-apiserver',
    usage: 'server',
    dnsNames: ['localhost', 'kubernetes.default.svc.cluster.local'],
    ips: ['127.0.0.1', '::1', 'fd00:10::5'],
    nowMs: NOW,
  });
  const caCert = new X509Certificate(ca.certPem);
  const cert = new X509Certificate(pair.certPem);
  assert.ok(cert.checkIssued(caCert));
  assert.ok(cert.verify(caCert.publicKey));
  assert.equal(cert.ca, false);
  assert.equal(cert.subject, 'CN=kube-apiserver');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth only');
  assert.equal(
    cert.checkHost('kubernetes.default.svc.cluster.local'),
    'kubernetes.default.svc.cluster.local',
  );
  assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(cert.checkIP('::1'), '::1');
  assert.equal(cert.checkIP('fd00:10::5'), 'fd00:10::5');
  assert.equal(cert.checkIP('10.0.0.1'), undefined);
  assert.equal(Date.parse(cert.validTo), NOW + 365 * DAY, 'one year by default');
  assert.ok(cert.checkPrivateKey(createPrivateKey(pair.keyPem)));
  // the authority key identifier is the CA's subject key identifier
  const ski = new x509.X509Certificate(ca.certPem).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
  const aki = new x509.X509Certificate(pair.certPem).getExtension(x509.AuthorityKeyIdentifierExtension)!;
  assert.equal(aki.keyId, ski);
});

void test('a client certificate puts its organizations before the common name, as Kubernetes reads groups', async () => {
  const ca = await createCa('c1', NOW);
  const pair = await issueKeyPair(issuingCa(ca), {
    commonName: 'kubernetes-admin',
    organizations: ['system:masters'],
    usage: 'client',
    nowMs: NOW,
    validityDays: 1825,
  });
  const cert = new X509Certificate(pair.certPem);
  assert.equal(cert.subject, 'O=system:masters\nCN=kubernetes-admin');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2'], 'clientAuth only');
  assert.equal(cert.subjectAltName, undefined);
  assert.equal(Date.parse(cert.validTo), NOW + 1825 * DAY);
  assert.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
});

void test('a service-account key pair is a public key and its private key that verify each other', async () => {
  const sa = await createServiceAccountKey();
  assert.match(sa.certPem, /^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PUBLIC KEY-----$/);
  const signature = sign('sha256', Buffer.from('token'), createPrivateKey(sa.keyPem));
  assert.ok(verify('sha256', Buffer.from('token'), createPublicKey(sa.certPem), signature));
});

void test('a CA made ready to issue keeps its subject bytes and key identifier, and is read once per CA', async () => {
  const ca = await createCa('c9', NOW);
  const ready = issuingCa(ca);
  assert.equal(new X509Certificate(ca.certPem).subject, 'CN=c9');
  assert.equal(readElement(ready.subject).tag, 0x30);
  assert.equal(ready.keyId?.length, 20);
  let loads = 0;
  const cache = new SigningCaCache(async (pair) => {
    loads++;
    return issuingCa(pair);
  });
  await Promise.all([cache.get(ca), cache.get(ca), cache.get(ca)]);
  assert.equal(loads, 1);
  // a CA that cannot be read is not kept: the next use tries again
  const broken = { certPem: (await createCa('c10', NOW)).certPem, keyPem: 'not a key' };
  await assert.rejects(cache.get(broken), /unsupported|DECODER/);
  await assert.rejects(cache.get(broken), /unsupported|DECODER/);
  assert.equal(loads, 3);
});

void test('DER: lengths, positive integers, named bits, object identifiers, times and IP addresses', () => {
  assert.deepEqual([...unsignedInteger(Buffer.from([0x00, 0x00, 0x7f]))], [0x02, 0x01, 0x7f]);
  assert.deepEqual([...unsignedInteger(Buffer.from([0x80]))], [0x02, 0x02, 0x00, 0x80], 'kept positive');
  // keyUsage digitalSignature + keyEncipherment: 5 unused bits of 0xa0
  assert.deepEqual([...namedBits([0, 2])], [0x03, 0x02, 0x05, 0xa0]);
  assert.deepEqual([...namedBits([0, 2, 5, 6])], [0x03, 0x02, 0x01, 0xa6]);
  assert.deepEqual(
    [...oid('1.2.840.10045.4.3.2')],
    [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02],
  );
  assert.equal(time(new Date('2036-01-02T03:04:05Z')).subarray(2).toString(), '360102030405Z');
  assert.equal(time(new Date('2036-01-02T03:04:05Z'))[0], 0x17, 'UTCTime before 2050');
  assert.equal(time(new Date('2050-01-01T00:00:00Z')).subarray(2).toString(), '20500101000000Z');
  assert.equal(time(new Date('2050-01-01T00:00:00Z'))[0], 0x18, 'GeneralizedTime from 2050');
  const long = readElement(Buffer.concat([Buffer.from([0x04, 0x82, 0x01, 0x2c]), Buffer.alloc(300, 7)]));
  assert.equal(long.value.length, 300);
  assert.throws(() => readElement(Buffer.from([0x04, 0x05, 1, 2])), /truncated/);
  assert.deepEqual([...ipBytes('10.1.2.3')], [10, 1, 2, 3]);
  assert.equal(ipBytes('fe80::1').toString('hex'), 'fe800000000000000000000000000001');
  assert.equal(ipBytes('::').toString('hex'), '0'.repeat(32));
  assert.throws(() => ipBytes('10.1.2'), /not an IP address/);
  assert.throws(() => ipBytes('256.1.1.1'), /not an IP address/);
  assert.throws(() => ipBytes('1::2::3'), /not an IP address/);
});
