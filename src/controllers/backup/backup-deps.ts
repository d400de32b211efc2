import type { BackupPolicy, SnapshotStatus } from '../../domain/index.ts';
import { UnavailableError, UnprocessableError } from '../../domain/index.ts';
import type { ObjectStore } from '../../store/index.ts';
import {
  emulatedSnapshotStatus,
  restoreEmulatedSnapshot,
  takeEmulatedSnapshot,
  type BackupKeys,
} from '../../workload/index.ts';

/** Which cluster a snapshot is taken of or restored into. */
export interface SnapshotTarget {
  /** Project (store namespace). */
  project: string;
  /** CAPI Cluster name. */
  capiName: string;
  /** Magnum cluster uuid. */
  clusterUid: string;
}

/**
 * How etcd snapshots are taken and restored. On the embedded cloud the emulated control plane
 * does it ({@link emulatedSnapshotter}); on a real cloud it is the snapshot Job of
 * `snapshot-job.ts`, not run by this version ({@link unavailableSnapshotter}).
 */
export interface EtcdSnapshotter {
  /** Take a snapshot (`etcdctl snapshot save` + `snapshot status`). */
  take(target: SnapshotTarget): Promise<{ data: Buffer; status: SnapshotStatus }>;
  /**
   * Check snapshot bytes (`etcdutl snapshot status`) and that they were taken of cluster
   * `clusterUid`; throws with a reason when they are not usable.
   */
  check(data: Buffer, clusterUid: string): SnapshotStatus;
  /** Replace the cluster's state with the snapshot, all or nothing. */
  restore(target: SnapshotTarget, data: Buffer): Promise<void>;
}

/** What the backup controllers need besides the engine's dependencies. */
export interface BackupDeps {
  policy: BackupPolicy;
  /** Per-cluster data keys, sealed with the deployment's key. */
  keys: BackupKeys;
  snapshotter: EtcdSnapshotter;
}

/** Snapshots of emulated control planes (embedded cloud). */
export function emulatedSnapshotter(store: ObjectStore): EtcdSnapshotter {
  return {
    take: (t) => takeEmulatedSnapshot(store, t),
    check(data, clusterUid) {
      const { snapshot, status } = emulatedSnapshotStatus(data);
      if (snapshot.cluster.clusterUid !== clusterUid)
        throw new UnprocessableError(
          `the snapshot was taken of cluster ${snapshot.cluster.clusterUid}, not ${clusterUid}`,
        );
      return status;
    },
    async restore(t, data) {
      await restoreEmulatedSnapshot(store, t, emulatedSnapshotStatus(data).snapshot);
    },
  };
}

/** Real clouds: the snapshot Job is rendered (see `snapshot-job.ts`) but not run by this version. */
export function unavailableSnapshotter(): EtcdSnapshotter {
  const no = (): never => {
    throw new UnavailableError(
      'etcd snapshots of clusters on an external cloud need the snapshot Job (docs/adr/0007-etcd-backups.md), which this version does not run',
    );
  };
  return { take: async () => no(), check: () => no(), restore: async () => no() };
}
