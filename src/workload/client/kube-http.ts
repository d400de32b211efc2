import { Agent, request } from 'node:https';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import {
  AuthenticationError,
  ConflictError,
  InputError,
  isKubeStatus,
  NotAllowedError,
  NotFoundError,
  UnavailableError,
  MagnetarError,
  UnprocessableError,
} from '../../domain/index.ts';

/**
 * The HTTPS transport of the workload client: one kept-alive connection per cluster (as
 * Cluster API's cluster cache keeps one per workload cluster), client-certificate
 * authentication, JSON in and out, and Kubernetes `Status` failures turned into Magnetar's
 * error classes (5xx and network failures are UnavailableError, i.e. retryable).
 *
 * A periodic probe (once a minute) finds its connection still open: an idle connection is
 * closed by the client after {@link IDLE_SOCKET_MS}, before the emulated API server would
 * close it. A request whose reused connection the server closed before reading it is sent
 * once more on a new connection.
 */

/**
 * How long the client keeps an idle connection open: longer than the probe period of a
 * minute, shorter than the emulated API server keeps one (its `SERVER_KEEP_ALIVE_MS`).
 */
export const IDLE_SOCKET_MS = 90_000;

/** TLS credentials for a cluster's API. */
export interface KubeTls {
  /** CA PEM that signed the server certificate. */
  ca: string;
  /** Client certificate PEM. */
  cert: string;
  /** Client private key PEM. */
  key: string;
}

/** Options of {@link KubeHttp}. */
export interface KubeHttpOptions {
  /** `https://host:port` of the API server. */
  server: string;
  tls: KubeTls;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
}

/** One request. */
export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** @default application/json */
  contentType?: string;
}

/** A response that was not turned into an error (2xx, or a status the caller asked to see). */
export interface KubeResponse {
  status: number;
  body: unknown;
}

const StatusSchema = z.looseObject({
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
});

/** Turn a non-2xx answer into the matching domain error. */
export function errorFromResponse(status: number, body: unknown, what: string): MagnetarError {
  const parsed = StatusSchema.safeParse(body);
  const reason = parsed.success ? parsed.data.reason : undefined;
  const message = `${what}: ${(parsed.success ? parsed.data.message : undefined) ?? `HTTP ${status}`}`;
  const details = { httpStatus: status, ...(reason ? { reason } : {}) };
  switch (status) {
    case 400:
      return new InputError(message, { code: reason ?? 'BadRequest', details });
    case 401:
      return new AuthenticationError(message, { code: 'Unauthorized', details });
    case 403:
      return new NotAllowedError(message, { code: 'Forbidden', details });
    case 404:
      return new NotFoundError(message, { code: 'NotFound', details });
    case 409:
      return new ConflictError(message, {
        code: reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict',
        details,
      });
    case 422:
      return new UnprocessableError(message, { code: 'Invalid', details });
    default:
      return new UnavailableError(message, { code: reason ?? `HTTP${status}`, details });
  }
}

/** JSON over HTTPS with a client certificate. */
export class KubeHttp {
  readonly server: string;
  private readonly url: URL;
  private readonly tls: KubeTls;
  private readonly timeoutMs: number;
  private readonly agent: Agent;
  private readonly watchAgent: Agent;

  constructor(options: KubeHttpOptions) {
    this.server = options.server;
    this.url = new URL(options.server);
    if (this.url.protocol !== 'https:')
      throw new InputError(`workload API endpoint must be https: ${options.server}`);
    this.tls = options.tls;
    const secureContext = createSecureContext({
      ca: options.tls.ca,
      cert: options.tls.cert,
      key: options.tls.key,
    });
    const shared = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxCachedSessions: 4, secureContext };
    // Requests to one cluster are few and short (a create asks for a bootstrap token per
    // joining machine, a drain sends a handful of evictions): two connections carry them, and
    // a burst queues on those two rather than opening more, since each new connection costs a
    // TLS handshake on both sides. A watch holds its connection for minutes, so it has a
    // connection of its own and never takes one of the two.
    this.agent = new Agent({ ...shared, maxSockets: 2, maxFreeSockets: 2, scheduling: 'lifo' });
    this.watchAgent = new Agent({ ...shared, maxSockets: 1, maxFreeSockets: 1 });
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Send a request; 2xx and any status in `accept` resolve, other statuses reject with a domain error. */
  async send(req: KubeRequest, accept: readonly number[] = []): Promise<KubeResponse> {
    const path = pathWithQuery(req);
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const what = `${req.method} ${this.server}${req.path}`;
    const res = await this.exchange(req, path, payload)
      .catch((cause: unknown) => {
        // The server closed a kept-alive connection as this request went out on it: it never
        // read the request, so sending it again on a new connection cannot do it twice.
        if (cause instanceof StaleConnection) return this.exchange(req, path, payload);
        throw cause;
      })
      .catch((cause: unknown) => {
        const reason = cause instanceof StaleConnection ? cause.cause : cause;
        throw new UnavailableError(`${what}: ${reason instanceof Error ? reason.message : String(reason)}`, {
          code: 'Unreachable',
          cause: reason,
        });
      });
    let body: unknown = undefined;
    if (res.text !== '') {
      try {
        body = JSON.parse(res.text);
      } catch {
        body = { message: res.text.slice(0, 200) };
      }
    }
    if ((res.status >= 200 && res.status < 300) || accept.includes(res.status))
      return { status: res.status, body };
    throw errorFromResponse(
      res.status,
      isKubeStatus(body) || typeof body === 'object' ? body : undefined,
      what,
    );
  }

