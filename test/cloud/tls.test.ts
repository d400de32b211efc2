import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudError, Session } from '../../src/cloud/index.ts';

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

void test(
  'TLS: a private CA is trusted through cacert, refused without it, and verify:false skips the check',
  { skip: haveOpenssl() ? false : 'openssl is not installed' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cloud-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

    const trusted = new Session({
      authType: 'admin_token',
      auth: { token: 't' },
      endpointOverride: url,
      cacert: cert,
    });
    const inlinePem = new Session({
      authType: 'admin_token',
      auth: { token: 't' },
      endpointOverride: url,
      cacert: readFileSync(cert, 'utf8'),
    });
    const untrusted = new Session({ authType: 'admin_token', auth: { token: 't' }, endpointOverride: url });
    const insecure = new Session({
      authType: 'admin_token',
      auth: { token: 't' },
      endpointOverride: url,
      verify: false,
    });
    t.after(() => [trusted, inlinePem, untrusted, insecure].forEach((s) => s.close()));

    assert.deepEqual((await trusted.request('container-infra', 'GET', '/')).body, { ok: true });
    assert.deepEqual((await inlinePem.request('container-infra', 'GET', '/')).body, { ok: true });
    assert.deepEqual((await insecure.request('container-infra', 'GET', '/')).body, { ok: true });
    await assert.rejects(untrusted.request('container-infra', 'GET', '/'), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.transient, false, 'a certificate problem is not retried');
      assert.match(err.cloudMessage, /set cacert .* or verify: false/);
      return true;
    });
  },
);

void test('an unreadable cacert file is a configuration error naming the file', () => {
  assert.throws(
    () =>
      new Session({
        authType: 'admin_token',
        auth: { token: 't' },
        endpointOverride: 'https://x',
        cacert: '/nonexistent/ca.pem',
      }),
    /cacert: cannot read \/nonexistent\/ca.pem/,
  );
});
