import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPublicKey, randomBytes, webcrypto } from 'node:crypto';

/**
 * The X.509 toolkit of the workload layer for certificate requests clients bring:
 * `@peculiar/x509` on Node's WebCrypto, plus the key helpers CSR signing uses. CA keys are
 * ECDSA P-256 (see `issuing.ts`); RSA appears only in the requests.
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };

/** WebCrypto's subtle interface. */
export const subtle = webcrypto.subtle as unknown as SubtleCrypto;

/** Import and signing parameters of the CA keys Magnetar generates (ECDSA P-256, SHA-256). */
export const EC_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** Import a PKCS#8 PEM EC private key for signing. */
export async function importSigningKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return subtle.importKey('pkcs8', der, EC_ALGORITHM, false, ['sign']);
}

/** PEM of a certificate, without a trailing newline (as Magnum returns it). */
export function certificatePem(cert: x509.X509Certificate): string {
  return cert.toString('pem').trimEnd();
}

/**
 * A random, positive serial number as hex: 128 random bits, like the integer of a
 * random uuid4 Magnum uses.
 */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  if (bytes[0] === 0) bytes[0] = 0x01;
  return bytes.toString('hex');
}

/** Algorithm and strength of a public key. */
export type KeyStrength =
  { type: 'rsa'; bits: number } | { type: 'ec'; curve: string } | { type: 'other'; name: string };

/** What kind of key a SubjectPublicKeyInfo holds, read by Node's own key parser. */
export function keyStrength(publicKey: x509.PublicKey): KeyStrength {
  const key = createPublicKey({ key: Buffer.from(publicKey.rawData), format: 'der', type: 'spki' });
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return { type: 'rsa', bits: details.modulusLength ?? 0 };
    case 'ec':
      return { type: 'ec', curve: details.namedCurve ?? 'unknown' };
    case 'dsa':
    case 'ed25519':
    case 'ed448':
    case 'x25519':
    case 'x448':
    case undefined:
      return { type: 'other', name: key.asymmetricKeyType ?? 'unknown' };
  }
}