  /**
   * A long-running GET answered with one JSON document per line (a watch): `onLine` gets each
   * parsed line as it arrives. Resolves when the server ends the answer, rejects when the
   * connection fails, the answer is not 2xx, or `signal` aborts. No idle timeout: a watch may
   * stay silent for as long as nothing changes (the server ends it after its `timeoutSeconds`).
   */
  stream(
    req: Pick<KubeRequest, 'path' | 'query'>,
    onLine: (value: unknown) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const path = pathWithQuery(req);
    const what = `GET ${this.server}${req.path}`;
    return new Promise<void>((resolve, reject) => {
      const fail = (cause: unknown) =>
        reject(
          cause instanceof MagnetarError
            ? cause
            : new UnavailableError(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`, {
                code: 'Unreachable',
                cause,
              }),
        );
      if (signal?.aborted) return fail(new Error('watch stopped'));
      const r = request(
        {
          host: this.url.hostname.replace(/^\[|\]$/g, ''),
          port: this.url.port === '' ? 443 : Number(this.url.port),
          method: 'GET',
          path,
          agent: this.watchAgent,
          timeout: 0,
          ...(signal ? { signal } : {}),
          headers: { accept: 'application/json', 'user-agent': 'magnetar-workload-client' },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          let pending = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            pending += chunk;
            if (status < 200 || status >= 300) return;
            let nl;
            while ((nl = pending.indexOf('\n')) >= 0) {
              const line = pending.slice(0, nl);
              pending = pending.slice(nl + 1);
              if (line.trim() === '') continue;
              try {
                onLine(JSON.parse(line));
              } catch (err) {
                response.destroy(err instanceof Error ? err : new Error(String(err)));
                return;
              }
            }
          });
          response.on('end', () => {
            if (status >= 200 && status < 300) return resolve();
            let body: unknown;
            try {
              body = JSON.parse(pending);
            } catch {
              body = { message: pending.slice(0, 200) };
            }
            fail(errorFromResponse(status, body, what));
          });
          response.on('error', fail);
        },
      );
      // A watch holds its connection for minutes: TCP keepalive finds a peer that went away
      // without closing it, and an open watch does not keep the process alive on its own.
      r.on('socket', (socket) => {
        socket.setKeepAlive(true, 30_000);
        socket.unref();
      });
      r.on('error', fail);
      r.end();
    });
  }

  /** Close the kept-alive connections (the client is being replaced or dropped). */
  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  /** One request and its whole answer; a reset on a reused connection before any answer is a {@link StaleConnection}. */
  private exchange(
    req: KubeRequest,
    path: string,
    payload: Buffer | undefined,
  ): Promise<{ status: number; text: string }> {
    return new Promise<{ status: number; text: string }>((resolve, reject) => {
      let answered = false;
      const r = request(
        {
          host: this.url.hostname.replace(/^\[|\]$/g, ''),
          port: this.url.port === '' ? 443 : Number(this.url.port),
          method: req.method,
          path,
          agent: this.agent,
          timeout: this.timeoutMs,
          headers: {
            accept: 'application/json',
            'user-agent': 'magnetar-workload-client',
            ...(payload
              ? {
                  'content-type': req.contentType ?? 'application/json',
                  'content-length': String(payload.length),
                }
              : {}),
          },
        },
        (response) => {
          answered = true;
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      r.on('timeout', () => r.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      r.on('error', (err: NodeJS.ErrnoException) =>
        reject(
          r.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')
            ? new StaleConnection(err)
            : err,
        ),
      );
      r.end(payload);
    });
  }
}

/** The request's path with its query string (undefined values left out). */
function pathWithQuery(req: Pick<KubeRequest, 'path' | 'query'>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) qs.set(k, v);
  return req.path + (qs.size > 0 ? `?${qs.toString()}` : '');
}

/** The server had closed the reused connection a request went out on. */
class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
