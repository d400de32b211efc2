import {
  ConflictError,
  NotFoundError,
  type ApiObject,
  type CaKind,
  type Clock,
  type ClusterPki,
  type PkiClusterRef,
} from '../../domain/index.ts';
import type { ObjectStore, WriteOp } from '../../store/index.ts';
import {
  CA_GENERATION_ANNOTATION,
  CA_PURPOSES,
  caSecretName,
  caSecretSpec,
  keyContext,
  newCaSecret,
  readCaSecret,
  SECRET_TYPE_KEY,
  type CaPurpose,
  type StoredKeyPair,
} from './ca-secrets.ts';
import type { PemKeyPair } from './issuing.ts';
import { signCsr } from './csr-signing.ts';
import { open, seal } from './encryption.ts';
import { csrSigningCas, inlineKeyMaker, type KeyMaker } from './key-maker.ts';
import { renderKubeconfig } from './kubeconfig.ts';

/** Options of {@link StorePki}. */
export interface StorePkiOptions {
  store: ObjectStore;
  clock: Clock;
  /** 32-byte AES-256-GCM key that encrypts every stored private key (see `loadOrCreateKey`). */
  encryptionKey: Buffer;
  /** Clusters whose decrypted signing keys stay cached in memory. @default 2048 */
  cacheSize?: number;
  /** Where keys and certificates are made. @default on the calling thread */
  keys?: KeyMaker;
}

/** Every CA and key of a cluster in clear PEM, for the kubeadm bootstrap data (`/etc/kubernetes/pki`). */
export interface KubeadmMaterial {
  /** Kubernetes CA (`ca.crt` / `ca.key`). */
  ca: PemKeyPair;
  /** etcd CA (`etcd/ca.crt` / `etcd/ca.key`). */
  etcd: PemKeyPair;
  /** Front-proxy CA (`front-proxy-ca.crt` / `front-proxy-ca.key`). */
  frontProxy: PemKeyPair;
  /** Service-account key pair (`sa.pub` in `certPem` / `sa.key`). */
  serviceAccount: PemKeyPair;
}

/** TLS material for an in-process client of a cluster's API (node:https options). */
export interface ClientTlsOptions {
  /** The cluster CA, to verify the server. */
  ca: string;
  /** Client certificate (CN=magnetar, O=system:masters). */
  cert: string;
  key: string;
}

/** A server certificate for a cluster's API endpoint. */
export interface ServerTlsMaterial extends PemKeyPair {
  /** The CA that signed it, which is also the CA clients must present certificates from. */
  caPem: string;
  /** resourceVersion of the `<cluster>-ca` Secret it was issued from (changes on rotation). */
  caVersion: string;
}

interface CacheEntry<T> {
  version: string;
  value: Promise<T>;
}

const KIND_PURPOSE: Record<CaKind, CaPurpose> = { kubernetes: 'ca', etcd: 'etcd', front_proxy: 'proxy' };

/**
 * Per-cluster PKI stored as Cluster API-style Secrets with private keys encrypted at rest.
 * Material is created on first use (all four key pairs in one atomic write, so two callers
 * racing end up with the same CAs), read fresh from the store on every call (a rotation done
 * by another process is seen at once), and decrypted keys are cached per Secret version.
 */
export class StorePki implements ClusterPki {
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly key: Buffer;
  private readonly cacheSize: number;
  private readonly keys: KeyMaker;
  /** Each cluster's Kubernetes CA with its key decrypted, per Secret version. */
  private readonly signing = new Map<string, CacheEntry<PemKeyPair>>();
  /** CAs parsed for signing certificate requests (a tenant's `ca sign`; rare). */
  private readonly csrSigning = csrSigningCas();
  private readonly clientTls = new Map<string, CacheEntry<ClientTlsOptions>>();
  /** Each cluster's CA Secret as read, kept while its version in the store stays the same. */
  private readonly caSecrets = new Map<string, CacheEntry<StoredKeyPair>>();
  private readonly creating = new Map<string, Promise<void>>();

  constructor(options: StorePkiOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.key = options.encryptionKey;
    this.keys = options.keys ?? inlineKeyMaker();
    this.cacheSize = options.cacheSize ?? 2048;
  }

  async caPem(cluster: PkiClusterRef, kind: CaKind = 'kubernetes'): Promise<string> {
    const all = await this.ensure(cluster);
    return all[KIND_PURPOSE[kind]].certPem;
  }

  async signCsr(
    cluster: PkiClusterRef,
    csrPem: string,
    options: { allowSystemMasters: boolean },
  ): Promise<string> {
    const ca = await this.csrSigning.get(await this.signingCa(cluster));
    return signCsr(ca, csrPem, { allowSystemMasters: options.allowSystemMasters, nowMs: this.clock.now() });
  }

