import { EC_ALGORITHM, randomSerial, x509 } from './x509.ts';

/**
 * Issuing certificates from a CA for certificate requests clients bring (`@peculiar/x509`).
 * The keys and certificates Magnetar makes for itself are in `issuing.ts`. Everything here is
 * pure computation on keys; storage and encryption are the caller's.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Lifetime of a cluster CA (kubeadm's default). */
export const CA_VALIDITY_DAYS = 3650;
/** Lifetime of signed client certificates (Magnum's `term_of_validity`). */
export const SIGNED_CERT_VALIDITY_DAYS = 1825;
/** Lifetime of certificates Magnetar issues for itself (emulated servers, in-process clients). */
export const ISSUED_CERT_VALIDITY_DAYS = 365;

/** A CA ready to sign certificate requests: its certificate and private signing key. */
export interface SigningCa {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

/** What to put in an issued certificate. */
export interface IssueParams {
  subject: x509.Name | string | x509.JsonName;
  publicKey: x509.PublicKey | CryptoKey;
  /** Extensions besides basicConstraints (CA false), SKI and AKI, which are always set. */
  extensions: x509.Extension[];
  notBefore: Date;
  notAfter: Date;
}

/** Sign a certificate with the CA: serial random, SHA-256, CA false, SKI and AKI set. */
export async function issue(ca: SigningCa, params: IssueParams): Promise<x509.X509Certificate> {
  return x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: params.subject,
    issuer: ca.cert.subjectName,
    publicKey: params.publicKey,
    signingKey: ca.key,
    signingAlgorithm: EC_ALGORITHM,
    notBefore: params.notBefore,
    notAfter: params.notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      ...params.extensions,
      await x509.SubjectKeyIdentifierExtension.create(params.publicKey),
      await authorityKeyId(ca.cert),
    ],
  });
}

/** The AKI of certificates issued by `ca`: its own SKI when it has one (no hashing per issue). */
async function authorityKeyId(ca: x509.X509Certificate): Promise<x509.AuthorityKeyIdentifierExtension> {
  const ski = ca.getExtension(x509.SubjectKeyIdentifierExtension);
  return ski
    ? new x509.AuthorityKeyIdentifierExtension(ski.keyId)
    : x509.AuthorityKeyIdentifierExtension.create(ca.publicKey);
}
