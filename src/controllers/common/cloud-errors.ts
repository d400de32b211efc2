import { CloudError } from '../../cloud/index.ts';

/**
 * How the infrastructure controllers treat cloud failures (CAPO's habits, plus surfacing the
 * cloud's own words): quota refusals, invalid requests and policy refusals will not fix
 * themselves — they become a failed condition with the cloud's message and reconciling stops
 * until the object changes; everything else (5xx, timeouts, conflicts while a load balancer is
 * busy, a one-off "not found" while associating) is retried with backoff.
 */
export function isTerminalCloudError(err: unknown): err is CloudError {
  if (!(err instanceof CloudError)) return false;
  switch (err.kind) {
    case 'quota':
    case 'bad-request':
    case 'forbidden':
      return true;
    case 'not-found':
    case 'conflict':
    case 'unauthorized':
    case 'transient':
    case 'timeout':
    case 'network':
    case 'other':
      return false;
  }
}

/** The message to show for a cloud failure: the cloud's own text, with the service. */
export function cloudErrorMessage(err: unknown): string {
  if (err instanceof CloudError) {
    const what =
      err.kind === 'quota' ? 'quota exceeded' : err.status !== undefined ? `HTTP ${err.status}` : err.kind;
    return `${err.service} ${what}: ${err.cloudMessage}`;
  }
  return err instanceof Error ? err.message : String(err);
}
