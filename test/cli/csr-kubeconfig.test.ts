import 'reflect-metadata';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { parse as parseYaml } from 'yaml';
import { generateKeyAndCsr } from '../../src/cli/csr.ts';
import { certificateKubeconfig, insecureKubeconfig } from '../../src/cli/kubeconfig.ts';

test('cluster config makes an RSA-2048 PKCS#1 key and a signed CSR for CN=admin, O=system:masters', async () => {
  const { key, csr } = await generateKeyAndCsr();
  assert.match(key, /^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+-----END RSA PRIVATE KEY-----\n$/);
  const k = createPrivateKey(key);
  assert.equal(k.asymmetricKeyType, 'rsa');
  assert.equal(k.asymmetricKeyDetails?.modulusLength, 2048);
  assert.equal(k.asymmetricKeyDetails?.publicExponent, 65537n);

  const req = new x509.Pkcs10CertificateRequest(csr);
  assert.match(csr, /^-----BEGIN CERTIFICATE REQUEST-----/);
  assert.equal(req.subject, 'CN=admin, O=system:masters');
  assert.equal(await req.verify(webcrypto as unknown as Crypto), true);
  assert.equal((req.signatureAlgorithm as { hash?: { name: string } }).hash?.name, 'SHA-256');
  // The CSR carries the public half of the key written to the kubeconfig.
  const fromCsr = createPublicKey({ key: Buffer.from(req.publicKey.rawData), format: 'der', type: 'spki' });
  assert.ok(fromCsr.equals(createPublicKey(k)));
});

test('the kubeconfig has the openstack client layout with one-line base64 data', () => {
  const text = certificateKubeconfig({
    clusterName: 'prod',
    server: 'https://10.0.0.5:6443',
    caPem: 'CA PEM',
    certPem: 'CERT PEM',
    keyPem: 'KEY PEM\n',
  });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  assert.equal(
    text,
    `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64('CA PEM')}
    server: https://10.0.0.5:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: admin
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: admin
  user:
    client-certificate-data: ${b64('CERT PEM')}
    client-key-data: ${b64('KEY PEM\n')}
`,
  );
});

test('a cluster without TLS gets a valid kubeconfig with only the server', () => {
  const doc = parseYaml(insecureKubeconfig({ clusterName: 'dev', server: 'http://10.0.0.5:8080' })) as {
    clusters: { cluster: { server: string }; name: string }[];
    users: { name: string }[];
    'current-context': string;
  };
  assert.equal(doc.clusters[0]!.cluster.server, 'http://10.0.0.5:8080');
  assert.equal(doc['current-context'], 'dev');
  assert.deepEqual(doc.users, [{ name: 'dev' }]);
});
