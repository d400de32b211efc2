export * from './runtime/index.ts';
export { createControllers, createEngine, type Controllers } from './engine.ts';
export {
  DEFAULT_SETTINGS,
  type ControllerDeps,
  type ControllerPki,
  type EngineSettings,
  type WorkloadAccessApi,
  type WorkloadClientApi,
  type WorkloadNode,
} from './deps.ts';
export { createServiceClouds, type ServiceClouds, type ServiceCloudsOptions } from './service-clouds.ts';
export {
  emulatedSnapshotter,
  unavailableSnapshotter,
  etcdSnapshotJob,
  type BackupDeps,
  type EtcdSnapshotter,
  type SnapshotTarget,
} from './backup/index.ts';
