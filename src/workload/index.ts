/**
 * The workload side of Magnetar: per-cluster PKI, clients of workload clusters' Kubernetes
 * APIs, and (for the embedded cloud) the emulation of what kubeadm would have produced on
 * the cluster's servers.
 */
export {
  StorePki,
  type StorePkiOptions,
  type KubeadmMaterial,
  type ClientTlsOptions,
  type ServerTlsMaterial,
} from './pki/store-pki.ts';
export { inlineKeyMaker, type KeyMaker } from './pki/key-maker.ts';
export { KeyMakerThread } from './pki/key-maker-thread.ts';
export { loadOrCreateKey, KEY_FILE } from './pki/encryption.ts';
export { renderKubeconfig, type KubeconfigParams } from './pki/kubeconfig.ts';
export { CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, caSecretName, type CaPurpose } from './pki/ca-secrets.ts';
export {
  WorkloadClient,
  drainSkips,
  type WorkloadClientOptions,
  type EvictionResult,
  type DrainResult,
  type BootstrapTokenInput,
  type SecretInput,
  type Named,
} from './client/workload-client.ts';
export {
  WorkloadAccess,
  workloadEndpointOf,
  pkiRefOf,
  type WorkloadAccessOptions,
  type ClientCredentialSource,
} from './client/workload-access.ts';
export { errorFromResponse, type KubeTls } from './client/kube-http.ts';
export {
  WorkloadEmulator,
  infrastructureProvisioned,
  type WorkloadEmulatorOptions,
} from './emulator/workload-emulator.ts';
export { DEFAULT_TIMING, type EmulationTiming } from './emulator/cluster-model.ts';
export { EMULATED_OS_IMAGE } from './emulator/system-objects.ts';
export {
  WorkloadTypes,
  WORKLOAD_API_VERSION,
  WORKLOAD_CLUSTER_LABEL,
  WORKLOAD_NAMESPACE_LABEL,
} from './emulator/persisted-objects.ts';
export {
  takeEmulatedSnapshot,
  emulatedSnapshotStatus,
  restoreEmulatedSnapshot,
  EMULATED_SNAPSHOT_FORMAT,
  type EmulatedSnapshot,
  type SnapshotClusterRef,
} from './snapshot/emulated-etcd.ts';
export {
  BackupKeys,
  SnapshotIntegrityError,
  decryptSnapshot,
  encryptSnapshot,
  readSnapshotHeader,
  sha256Checksum,
  type SnapshotHeader,
} from './snapshot/snapshot-crypto.ts';
