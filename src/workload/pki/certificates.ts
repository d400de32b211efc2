import {
  EC_ALGORITHM,
  certificatePem,
  generateKeyPair,
  privateKeyPem,
  publicKeyPem,
  randomSerial,
  x509,
} from './x509.ts';

/**
 * Creating certificate authorities and issuing certificates from them. Everything here is
 * pure computation on keys; storage and encryption are the caller's.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** Lifetime of a cluster CA (kubeadm's default). */
export const CA_VALIDITY_DAYS = 3650;
/** Lifetime of signed client certificates (Magnum's `term_of_validity`). */
export const SIGNED_CERT_VALIDITY_DAYS = 1825;
/** Lifetime of certificates Magnetar issues for itself (emulated servers, in-process clients). */
export const ISSUED_CERT_VALIDITY_DAYS = 365;

/** A CA ready to sign: its certificate and private signing key. */
export interface SigningCa {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

/** A generated key pair in PEM. */
export interface PemKeyPair {
  /** Certificate PEM, or for a bare key pair the public key PEM. */
  certPem: string;
  keyPem: string;
}

/** Create a self-signed CA with subject CN=`commonName`, valid from `nowMs` − 1 day. */
export async function createCa(commonName: string, nowMs: number): Promise<PemKeyPair> {
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [commonName] }],
    keys,
    signingAlgorithm: EC_ALGORITHM,
    notBefore: new Date(nowMs - DAY_MS),
    notAfter: new Date(nowMs + CA_VALIDITY_DAYS * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign |
          x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature |
          x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: certificatePem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}

/** Create the service-account signing key pair (`<cluster>-sa`): public key PEM + private key PEM. */
export async function createServiceAccountKey(): Promise<PemKeyPair> {
  const keys = await generateKeyPair();
  return { certPem: await publicKeyPem(keys.publicKey), keyPem: await privateKeyPem(keys.privateKey) };
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

/** Options of {@link issueKeyPair}. */
export interface IssueKeyPairOptions {
  commonName: string;
  organizations?: string[];
  usage: 'client' | 'server';
  /** Subject alternative names (server certificates). */
  dnsNames?: string[];
  ips?: string[];
  nowMs: number;
  /** @default ISSUED_CERT_VALIDITY_DAYS */
  validityDays?: number;
}

/** Generate a fresh key and a certificate for it from the CA (client or server usage). */
export async function issueKeyPair(ca: SigningCa, options: IssueKeyPairOptions): Promise<PemKeyPair> {
  const keys = await generateKeyPair();
  const subject: x509.JsonName = [{ CN: [options.commonName] }];
  for (const o of options.organizations ?? []) subject.unshift({ O: [o] });
  const sans: x509.JsonGeneralNames = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await issue(ca, {
    subject,
    publicKey: keys.publicKey,
    notBefore: new Date(options.nowMs - 5 * 60 * 1000),
    notAfter: new Date(options.nowMs + (options.validityDays ?? ISSUED_CERT_VALIDITY_DAYS) * DAY_MS),
    extensions: [
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([
        options.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
    ],
  });
  return { certPem: certificatePem(cert), keyPem: await privateKeyPem(keys.privateKey) };
}
