/**
 * The controller runtime: a reconcile framework over the object store (work queue, backoff,
 * leases, MService heartbeat). Controllers implement {@link Reconciler} and are registered with a
 * {@link ControllerManager}.
 */
export type {
  ObjectRef,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
  WatchSpec,
  EventSource,
  ObjectView,
  ManagerOptions,
  ControllerStats,
} from './types.ts';
export { TerminalError } from './terminal-error.ts';
export { ControllerManager } from './manager.ts';
export { ownerRefsMapper } from './mappers.ts';
export { backoffDelay } from './backoff.ts';
export { CONDUCTOR_BINARY } from './service-heartbeat.ts';
