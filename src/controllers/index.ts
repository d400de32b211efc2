export * from './runtime/index.ts';
export { createControllers, createEngine, type Controllers } from './engine.ts';
export { DEFAULT_SETTINGS, type ControllerDeps, type ControllerPki, type EngineSettings, type WorkloadAccessApi, type WorkloadClientApi, type WorkloadNode } from './deps.ts';
