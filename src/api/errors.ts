import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  InputError,
  isMagnetarError,
  NotAcceptableError,
  PayloadTooLargeError,
  type MagnetarError,
} from '../domain/index.ts';

/**
 * The one place where errors become HTTP. Each façade picks the body shape its clients
 * parse: Magnum (`{"errors":[…]}`), Keystone (`{"error":{…}}`), Kubernetes (`Status`).
 * Unexpected errors are logged with the request id and answered as a bare 500.
 */

/** Turn framework errors (bad JSON, too large, unsupported media type) into ours; undefined if unexpected. */
export function asMagnetarError(err: unknown): MagnetarError | undefined {
  if (isMagnetarError(err)) return err;
  const fe = err as Partial<FastifyError> & { type?: string };
  if (!fe || typeof fe !== 'object') return undefined;
  switch (fe.code ?? '') {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('Request body is too large.', { code: 'BodyTooLarge' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new InputError(`Unsupported Content-Type. Send application/json.`, {
        code: 'UnsupportedMediaType',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InputError('The request body is empty; a JSON body is required.', { code: 'EmptyBody' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new InputError('The request body is not valid JSON.', { code: 'MalformedJson' });
    default:
      break;
  }
  if (fe.validation) return new InputError(fe.message ?? 'Invalid request.', { code: 'Invalid' });
  if (err instanceof SyntaxError)
    return new InputError(`The request body is not valid JSON: ${err.message}.`, { code: 'MalformedJson' });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new InputError(fe.message ?? 'Bad request.', { code: 'BadRequest' });
  }
  return undefined;
}

/** Magnum's title: the message up to its first period. */
export function magnumTitle(message: string): string {
  const i = message.indexOf('.');
  return i > 0 ? message.slice(0, i) : message;
}

/** Magnum's error body. */
export function magnumErrorBody(status: number, message: string, extra: Record<string, unknown> = {}) {
  return {
    errors: [
      {
        request_id: '',
        code: status >= 500 ? 'server' : 'client',
        status,
        title: magnumTitle(message),
        detail: message,
        links: [],
        ...extra,
      },
    ],
  };
}

/** Keystone's error body. */
export function keystoneErrorBody(status: number, title: string, message: string) {
  return { error: { code: status, title, message } };
}

const KEYSTONE_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  500: 'Internal Server Error',
};

const KUBE_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** A Kubernetes `Status` failure body. */
export function kubeStatusBody(
  status: number,
  message: string,
  reason?: string,
  details?: Record<string, unknown>,
) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reason ?? KUBE_REASONS[status] ?? 'Unknown',
    ...(details ? { details } : {}),
    code: status,
  };
}

/** Which body shape a scope answers with. */
export type ErrorShape = 'magnum' | 'keystone' | 'kube';

function unexpected(req: FastifyRequest, err: unknown): void {
  req.log.error({ err, requestId: req.id }, 'unexpected error');
}

/** A Fastify error handler that renders errors in `shape`. */
export function errorHandler(shape: ErrorShape) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const known = asMagnetarError(err);
    if (!known) unexpected(req, err);
    const status = known?.status ?? 500;
    const message = known?.message ?? `An unexpected error occurred (request ${req.id}).`;
    void reply.code(status);
    switch (shape) {
      case 'magnum':
        return reply.send(magnumErrorBody(status, message, known?.details ?? {}));
      case 'keystone':
        return reply.send(keystoneErrorBody(status, KEYSTONE_TITLES[status] ?? 'Error', message));
      case 'kube': {
        const reason =
          known?.code === 'AlreadyExists'
            ? 'AlreadyExists'
            : known?.code === 'Expired'
              ? 'Expired'
              : undefined;
        const st = known?.code === 'Expired' ? 410 : status;
        void reply.code(st);
        return reply.send(kubeStatusBody(st, message, reason));
      }
    }
  };
}

/** A not-found handler that renders in `shape`. */
export function notFoundHandler(shape: ErrorShape) {
  return (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const msg = `The resource could not be found: ${req.method} ${req.url.split('?')[0]}.`;
    void reply.code(404);
    switch (shape) {
      case 'magnum':
        return reply.send(magnumErrorBody(404, msg));
      case 'keystone':
        return reply.send(keystoneErrorBody(404, 'Not Found', msg));
      case 'kube':
        return reply.send(kubeStatusBody(404, `the server could not find the requested resource`));
    }
  };
}

/** For microversion failures etc. */
export function notAcceptable(message: string, extra: Record<string, unknown> = {}): NotAcceptableError {
  return new NotAcceptableError(message, { details: extra });
}
