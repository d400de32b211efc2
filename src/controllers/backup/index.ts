/** etcd backups: the backup and schedule reconcilers, the pre-change hook, the snapshotters. */
export {
  emulatedSnapshotter,
  unavailableSnapshotter,
  type BackupDeps,
  type EtcdSnapshotter,
  type SnapshotTarget,
} from './backup-deps.ts';
export { backupReconciler } from './backup-controller.ts';
export { backupScheduleReconciler, newBackup, backupsOf } from './backup-schedule.ts';
export { preChangeSnapshot, controlPlaneChange, type PreChangeVerdict } from './pre-change-snapshot.ts';
export { etcdSnapshotJob, type SnapshotJobInput } from './snapshot-job.ts';
