import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { CA_VALIDITY_DAYS, DAY_MS, ISSUED_CERT_VALIDITY_DAYS } from './certificates.ts';
import {
  bitString,
  boolean,
  children,
  contextTag,
  ipBytes,
  namedBits,
  octetString,
  oid,
  pem,
  pemBody,
  readElement,
  sequence,
  set,
  smallInteger,
  time,
  tlv,
  unsignedInteger,
  utf8String,
} from './der.ts';
import { randomSerial } from './x509.ts';

/**
 * The keys and certificates Magnetar makes for itself: every cluster's three CAs and
 * service-account key, the certificate of its emulated API endpoint and the client certificates
 * of its kubeconfigs. Thousands are made when many clusters are built at once, so they are made
 * with `node:crypto` alone (ECDSA P-256 keys, ecdsa-with-SHA256 signatures) and laid out in DER
 * here: about a twentieth of the CPU of building them through a general ASN.1 toolkit.
 */

/** A generated key pair in PEM. */
export interface PemKeyPair {
  /** Certificate PEM, or for a bare key pair the public key PEM. */
  certPem: string;
  keyPem: string;
}

/** A CA ready to issue: its subject as encoded, its key identifier and its private key. */
export interface IssuingCa {
  subject: Buffer;
  keyId: Buffer | undefined;
  key: KeyObject;
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

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** keyUsage bits (RFC 5280 §4.2.1.3). */
const KeyUsage = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

const SIGNATURE_ALGORITHM = sequence(oid(OID.ecdsaWithSha256));

/** A fresh P-256 key pair: the private key and the public key's SubjectPublicKeyInfo. */
function newKey(): { key: KeyObject; spki: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { key: privateKey, spki: publicKey.export({ type: 'spki', format: 'der' }) };
}

function privatePem(key: KeyObject): string {
  return (key.export({ type: 'pkcs8', format: 'pem' }) as string).trimEnd();
}

/** A Name of organizations (in order) then the common name, as kubeadm's certificates read. */
function name(commonName: string, organizations: string[] = []): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(...organizations.map((o) => rdn(OID.organization, o)), rdn(OID.commonName, commonName));
}

/** The key identifier of a public key: SHA-1 of its key bits (RFC 5280 §4.2.1.2, method 1). */
function keyIdOf(spki: Buffer): Buffer {
  const keyBits = children(readElement(spki).value)[1]!.value.subarray(1);
  return createHash('sha1').update(keyBits).digest();
}

function extension(type: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(type), ...(critical ? [boolean(true)] : []), octetString(value));
}

interface CertificateParams {
  issuer: Buffer;
  subject: Buffer;
  spki: Buffer;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
  signingKey: KeyObject;
}

/** An X.509 v3 certificate, signed: PEM. */
function certificate(p: CertificateParams): string {
  const tbs = sequence(
    tlv(contextTag(0, true), smallInteger(2)),
    unsignedInteger(Buffer.from(randomSerial(), 'hex')),
    SIGNATURE_ALGORITHM,
    p.issuer,
    sequence(time(p.notBefore), time(p.notAfter)),
    p.subject,
    p.spki,
    tlv(contextTag(3, true), sequence(...p.extensions)),
  );
  const signature = sign('sha256', tbs, { key: p.signingKey, dsaEncoding: 'der' });
  return pem('CERTIFICATE', sequence(tbs, SIGNATURE_ALGORITHM, bitString(signature)));
}

/** Create a self-signed CA with subject CN=`commonName`, valid from `nowMs` − 1 day. */
export async function createCa(commonName: string, nowMs: number): Promise<PemKeyPair> {
  const { key, spki } = newKey();
  const subject = name(commonName);
  const certPem = certificate({
    issuer: subject,
    subject,
    spki,
    notBefore: new Date(nowMs - DAY_MS),
    notAfter: new Date(nowMs + CA_VALIDITY_DAYS * DAY_MS),
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      extension(
        OID.keyUsage,
        true,
        namedBits([
          KeyUsage.digitalSignature,
          KeyUsage.keyEncipherment,
          KeyUsage.keyCertSign,
          KeyUsage.cRLSign,
        ]),
      ),
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdOf(spki))),
    ],
    signingKey: key,
  });
  return { certPem, keyPem: privatePem(key) };
}

/** Create the service-account signing key pair (`<cluster>-sa`): public key PEM + private key PEM. */
export async function createServiceAccountKey(): Promise<PemKeyPair> {
  const { key, spki } = newKey();
  return { certPem: pem('PUBLIC KEY', spki), keyPem: privatePem(key) };
}

/** A CA's PEM pair ready to issue from: its subject and key identifier read from its certificate. */
export function issuingCa(ca: PemKeyPair): IssuingCa {
  const tbs = children(readElement(pemBody(ca.certPem)).value)[0]!;
  const fields = children(tbs.value);
  // version [0] is there in every v3 certificate; serial, signature, issuer, validity, subject follow
  const at = fields[0]!.tag === contextTag(0, true) ? 1 : 0;
  const subject = fields[at + 4]!.raw;
  let keyId: Buffer | undefined;
  const extensions = fields.find((f) => f.tag === contextTag(3, true));
  for (const ext of extensions ? children(readElement(extensions.value).value) : []) {
    const parts = children(ext.value);
    if (parts[0]!.raw.equals(oid(OID.subjectKeyIdentifier))) keyId = readElement(parts.at(-1)!.value).value;
  }
  return { subject, keyId, key: createPrivateKey(ca.keyPem) };
}

/** Generate a fresh key and a certificate for it from the CA (client or server usage). */
export async function issueKeyPair(ca: IssuingCa, options: IssueKeyPairOptions): Promise<PemKeyPair> {
  const { key, spki } = newKey();
  const sans = [
    ...(options.dnsNames ?? []).map((dns) => tlv(contextTag(2, false), Buffer.from(dns, 'ascii'))),
    ...(options.ips ?? []).map((ip) => tlv(contextTag(7, false), ipBytes(ip))),
  ];
  const certPem = certificate({
    issuer: ca.subject,
    subject: name(options.commonName, options.organizations),
    spki,
    notBefore: new Date(options.nowMs - 5 * 60 * 1000),
    notAfter: new Date(options.nowMs + (options.validityDays ?? ISSUED_CERT_VALIDITY_DAYS) * DAY_MS),
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, namedBits([KeyUsage.digitalSignature, KeyUsage.keyEncipherment])),
      extension(
        OID.extKeyUsage,
        false,
        sequence(oid(options.usage === 'server' ? OID.serverAuth : OID.clientAuth)),
      ),
      ...(sans.length > 0 ? [extension(OID.subjectAltName, false, sequence(...sans))] : []),
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdOf(spki))),
      ...(ca.keyId
        ? [extension(OID.authorityKeyIdentifier, false, sequence(tlv(contextTag(0, false), ca.keyId)))]
        : []),
    ],
    signingKey: ca.key,
  });
  return { certPem, keyPem: privatePem(key) };
}
