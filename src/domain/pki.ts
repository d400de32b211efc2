/**
 * Per-cluster certificate authorities, as the Magnum façade (`/v1/certificates`) and the
 * controllers (kubeadm bootstrap data) need them. Implemented in `src/workload` (CA material
 * stored encrypted at rest as Secrets in the cluster's namespace, like Cluster API's
 * `<cluster>-ca`, `-etcd`, `-proxy`, `-sa`).
 */

/** Which cluster: the CAPI Cluster (namespace = project id, name = `capiClusterName(...)`), and the CA subject CN. */
export interface PkiClusterRef {
  namespace: string;
  /** CAPI Cluster name (Magnum's `stack_id`). */
  name: string;
  /** Subject CN of the CAs (Magnum uses the cluster's name). */
  displayName: string;
}

/** The kinds of CA a cluster has. */
export type CaKind = 'kubernetes' | 'etcd' | 'front_proxy';

export interface ClusterPki {
  /** CA PEM of a cluster, creating all of the cluster's CAs on first use (idempotent). */
  caPem(cluster: PkiClusterRef, kind?: CaKind): Promise<string>;
  /**
   * Sign a PEM CSR with the cluster's Kubernetes CA. InputError for invalid CSRs (bad signature,
   * key too weak, CA usage requested); NotAllowedError when the subject asks for
   * O=system:masters and `allowSystemMasters` is false. Returns the certificate PEM without a
   * trailing newline.
   */
  signCsr(cluster: PkiClusterRef, csrPem: string, options: { allowSystemMasters: boolean }): Promise<string>;
  /** Replace the cluster's CAs; certificates signed before stop being trusted by the cluster's API endpoint. */
  rotateCa(cluster: PkiClusterRef): Promise<void>;
  /** Remove every CA and key of the cluster (on cluster delete). */
  deleteCluster(cluster: Pick<PkiClusterRef, 'namespace' | 'name'>): Promise<void>;
}
