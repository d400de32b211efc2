import type { SigningCa } from './certificates.ts';
import {
  createCa,
  createServiceAccountKey,
  issueKeyPair,
  issuingCa,
  type IssueKeyPairOptions,
  type IssuingCa,
  type PemKeyPair,
} from './issuing.ts';
import { importSigningKey, x509 } from './x509.ts';

/**
 * Where keys and certificates are made: every cluster needs three CAs, a service-account key
 * and a few certificates issued from its CA. That is pure computation on PEM text in and out,
 * so it can run on this thread ({@link inlineKeyMaker}) or on a thread of its own
 * (`KeyMakerThread`), which is how a region keeps it off the event loop of its controllers.
 */
export interface KeyMaker {
  /** A self-signed CA with subject CN=`commonName` (see `createCa`). */
  createCa(commonName: string, nowMs: number): Promise<PemKeyPair>;
  /** A service-account signing key pair: public key PEM and private key PEM. */
  createServiceAccountKey(): Promise<PemKeyPair>;
  /** A fresh key and a certificate for it, issued by `ca` (its certificate and private key in PEM). */
  issueKeyPair(ca: PemKeyPair, options: IssueKeyPairOptions): Promise<PemKeyPair>;
}

/** CAs whose parsed certificate and imported key a key maker keeps at hand. */
const SIGNING_CACHE = 256;

/**
 * A CA's PEM pair made ready to sign (`load`), once per CA, not once per certificate: the
 * most recently used {@link SIGNING_CACHE} are kept.
 */
export class SigningCaCache<T> {
  private readonly cas = new Map<string, Promise<T>>();

  constructor(private readonly load: (ca: PemKeyPair) => Promise<T>) {}

  get(ca: PemKeyPair): Promise<T> {
    const id = ca.certPem;
    let hit = this.cas.get(id);
    if (hit) {
      this.cas.delete(id); // most recently used last
    } else {
      hit = this.load(ca);
      hit.catch(() => this.cas.delete(id));
      while (this.cas.size >= SIGNING_CACHE) this.cas.delete(this.cas.keys().next().value!);
    }
    this.cas.set(id, hit);
    return hit;
  }
}

/** CAs ready to sign certificate requests (`signCsr`). */
export function csrSigningCas(): SigningCaCache<SigningCa> {
  return new SigningCaCache(async (ca) => ({
    cert: new x509.X509Certificate(ca.certPem),
    key: await importSigningKey(ca.keyPem),
  }));
}

/** Make keys on the calling thread. */
export function inlineKeyMaker(): KeyMaker {
  const issuing = new SigningCaCache<IssuingCa>(async (ca) => issuingCa(ca));
  return {
    createCa,
    createServiceAccountKey,
    issueKeyPair: async (ca, options) => issueKeyPair(await issuing.get(ca), options),
  };
}
