import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  acceptsTable,
  buildTable,
  InputError,
  isMagnetarError,
  kubeStatus,
  PayloadTooLargeError,
  type IncludeObject,
  type KubeObject,
  type KubeStatus,
  type Logger,
  type Printer,
} from '../../../domain/index.ts';
import { decodeKubeProtobuf, KUBE_PROTOBUF } from './protobuf.ts';

/**
 * Request/response plumbing of the emulated API server: the caller's identity from its client
 * certificate, JSON bodies with a size limit, JSON answers, Tables for `kubectl get`, and
 * errors as Kubernetes `Status` objects.
 */

/** Who is calling (from the client certificate: CN = user, O = groups). */
export interface Caller {
  user: string;
  groups: string[];
}

/** Groups that are cluster-admin in a kubeadm cluster. */
const ADMIN_GROUPS = ['system:masters', 'kubeadm:cluster-admins'];

/** Callers per connection: a kept-alive connection's certificate is read once. */
const callers = new WeakMap<object, Caller>();

/** The caller of a request on a client-authenticated TLS socket. */
export function callerOf(req: IncomingMessage): Caller {
  const known = callers.get(req.socket);
  if (known) return known;
  const caller = callerOfCertificate((req.socket as TLSSocket).getPeerCertificate?.());
  callers.set(req.socket, caller);
  return caller;
}

function callerOfCertificate(cert: ReturnType<TLSSocket['getPeerCertificate']> | undefined): Caller {
  const subject = (cert?.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return {
    user: list(subject.CN)[0] ?? 'system:anonymous',
    groups: [...list(subject.O), 'system:authenticated'],
  };
}

/** True when the caller is cluster-admin. */
export function isAdmin(caller: Caller): boolean {
  return caller.groups.some((g) => ADMIN_GROUPS.includes(g));
}

const MAX_BODY = 3 * 1024 * 1024;

/**
 * Read a request body (undefined when empty): JSON, or Kubernetes' protobuf encoding for the
 * kinds {@link decodeKubeProtobuf} reads (what `kubectl create` sends).
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY)
      throw new PayloadTooLargeError('the request body is too large', { code: 'RequestEntityTooLarge' });
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  if (req.headers['content-type']?.split(';')[0]?.trim() === KUBE_PROTOBUF)
    return raw.length === 0 ? undefined : decodeKubeProtobuf(raw);
  const text = raw.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`the body of the request was in an unknown format: ${(err as Error).message}`, {
      code: 'BadRequest',
    });
  }
}

/** Send a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Send JSON already rendered as text. */
export function sendJsonText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-cache, private',
  });
  res.end(text);
}

/** Send plain text. */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const REASON_BY_CODE: Record<string, string> = {
  AlreadyExists: 'AlreadyExists',
  NotFound: 'NotFound',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  Forbidden: 'Forbidden',
  MethodNotAllowed: 'MethodNotAllowed',
  Expired: 'Expired',
  UnsupportedMediaType: 'UnsupportedMediaType',
};

/** Map an error to a `Status`; unexpected errors are logged and answered 500 without details. */
export function statusOf(err: unknown, log: Logger): KubeStatus {
  if (isMagnetarError(err)) {
    const status =
      err.code === 'MethodNotAllowed' ? 405 : err.code === 'UnsupportedMediaType' ? 415 : err.status;
    const details =
      err.details && (typeof err.details.name === 'string' || typeof err.details.kind === 'string')
        ? { name: err.details.name as string, kind: err.details.kind as string }
        : undefined;
    return kubeStatus(status, err.message, REASON_BY_CODE[err.code], details);
  }
  log.error(
    { err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) },
    'emulated workload API: unexpected error',
  );
  return kubeStatus(500, 'an error on the server has prevented the request from succeeding', 'InternalError');
}

/** Answer with an error. */
export function sendError(res: ServerResponse, err: unknown, log: Logger): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const status = statusOf(err, log);
  sendJson(res, status.code, status);
}

/** Query parameters of a list request. */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  watch: boolean;
  resourceVersion?: string;
  timeoutSeconds?: number;
  includeObject: IncludeObject;
}

/** Read the list/watch parameters. */
export function listQuery(url: URL): ListQuery {
  const p = url.searchParams;
  const watch = p.get('watch');
  const timeout = p.get('timeoutSeconds');
  const include = p.get('includeObject');
  return {
    ...(p.get('labelSelector') ? { labelSelector: p.get('labelSelector')! } : {}),
    ...(p.get('fieldSelector') ? { fieldSelector: p.get('fieldSelector')! } : {}),
    watch: watch === 'true' || watch === '1',
    ...(p.get('resourceVersion') ? { resourceVersion: p.get('resourceVersion')! } : {}),
    ...(timeout && Number.isFinite(Number(timeout)) ? { timeoutSeconds: Number(timeout) } : {}),
    includeObject: include === 'Object' || include === 'None' ? include : 'Metadata',
  };
}

/** Answer a list: a Table when kubectl asks for one, else a `<Kind>List`. */
export function sendList(
  req: IncomingMessage,
  res: ServerResponse,
  items: KubeObject[],
  options: {
    listKind: string;
    apiVersion: string;
    resourceVersion: string;
    printer: Printer;
    nowMs: number;
    includeObject: IncludeObject;
  },
): void {
  if (acceptsTable(req.headers.accept)) {
    sendJson(
      res,
      200,
      buildTable(options.printer, items, {
        resourceVersion: options.resourceVersion,
        nowMs: options.nowMs,
        includeObject: options.includeObject,
      }),
    );
    return;
  }
  sendJson(res, 200, {
    apiVersion: options.apiVersion,
    kind: options.listKind,
    metadata: { resourceVersion: options.resourceVersion },
    items,
  });
}

/** Answer one object: a one-row Table when asked for, else the object. */
export function sendObject(
  req: IncomingMessage,
  res: ServerResponse,
  obj: KubeObject,
  options: { printer: Printer; nowMs: number; status?: number; includeObject?: IncludeObject },
): void {
  if (acceptsTable(req.headers.accept)) {
    sendJson(
      res,
      options.status ?? 200,
      buildTable(options.printer, [obj], {
        resourceVersion: obj.metadata.resourceVersion ?? '',
        nowMs: options.nowMs,
        includeObject: options.includeObject ?? 'Metadata',
      }),
    );
    return;
  }
  sendJson(res, options.status ?? 200, obj);
}
