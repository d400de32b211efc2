import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { randomBytes, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:tls';
import { z } from 'zod';

/**
 * HTTPS in front of the kube façade. kubectl (client-go) sends no credentials — no token, no
 * exec plugin — to a plain `http://` server, so when Magnetar itself listens on HTTP, the
 * management API is also offered on a TLS port that forwards the bytes to the main listener.
 * Its certificate comes from a small self-signed CA kept in the data directory; the
 * kubeconfig embeds that CA.
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const subtle = webcrypto.subtle as unknown as SubtleCrypto;
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

/** The CA and serving certificate of the TLS front. */
export interface KubeTlsMaterial {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Host names and IPs in the serving certificate. */
  names: string[];
}

const MaterialSchema = z.object({
  caPem: z.string(),
  certPem: z.string(),
  keyPem: z.string(),
  names: z.array(z.string()),
  notAfter: z.number(),
});

/** File in the data directory that keeps the material. */
export const KUBE_TLS_FILE = 'kube-api-tls.json';

function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b.toString('hex');
}

async function pkcs8(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** Generate a CA and a serving certificate for `names` (DNS names or IPs). */
export async function generateKubeTls(
  names: string[],
  nowMs: number,
): Promise<KubeTlsMaterial & { notAfter: number }> {
  const caKeys = await subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=magnetar-management-ca',
    keys: caKeys,
    signingAlgorithm: ALG,
    notBefore: new Date(nowMs - DAY),
    notAfter: new Date(nowMs + 3650 * DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keys = await subtle.generateKey(ALG, true, ['sign', 'verify']);
  const notAfter = nowMs + 825 * DAY;
  const isIp = (n: string) => /^[\d.]+$/.test(n) || n.includes(':');
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=magnetar-management',
    issuer: ca.subjectName,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALG,
    notBefore: new Date(nowMs - DAY),
    notAfter: new Date(notAfter),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        names.map((n) => ({ type: isIp(n) ? ('ip' as const) : ('dns' as const), value: n })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  return {
    caPem: ca.toString('pem'),
    certPem: cert.toString('pem'),
    keyPem: await pkcs8(keys.privateKey),
    names,
    notAfter,
  };
}

/**
 * The material kept in `dataDir` (created, or renewed when the names changed or it expires
 * within 30 days). Without a writable data directory it lives in memory only.
 */
export async function loadOrCreateKubeTls(
  dataDir: string | undefined,
  names: string[],
  nowMs: number,
): Promise<KubeTlsMaterial> {
  const file = dataDir ? join(dataDir, KUBE_TLS_FILE) : undefined;
  if (file && existsSync(file)) {
    const r = MaterialSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (r.success && r.data.notAfter - nowMs > 30 * DAY && names.every((n) => r.data.names.includes(n)))
      return r.data;
  }
  const fresh = await generateKubeTls(names, nowMs);
  if (file) {
    try {
      mkdirSync(dataDir!, { recursive: true });
      writeFileSync(file, JSON.stringify(fresh), { mode: 0o600 });
    } catch {
      // An unwritable data directory only costs a new CA at the next start.
    }
  }
  return fresh;
}

/** A running TLS front. */
export interface KubeTlsFront {
  /** The port it listens on. */
  port(): number;
  close(): Promise<void>;
}

/**
 * Listen on `host:port` with TLS and forward each connection's bytes to the main listener at
 * `target()` (resolved per connection, so it can start before the main listener knows its port).
 */
export async function startKubeTlsFront(options: {
  material: KubeTlsMaterial;
  host: string;
  port: number;
  target: () => { host: string; port: number };
}): Promise<KubeTlsFront> {
  const sockets = new Set<Socket>();
  const server: Server = createServer(
    { key: options.material.keyPem, cert: options.material.certPem },
    (client) => {
      const t = options.target();
      const upstream = connect(t.port, t.host);
      sockets.add(client);
      sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.pipe(upstream).pipe(client);
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: () => (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
