/**
 * Business errors shared by every layer. Each carries a stable `code`, an HTTP-ish
 * `status` used by the API error mappers, and says whether a retry may help.
 * Only the API layer turns them into HTTP responses (see `api/errors.ts`).
 */
export type ErrorOptions = { cause?: unknown; code?: string; details?: Record<string, unknown> };

export abstract class MagnetarError extends Error {
  /** HTTP status the API layer answers with. */
  abstract readonly status: number;
  /** Stable machine-readable code, e.g. `NotFound`, `AlreadyExists`, `QuotaExceeded`. */
  readonly code: string;
  /** Extra data for the error body (never secrets). */
  readonly details: Record<string, unknown> | undefined;
  /** Whether retrying the same call later may succeed. */
  readonly retryable: boolean = false;

  constructor(message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? new.target.name.replace(/Error$/, '');
    this.details = options.details;
  }
}

/** The caller sent something invalid (400). */
export class InputError extends MagnetarError {
  readonly status = 400;
}
/** No or bad credentials (401). */
export class AuthenticationError extends MagnetarError {
  readonly status = 401;
}
/** Authenticated, but not allowed (403). Quota refusals use code `QuotaExceeded`. */
export class NotAllowedError extends MagnetarError {
  readonly status = 403;
}
/** The thing does not exist or is not visible to the caller (404). */
export class NotFoundError extends MagnetarError {
  readonly status = 404;
}
/** The request cannot be served in the representation/version asked for (406). */
export class NotAcceptableError extends MagnetarError {
  readonly status = 406;
}
/** The state of the thing forbids the change: duplicate, stale resourceVersion, in use (409). */
export class ConflictError extends MagnetarError {
  readonly status = 409;
}
/** The request body is larger than allowed (413). */
export class PayloadTooLargeError extends MagnetarError {
  readonly status = 413;
}
/** Valid syntax, but semantically unprocessable (422), as Kubernetes answers invalid objects. */
export class UnprocessableError extends MagnetarError {
  readonly status = 422;
}
/** A dependency failed in a way a retry may fix (503). */
export class UnavailableError extends MagnetarError {
  readonly status = 503;
  override readonly retryable = true;
}

/** True when `err` is one of ours. */
export function isMagnetarError(err: unknown): err is MagnetarError {
  return err instanceof MagnetarError;
}
