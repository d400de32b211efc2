import { ConflictError, UnavailableError, isMagnetarError } from '../../domain/index.ts';

/** SQLSTATE classes and codes a retry may fix: connection loss, shutdown, overload, serialization. */
const TRANSIENT_CLASSES = ['08', '53', '57'];
const TRANSIENT_CODES = ['40001', '40P01', '55P03'];
/** Node socket errors of a lost or refused connection. */
const SOCKET_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
];

function codeOf(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

/**
 * Turn a driver error into a domain error where one fits: an unreachable or restarting server
 * is UnavailableError (retryable, 503), a unique violation is ConflictError. Anything else is a
 * defect and passes through unchanged.
 */
export function mapPgError(err: unknown): Error {
  if (isMagnetarError(err)) return err;
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === '23505')
    return new ConflictError(`already exists: ${message}`, { code: 'AlreadyExists', cause: err });
  if (
    (code !== undefined && (TRANSIENT_CODES.includes(code) || SOCKET_CODES.includes(code))) ||
    (code !== undefined && code.length === 5 && TRANSIENT_CLASSES.includes(code.slice(0, 2))) ||
    /Connection terminated|connection timeout|Client was closed/i.test(message)
  ) {
    return new UnavailableError(`PostgreSQL is unavailable: ${message}`, {
      code: 'StoreUnavailable',
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(message);
}

/**
 * True when a statement failed because its (idle, pooled) connection was already gone: the
 * server was restarted or the connection killed. Such a statement never ran.
 */
export function isStaleConnection(err: unknown): boolean {
  const code = codeOf(err);
  if (code === '57P01' || code === '57P02' || code === '57P03' || code === 'ECONNRESET' || code === 'EPIPE')
    return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|terminating connection|Client has encountered a connection error/i.test(
    message,
  );
}
