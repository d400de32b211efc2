import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  InputError,
  isMagnetarError,
  MagnetarError,
  PayloadTooLargeError,
  type ErrorOptions,
  type Logger,
} from '../../domain/index.ts';

/**
 * Errors as each OpenStack service renders them. Handlers throw the domain error classes (or
 * {@link CloudHttpError} for statuses the domain has no class for); the scope's error handler
 * renders them in its service's body shape, so clients parse them exactly as they parse the real
 * service's errors.
 */

/** An error with an explicit HTTP status (injected faults, 5xx, 406 version errors, 413 quota in Cinder). */
export class CloudHttpError extends MagnetarError {
  readonly status: number;
  override readonly retryable: boolean;
  constructor(status: number, message: string, options: ErrorOptions = {}) {
    super(message, options);
    this.status = status;
    this.retryable = status >= 500 && status !== 501;
  }
}

/** Which service's error body to produce. */
export type ErrorStyle = 'nova' | 'cinder' | 'neutron' | 'octavia' | 'glance' | 'swift' | 'admin';

/** Nova's and Cinder's fault keys by status. */
const FAULT_KEYS: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Neutron's error type for statuses without a more specific code. */
const NEUTRON_TYPES: Record<number, string> = {
  400: 'HTTPBadRequest',
  401: 'HTTPUnauthorized',
  403: 'HTTPForbidden',
  404: 'HTTPNotFound',
  405: 'HTTPMethodNotAllowed',
  409: 'HTTPConflict',
  413: 'HTTPRequestEntityTooLarge',
  500: 'HTTPInternalServerError',
  503: 'HTTPServiceUnavailable',
};

/** Generic codes of the domain classes and the store, not meaningful as Neutron types. */
const GENERIC_CODES = new Set([
  'Input',
  'NotFound',
  'Conflict',
  'NotAllowed',
  'AlreadyExists',
  'Unavailable',
  'CloudHttp',
  'PayloadTooLarge',
  'Authentication',
  'NotAcceptable',
]);

/** A rendered error: status, content type and body. */
export interface RenderedError {
  status: number;
  contentType: string;
  body: string;
}

/** Render `message` at `status` in `style`; `code` is Neutron's `type` when it is specific. */
export function renderError(
  style: ErrorStyle,
  status: number,
  message: string,
  code?: string,
  details?: Record<string, unknown>,
  accept = '',
): RenderedError {
  const json = (body: unknown): RenderedError => ({
    status,
    contentType: 'application/json',
    body: JSON.stringify(body),
  });
  switch (style) {
    case 'nova':
    case 'cinder':
      return json({ [FAULT_KEYS[status] ?? 'computeFault']: { code: status, message, ...(details ?? {}) } });
    case 'neutron': {
      const type = code && !GENERIC_CODES.has(code) ? code : (NEUTRON_TYPES[status] ?? 'HTTPError');
      return json({ NeutronError: { type, message, detail: '' } });
    }
    case 'octavia':
      return json({ faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null });
    case 'glance': {
      // webob: JSON when the client accepts it, an HTML page otherwise.
      const title = REASONS[status] ?? 'Error';
      if (accept.includes('application/json')) {
        return json({ message: `${message}<br /><br />\n\n\n`, code: `${status} ${title}`, title });
      }
      const body = `<html>\n <head>\n  <title>${status} ${title}</title>\n </head>\n <body>\n  <h1>${status} ${title}</h1>\n  ${escapeHtml(message)}<br /><br />\n\n\n\n </body>\n</html>`;
      return { status, contentType: 'text/html; charset=UTF-8', body };
    }
    case 'swift':
      return {
        status,
        contentType: 'text/html; charset=UTF-8',
        body: `<html><h1>${REASONS[status] ?? 'Error'}</h1><p>${escapeHtml(message)}</p></html>`,
      };
    case 'admin':
      return json({ error: { code: status, title: REASONS[status] ?? 'Error', message } });
  }
}

function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/'/g, '&#x27;')
    .replace(/"/g, '&quot;');
}

const GLANCE_401 =
  'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.';

/** keystonemiddleware's answer to a missing or invalid token, the same for every service. */
export function unauthorizedBody(): string {
  return JSON.stringify({
    error: {
      code: 401,
      title: 'Unauthorized',
      message: 'The request you have made requires authentication.',
    },
  });
}

/** Turn whatever was thrown into a known error, or undefined when it is unexpected. */
export function asKnownError(err: unknown): MagnetarError | undefined {
  if (isMagnetarError(err)) return err;
  if (!err || typeof err !== 'object') return undefined;
  const fe = err as { code?: unknown; statusCode?: unknown; message?: unknown; validation?: unknown };
  const message = typeof fe.message === 'string' ? fe.message : 'Bad request';
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('Request is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new CloudHttpError(415, 'Unsupported Content-Type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new InputError('Malformed request body');
    default:
      break;
  }
  if (err instanceof SyntaxError) return new InputError('Malformed request body');
  if (fe.validation) return new InputError(message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new CloudHttpError(fe.statusCode, message);
  }
  return undefined;
}

/** A Fastify error handler rendering in `style`; unexpected errors are logged and answered 500. */
export function cloudErrorHandler(style: ErrorStyle, log: Logger) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const known = asKnownError(err);
    if (!known) log.error({ err, requestId: req.id, url: req.url }, 'embedded cloud: unexpected error');
    const status = known?.status ?? 500;
    const message = known?.message ?? `An unexpected error occurred (request ${req.id}).`;
    const accept = String(req.headers.accept ?? '');
    if (status === 401) {
      if (style === 'glance' || style === 'swift') {
        const r = renderError(style, 401, GLANCE_401, undefined, undefined, accept);
        return reply.code(401).type(r.contentType).send(r.body);
      }
      return reply.code(401).type('application/json').send(unauthorizedBody());
    }
    const r = renderError(style, status, message, known?.code, known?.details, accept);
    return reply.code(r.status).type(r.contentType).send(r.body);
  };
}

/** A not-found handler rendering in `style`. */
export function cloudNotFoundHandler(style: ErrorStyle) {
  return (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const r = renderError(
      style,
      404,
      'The resource could not be found.',
      undefined,
      undefined,
      String(req.headers.accept ?? ''),
    );
    return reply.code(404).type(r.contentType).send(r.body);
  };
}
