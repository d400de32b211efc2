export * from './errors.ts';
export * from './object.ts';
export * from './labels.ts';
export * from './magnum.ts';
export * from './auth.ts';
export * from './config.ts';
export * from './clock.ts';
export * from './cloud-lookup.ts';
export * from './logger.ts';
export * from './pki.ts';
export * from './capi.ts';
export * from './capi-schemas.ts';
export * from './policy.ts';
export * from './kube/index.ts';
export * from './backup.ts';
export * from './json.ts';
export {
  launchThread,
  startModuleWorker,
  superviseThread,
  threadFigures,
  type LaunchedThread,
  type ReadyThread,
  type SupervisedThread,
} from './module-worker.ts';
export { currentThreadId, majorGcCounter, majorGcsOf, threadCpuSeconds } from './thread-cpu.ts';
export { throttled, type Throttled } from './throttle.ts';
