/**
 * Throw from a reconcile to stop retrying: the condition will not fix itself (bad input, a
 * missing reference the user must create). The manager logs it and leaves the key alone until
 * the object changes (spec, metadata or deletion, not status) or a watched object maps to it.
 * The reconciler sets a failed condition with a reason a person can act on before throwing.
 */
export class TerminalError extends Error {
  /** Never retried on its own. */
  readonly retryable = false;

  constructor(
    message: string,
    /** Machine-readable reason, e.g. `MissingTemplate`; mirrors the failed condition's reason. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TerminalError';
  }
}