  async rotateCa(cluster: PkiClusterRef): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const secrets = await this.readSecrets(cluster);
      if (CA_PURPOSES.some((p) => !secrets[p])) {
        await this.ensure(cluster); // nothing to rotate yet: first use creates fresh CAs
        return;
      }
      const ops: WriteOp[] = [];
      for (const purpose of ['ca', 'etcd', 'proxy'] as const) {
        const current = secrets[purpose]!;
        const fresh = await this.keys.createCa(cluster.displayName, this.clock.now());
        const name = caSecretName(cluster.name, purpose);
        const generation = readCaSecret(current).generation + 1;
        ops.push({
          op: 'update',
          object: {
            ...current,
            metadata: {
              ...current.metadata,
              annotations: {
                ...current.metadata.annotations,
                [CA_GENERATION_ANNOTATION]: String(generation),
              },
            },
            spec: caSecretSpec(
              fresh.certPem,
              seal(this.key, fresh.keyPem, keyContext(cluster.namespace, name)),
            ),
          },
        });
      }
      try {
        await this.store.commit(ops);
        this.forget(cluster);
        return;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 3) throw err;
      }
    }
  }

  async deleteCluster(cluster: Pick<PkiClusterRef, 'namespace' | 'name'>): Promise<void> {
    for (const purpose of CA_PURPOSES) {
      try {
        await this.store.delete(SECRET_TYPE_KEY, cluster.namespace, caSecretName(cluster.name, purpose));
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    this.forget(cluster);
  }

  /** All CA certificates and keys in clear, for the kubeadm bootstrap data. */
  async kubeadmMaterial(cluster: PkiClusterRef): Promise<KubeadmMaterial> {
    const all = await this.ensure(cluster);
    const pair = (purpose: CaPurpose): PemKeyPair => ({
      certPem: all[purpose].certPem,
      keyPem: open(
        this.key,
        all[purpose].sealedKey,
        keyContext(cluster.namespace, caSecretName(cluster.name, purpose)),
      ),
    });
    return { ca: pair('ca'), etcd: pair('etcd'), frontProxy: pair('proxy'), serviceAccount: pair('sa') };
  }

  /**
   * A kubeconfig for `server` with a fresh cluster-admin client certificate
   * (CN=kubernetes-admin, O=system:masters, valid one year), in Cluster API's layout.
   */
  async adminKubeconfig(cluster: PkiClusterRef, server: string): Promise<string> {
    const ca = await this.signingCa(cluster);
    const client = await this.keys.issueKeyPair(ca, {
      commonName: 'kubernetes-admin',
      organizations: ['system:masters'],
      usage: 'client',
      nowMs: this.clock.now(),
    });
    return renderKubeconfig({
      clusterName: cluster.name,
      server,
      caPem: ca.certPem,
      ...client,
    });
  }

  /**
   * The version of the cluster's current CA (its Secret's resourceVersion): a client
   * certificate issued under it is good until this changes.
   */
  async caVersion(cluster: PkiClusterRef): Promise<string> {
    return (await this.caSecret(cluster)).resourceVersion;
  }

  /** CA and a cluster-admin client certificate for Magnetar's own clients; reused until the CA changes. */
  async clientTlsOptions(cluster: PkiClusterRef): Promise<ClientTlsOptions> {
    const caSecret = await this.caSecret(cluster);
    return this.cached(this.clientTls, cluster, caSecret.resourceVersion, async () => {
      const ca = await this.signingCa(cluster);
      const pair = await this.keys.issueKeyPair(ca, {
        commonName: 'magnetar',
        organizations: ['system:masters'],
        usage: 'client',
        nowMs: this.clock.now(),
      });
      return { ca: caSecret.certPem, cert: pair.certPem, key: pair.keyPem };
    });
  }

  /** A fresh server certificate from the cluster CA, with these SANs (the emulated API endpoint). */
  async issueServerCertificate(
    cluster: PkiClusterRef,
    names: { dnsNames: string[]; ips: string[] },
  ): Promise<ServerTlsMaterial> {
    const caSecret = await this.caSecret(cluster);
    const ca = await this.signingCa(cluster);
    const pair = await this.keys.issueKeyPair(ca, {
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: names.dnsNames,
      ips: names.ips,
      nowMs: this.clock.now(),
    });
    return { ...pair, caPem: caSecret.certPem, caVersion: caSecret.resourceVersion };
  }

  /**
   * The version of a cluster's current Kubernetes CA (its Secret's resourceVersion) without
   * reading the Secret, or undefined when the cluster has no CA yet.
   */
  async currentCaVersion(cluster: Pick<PkiClusterRef, 'namespace' | 'name'>): Promise<string | undefined> {
    return this.store.versionOf(SECRET_TYPE_KEY, cluster.namespace, caSecretName(cluster.name, 'ca'));
  }

  // --- internals ---

  /**
   * The Kubernetes CA Secret: when it exists (the common case) a version check, and one read
   * only when it changed (a rotation) or was not read yet; creation of all material otherwise.
   * The workload clients ask for it on every call to a cluster, so every idle probe does.
   */
  private async caSecret(cluster: PkiClusterRef): Promise<StoredKeyPair> {
    const name = caSecretName(cluster.name, 'ca');
    const version = await this.store.versionOf(SECRET_TYPE_KEY, cluster.namespace, name);
    if (version === undefined) return (await this.ensure(cluster)).ca;
    // a change between the version check and the read is found by the next check
    return this.cached(this.caSecrets, cluster, version, async () => {
      const secret = await this.store.get(SECRET_TYPE_KEY, cluster.namespace, name);
      return secret ? readCaSecret(secret) : (await this.ensure(cluster)).ca;
    });
  }

  private async signingCa(cluster: PkiClusterRef): Promise<PemKeyPair> {
    const caSecret = await this.caSecret(cluster);
    return this.cached(this.signing, cluster, caSecret.resourceVersion, async () => ({
      certPem: caSecret.certPem,
      keyPem: open(
        this.key,
        caSecret.sealedKey,
        keyContext(cluster.namespace, caSecretName(cluster.name, 'ca')),
      ),
    }));
  }

  private cached<T>(
    map: Map<string, CacheEntry<T>>,
    cluster: Pick<PkiClusterRef, 'namespace' | 'name'>,
    version: string,
    make: () => Promise<T>,
  ): Promise<T> {
    const id = `${cluster.namespace}/${cluster.name}`;
    const hit = map.get(id);
    if (hit && hit.version === version) {
      map.delete(id); // refresh its place in the LRU order
      map.set(id, hit);
      return hit.value;
    }
    const value = make();
    value.catch(() => map.delete(id));
    map.set(id, { version, value });
    while (map.size > this.cacheSize) map.delete(map.keys().next().value!);
    return value;
  }

  private forget(cluster: Pick<PkiClusterRef, 'namespace' | 'name'>): void {
    const id = `${cluster.namespace}/${cluster.name}`;
    this.signing.delete(id);
    this.clientTls.delete(id);
    this.caSecrets.delete(id);
  }

  private async readSecrets(
    cluster: Pick<PkiClusterRef, 'namespace' | 'name'>,
  ): Promise<Record<CaPurpose, ApiObject | undefined>> {
    const got = await Promise.all(
      CA_PURPOSES.map((p) =>
        this.store.get(SECRET_TYPE_KEY, cluster.namespace, caSecretName(cluster.name, p)),
      ),
    );
    return { ca: got[0], etcd: got[1], proxy: got[2], sa: got[3] };
  }

  /** Read the four Secrets, creating the missing ones. */
  private async ensure(cluster: PkiClusterRef): Promise<Record<CaPurpose, StoredKeyPair>> {
    let secrets = await this.readSecrets(cluster);
    if (CA_PURPOSES.some((p) => !secrets[p])) {
      const id = `${cluster.namespace}/${cluster.name}`;
      let pending = this.creating.get(id);
      if (!pending) {
        pending = this.createMissing(cluster, secrets).finally(() => this.creating.delete(id));
        this.creating.set(id, pending);
      }
      await pending;
      secrets = await this.readSecrets(cluster);
    }
    const out = {} as Record<CaPurpose, StoredKeyPair>;
    for (const p of CA_PURPOSES) {
      const s = secrets[p];
      if (!s)
        throw new ConflictError(
          `the ${p} key pair of cluster ${cluster.name} was deleted while being read; retry`,
        );
      out[p] = readCaSecret(s);
    }
    return out;
  }

  private async createMissing(
    cluster: PkiClusterRef,
    secrets: Record<CaPurpose, ApiObject | undefined>,
  ): Promise<void> {
    const missing = CA_PURPOSES.filter((p) => !secrets[p]);
    const pairs = await Promise.all(
      missing.map((purpose) =>
        purpose === 'sa'
          ? this.keys.createServiceAccountKey()
          : this.keys.createCa(cluster.displayName, this.clock.now()),
      ),
    );
    const ops: WriteOp[] = missing.map((purpose, i) => {
      const pair = pairs[i]!;
      const name = caSecretName(cluster.name, purpose);
      return {
        op: 'create',
        object: newCaSecret(
          cluster.namespace,
          cluster.name,
          purpose,
          pair.certPem,
          seal(this.key, pair.keyPem, keyContext(cluster.namespace, name)),
        ),
      };
    });
    try {
      await this.store.commit(ops);
    } catch (err) {
      // Another process created them first; the caller re-reads theirs.
      if (!(err instanceof ConflictError)) throw err;
    }
  }
}
