/**
 * The controller runtime's interface as this package uses it (re-exported from the runtime).
 */
export type { ObjectRef, ReconcileContext, ReconcileResult, Reconciler } from '../runtime/index.ts';
export { TerminalError } from '../runtime/index.ts';
