import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, webcrypto } from 'node:crypto';

/**
 * The client side of `cluster config`: a fresh RSA-2048 key (e=65537) and a CSR for
 * CN=admin, O=system:masters signed with SHA-256, as the `openstack` client makes them.
 * The key is PEM "RSA PRIVATE KEY" (PKCS#1, unencrypted), the form kubeconfigs carry.
 */

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

/** A private key and the CSR made with it, both PEM. */
export interface KeyAndCsr {
  /** PKCS#1 PEM, ending with a newline. */
  key: string;
  /** PKCS#10 PEM. */
  csr: string;
}

/** Generate a key and a CSR for `CN=<cn>, O=<org>` (default: the cluster admin). */
export async function generateKeyAndCsr(
  subject: { cn: string; o?: string } = { cn: 'admin', o: 'system:masters' },
): Promise<KeyAndCsr> {
  const crypto = webcrypto as unknown as Crypto;
  const keys = await crypto.subtle.generateKey(RSA, true, ['sign', 'verify']);
  const name: x509.JsonName = [{ CN: [subject.cn] }];
  if (subject.o !== undefined) name.push({ O: [subject.o] });
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    { name, keys, signingAlgorithm: RSA },
    crypto,
  );
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({
    type: 'pkcs1',
    format: 'pem',
  });
  return { key: key.toString(), csr: csr.toString('pem') };
}
