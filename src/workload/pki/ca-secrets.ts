import { z } from 'zod';
import type { ApiObject, NewObject } from '../../domain/index.ts';

/**
 * How cluster CA material is stored: one `Secret` per CA, named and labelled as Cluster API
 * does (`<cluster>-ca`, `-etcd`, `-proxy`, `-sa`, type `cluster.x-k8s.io/secret`, label
 * `cluster.x-k8s.io/cluster-name`), in the cluster's namespace (the project).
 *
 * Stored Secret shape (the store has spec/status; a Secret's `type` and `data` live in spec):
 * `spec.type`, `spec.data` (base64 values as in Kubernetes). The certificate (or, for `sa`,
 * the public key) is `tls.crt`; the private key is never stored in clear: `tls.key.enc`
 * holds its AES-256-GCM envelope (see encryption.ts).
 */

/** Store type key of Secrets. */
export const SECRET_TYPE_KEY = 'Secret';
/** Secret type of Cluster API cluster certificates. */
export const CLUSTER_SECRET_TYPE = 'cluster.x-k8s.io/secret';
/** Label naming the CAPI cluster a Secret belongs to. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Annotation recording how many times the CA was rotated. */
export const CA_GENERATION_ANNOTATION = 'workload.magnetar.io/ca-generation';

/** The four key pairs of a cluster, by Secret name suffix. */
export type CaPurpose = 'ca' | 'etcd' | 'proxy' | 'sa';
export const CA_PURPOSES: readonly CaPurpose[] = ['ca', 'etcd', 'proxy', 'sa'];

/** Name of a cluster's Secret of that purpose. */
export function caSecretName(cluster: string, purpose: CaPurpose): string {
  return `${cluster}-${purpose}`;
}

/** Additional authenticated data binding an encrypted key to its Secret. */
export function keyContext(namespace: string, secretName: string): string {
  return `${namespace}/${secretName}/tls.key`;
}

/** The stored Secret spec (zod: read back from the store). */
export const CaSecretSpecSchema = z.object({
  type: z.literal(CLUSTER_SECRET_TYPE),
  data: z.object({
    'tls.crt': z.string().min(1),
    'tls.key.enc': z.string().min(1),
  }),
});
export type CaSecretSpec = z.infer<typeof CaSecretSpecSchema>;

/** Decoded content of a CA Secret. */
export interface StoredKeyPair {
  /** Certificate PEM (for `sa`: the public key PEM). */
  certPem: string;
  /** AES-GCM envelope of the private key PEM. */
  sealedKey: string;
  resourceVersion: string;
  generation: number;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** Build the Secret spec of a key pair. */
export function caSecretSpec(certPem: string, sealedKey: string): CaSecretSpec {
  return { type: CLUSTER_SECRET_TYPE, data: { 'tls.crt': b64(certPem), 'tls.key.enc': b64(sealedKey) } };
}

/** A new CA Secret object. */
export function newCaSecret(
  namespace: string,
  cluster: string,
  purpose: CaPurpose,
  certPem: string,
  sealedKey: string,
): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: caSecretName(cluster, purpose),
      namespace,
      labels: { [CLUSTER_NAME_LABEL]: cluster },
      annotations: { [CA_GENERATION_ANNOTATION]: '1' },
    },
    spec: caSecretSpec(certPem, sealedKey),
  };
}

/** Read a stored CA Secret; throws (with the Secret named) when it is not in the expected shape. */
export function readCaSecret(secret: ApiObject): StoredKeyPair {
  const parsed = CaSecretSpecSchema.safeParse(secret.spec);
  if (!parsed.success) {
    throw new Error(
      `Secret ${secret.metadata.namespace}/${secret.metadata.name} is not a Magnetar CA secret: ${parsed.error.issues.map((i) => i.path.join('.') + ' ' + i.message).join('; ')}`,
    );
  }
  const generation = Number(secret.metadata.annotations[CA_GENERATION_ANNOTATION] ?? '1');
  return {
    certPem: unb64(parsed.data.data['tls.crt']),
    sealedKey: unb64(parsed.data.data['tls.key.enc']),
    resourceVersion: secret.metadata.resourceVersion,
    generation: Number.isFinite(generation) ? generation : 1,
  };
}
