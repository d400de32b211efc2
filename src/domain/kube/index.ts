/** Pure pieces of the Kubernetes API conventions, shared by the workload emulator, the workload client and the kube façade. */
export * from './wire.ts';
export * from './duration.ts';
export * from './table.ts';
export * from './patch.ts';
export * from './field-selector.ts';
export * from './discovery.ts';
