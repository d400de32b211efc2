import { CloudError } from '../cloud/index.ts';

/**
 * One line for a failure, as `openstack` prints API errors:
 * `<message> (HTTP <status>) (Request-ID: req-…)`; other failures give their message.
 */
export function describeError(err: unknown): string {
  if (err instanceof CloudError) {
    const message = err.cloudMessage.replace(/\s+/g, ' ').trim().replace(/\.$/, '') || httpPhrase(err.status);
    if (err.status === undefined) return message;
    const rid = err.requestId ? ` (Request-ID: ${err.requestId})` : '';
    return `${message} (HTTP ${err.status})${rid}`;
  }
  if (err instanceof Error) return err.message.replace(/\s*\n\s*/g, ' ');
  return String(err);
}

const PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function httpPhrase(status: number | undefined): string {
  return (status === undefined ? undefined : PHRASES[status]) ?? 'request failed';
}

/** True when the API said the object does not exist (404). */
export function isNotFoundError(err: unknown): boolean {
  return err instanceof CloudError && (err.status === 404 || err.kind === 'not-found');
}
