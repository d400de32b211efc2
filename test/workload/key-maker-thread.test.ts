import 'reflect-metadata';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger, type Logger, type PkiClusterRef } from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { KeyMakerThread, StorePki } from '../../src/workload/index.ts';

const NOW = Date.parse('2026-12-01T00:00:00Z');

/** A logger that keeps its warnings. */
function recordingLog(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const log = {
    ...silentLogger,
    warn: (_o: unknown, msg?: string) => void warnings.push(msg ?? ''),
  } as Logger;
  return { log, warnings };
}

void test('the key-making thread makes CAs, service-account keys and certificates that chain to their CA', async () => {
  const keys = new KeyMakerThread(() => silentLogger);
  try {
    const [ca, sa] = await Promise.all([keys.createCa('prod', NOW), keys.createServiceAccountKey()]);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(caCert.ca, true);
    assert.match(caCert.subject, /CN=prod/);
    assert.match(sa.certPem, /^-----BEGIN PUBLIC KEY-----/);
    assert.match(sa.keyPem, /^-----BEGIN PRIVATE KEY-----/);

    const server = await keys.issueKeyPair(ca, {
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['kubernetes.default'],
      ips: ['127.0.0.1'],
      nowMs: NOW,
    });
    const cert = new X509Certificate(server.certPem);
    assert.ok(cert.verify(caCert.publicKey), 'signed by the CA it was asked for');
    assert.equal(cert.ca, false);
    assert.match(cert.subjectAltName ?? '', /DNS:kubernetes.default/);
    assert.match(cert.subjectAltName ?? '', /IP Address:127.0.0.1/);
    assert.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(server.keyPem)));
  } finally {
    await keys.close();
  }
});

void test('a cluster PKI on the key-making thread gives the same material a client can use', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-keys-'));
  const store = new SqliteStore({ path: ':memory:' });
  const keys = new KeyMakerThread(() => silentLogger);
  try {
    const pki = new StorePki({
      store,
      clock: new ManualClock(NOW),
      encryptionKey: Buffer.alloc(32, 3),
      keys,
    });
    const ref: PkiClusterRef = { namespace: 'p1', name: 'c1-abc', displayName: 'c1' };
    const tls = await pki.clientTlsOptions(ref);
    const ca = new X509Certificate(tls.ca);
    assert.ok(new X509Certificate(tls.cert).verify(ca.publicKey));
    assert.equal(await pki.caPem(ref), tls.ca, 'the client certificate comes from the stored CA');
    const material = await pki.kubeadmMaterial(ref);
    const cas = [material.ca, material.etcd, material.frontProxy].map((p) => p.certPem);
    assert.equal(new Set(cas).size, 3, 'three distinct CAs');
  } finally {
    await keys.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

void test('calls a killed key-making thread had not answered are answered by a new one', async () => {
  const { log, warnings } = recordingLog();
  const keys = new KeyMakerThread(() => log);
  try {
    const ca = await keys.createCa('first', NOW);
    const calls = Array.from({ length: 20 }, (_, i) =>
      keys.issueKeyPair(ca, { commonName: `client-${i}`, usage: 'client', nowMs: NOW }),
    );
    await keys.kill();
    const issued = await Promise.all(calls);
    const caCert = new X509Certificate(ca.certPem);
    for (const [i, pair] of issued.entries()) {
      const cert = new X509Certificate(pair.certPem);
      assert.match(cert.subject, new RegExp(`CN=client-${i}$`));
      assert.ok(cert.verify(caCert.publicKey));
    }
    assert.ok(
      warnings.some((w) => /stopped; asking a new one/.test(w)),
      `the restart is logged: ${JSON.stringify(warnings)}`,
    );
  } finally {
    await keys.close();
  }
});

void test('when the key-making thread cannot start, keys are made on the calling thread, with a warning', async () => {
  const { log, warnings } = recordingLog();
  const keys = new KeyMakerThread(() => log, new URL('./no-such-module.ts', import.meta.url));
  try {
    const ca = await keys.createCa('fallback', NOW);
    assert.ok(new X509Certificate(ca.certPem).ca);
    assert.ok(warnings.some((w) => /did not start; making keys on this thread/.test(w)));
    const again = await keys.createServiceAccountKey();
    assert.match(again.keyPem, /PRIVATE KEY/);
  } finally {
    await keys.close();
  }
});

void test('a call the key-making thread cannot do fails with its reason, and the thread goes on', async () => {
  const keys = new KeyMakerThread(() => silentLogger);
  try {
    await assert.rejects(
      keys.issueKeyPair(
        { certPem: 'not a certificate', keyPem: 'not a key' },
        {
          commonName: 'x',
          usage: 'client',
          nowMs: NOW,
        },
      ),
      (err: Error) => err.message.length > 0,
    );
    assert.ok(new X509Certificate((await keys.createCa('after', NOW)).certPem).ca);
  } finally {
    await keys.close();
  }
});
