import { InputError, NotAllowedError } from '../../domain/index.ts';
import { issue, SIGNED_CERT_VALIDITY_DAYS, type SigningCa } from './certificates.ts';
import { certificatePem, keyStrength, x509 } from './x509.ts';

/**
 * Signing of client certificate requests (`POST /v1/certificates`, `coe cluster config`)
 * with Magnum's rules: subject copied, issuer the cluster CA, valid 1825 days from now − 1
 * day, random serial, SHA-256, request extensions filtered to keyUsage, extendedKeyUsage,
 * subjectAltName, basicConstraints and subjectKeyIdentifier (a fresh SKI replaces the
 * requested one), never a CA. `O=system:masters` (cluster-admin) only when allowed.
 */

const OID = {
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
} as const;

const ALLOWED = new Set<string>(Object.values(OID));

/** The group that makes a Kubernetes user cluster-admin. */
export const SYSTEM_MASTERS = 'system:masters';

const DAY_MS = 24 * 60 * 60 * 1000;
const EC_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1', 'P-256', 'P-384', 'P-521']);

function invalid(message: string, code = 'InvalidCsr'): InputError {
  return new InputError(message, { code });
}

/** Parse a PEM CSR; InputError when it is not one. */
export function parseCsr(csrPem: string): x509.Pkcs10CertificateRequest {
  if (typeof csrPem !== 'string' || !csrPem.includes('-----BEGIN CERTIFICATE REQUEST-----')) {
    throw invalid('The CSR is not a PEM certificate request (expected -----BEGIN CERTIFICATE REQUEST-----).');
  }
  try {
    return new x509.Pkcs10CertificateRequest(csrPem.trim());
  } catch (cause) {
    throw new InputError('The CSR could not be parsed as a PKCS#10 certificate request.', {
      code: 'InvalidCsr',
      cause,
    });
  }
}

function checkKey(csr: x509.Pkcs10CertificateRequest): void {
  let strength;
  try {
    strength = keyStrength(csr.publicKey);
  } catch (cause) {
    throw new InputError('The CSR public key could not be read.', { code: 'InvalidCsr', cause });
  }
  switch (strength.type) {
    case 'rsa':
      if (strength.bits < 2048)
        throw invalid(
          `The CSR key is too weak: RSA ${strength.bits} bits (at least 2048 required).`,
          'WeakKey',
        );
      return;
    case 'ec':
      if (!EC_CURVES.has(strength.curve))
        throw invalid(
          `The CSR key uses the curve ${strength.curve}; P-256 or stronger is required.`,
          'WeakKey',
        );
      return;
    case 'other':
      throw invalid(
        `The CSR key type ${strength.name} is not supported; use RSA (2048 bits or more) or ECDSA (P-256 or stronger).`,
        'WeakKey',
      );
  }
}

async function checkSignature(csr: x509.Pkcs10CertificateRequest): Promise<void> {
  let ok = false;
  try {
    ok = await csr.verify();
  } catch (cause) {
    throw new InputError('The CSR signature could not be verified.', { code: 'InvalidCsr', cause });
  }
  if (!ok) throw invalid('The CSR signature does not match its public key.');
}

/** The request's extensions that go into the certificate (filtered and checked). */
function filteredExtensions(csr: x509.Pkcs10CertificateRequest): x509.Extension[] {
  const out: x509.Extension[] = [];
  let keyUsage = false;
  let extKeyUsage = false;
  for (const ext of csr.extensions) {
    if (!ALLOWED.has(ext.type)) {
      if (ext.critical) {
        throw invalid(
          `The CSR requests the critical extension ${ext.type}, which is not allowed.`,
          'CertificateValidationError',
        );
      }
      continue;
    }
    switch (ext.type) {
      case OID.basicConstraints: {
        const bc = new x509.BasicConstraintsExtension(ext.rawData);
        if (bc.ca)
          throw invalid(
            'The CSR requests a CA certificate (basicConstraints CA:TRUE), which is not allowed.',
            'CertificateValidationError',
          );
        break; // replaced by CA:FALSE in issue()
      }
      case OID.keyUsage: {
        const ku = new x509.KeyUsagesExtension(ext.rawData);
        if (ku.usages & (x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign)) {
          throw invalid(
            'The CSR requests certificate signing key usage, which is not allowed.',
            'CertificateValidationError',
          );
        }
        out.push(new x509.KeyUsagesExtension(ku.usages, ext.critical));
        keyUsage = true;
        break;
      }
      case OID.extKeyUsage:
        out.push(
          new x509.ExtendedKeyUsageExtension(
            new x509.ExtendedKeyUsageExtension(ext.rawData).usages,
            ext.critical,
          ),
        );
        extKeyUsage = true;
        break;
      case OID.subjectAltName:
        out.push(
          new x509.SubjectAlternativeNameExtension(
            new x509.SubjectAlternativeNameExtension(ext.rawData).names.toJSON(),
            ext.critical,
          ),
        );
        break;
      case OID.subjectKeyIdentifier:
        break; // replaced by one computed from the key in issue()
    }
  }
  // A request without usages gets a client certificate's (what `coe cluster config` needs).
  if (!keyUsage)
    out.push(
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
    );
  if (!extKeyUsage) out.push(new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]));
  return out;
}

/** Options of {@link signCsr}. */
export interface SignCsrOptions {
  allowSystemMasters: boolean;
  nowMs: number;
}

/**
 * Validate and sign a PEM CSR with the CA. Returns the certificate PEM without a trailing
 * newline. InputError (InvalidCsr, WeakKey, CertificateValidationError) or NotAllowedError.
 */
export async function signCsr(ca: SigningCa, csrPem: string, options: SignCsrOptions): Promise<string> {
  const csr = parseCsr(csrPem);
  checkKey(csr);
  await checkSignature(csr);
  const extensions = filteredExtensions(csr);
  if (!options.allowSystemMasters && csr.subjectName.getField('O').includes(SYSTEM_MASTERS)) {
    throw new NotAllowedError(
      `A certificate for the group ${SYSTEM_MASTERS} (cluster-admin) is not allowed for this caller.`,
      {
        code: 'SystemMastersNotAllowed',
      },
    );
  }
  const cert = await issue(ca, {
    subject: csr.subjectName,
    publicKey: csr.publicKey,
    extensions,
    notBefore: new Date(options.nowMs - DAY_MS),
    notAfter: new Date(options.nowMs + SIGNED_CERT_VALIDITY_DAYS * DAY_MS),
  });
  return certificatePem(cert);
}
