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
  UnprocessableError,
  type MagnetarError,
} from '../../domain/index.ts';

/**
 * The HTTPS transport of the workload client: one request per connection (no idle sockets
 * kept per cluster; the TLS context is built once and sessions are resumed, so a request
 * costs an abbreviated handshake), client-certificate authentication, JSON in and out, and Kubernetes
 * `Status` failures turned into Magnetar's error classes (5xx and network failures are
 * UnavailableError, i.e. retryable).
 */

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
    this.agent = new Agent({ keepAlive: false, maxCachedSessions: 4, secureContext });
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Send a request; 2xx and any status in `accept` resolve, other statuses reject with a domain error. */
  async send(req: KubeRequest, accept: readonly number[] = []): Promise<KubeResponse> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) qs.set(k, v);
    const path = req.path + (qs.size > 0 ? `?${qs.toString()}` : '');
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const what = `${req.method} ${this.server}${req.path}`;
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
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
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      r.on('timeout', () => r.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      r.on('error', reject);
      r.end(payload);
    }).catch((cause: unknown) => {
      throw new UnavailableError(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`, {
        code: 'Unreachable',
        cause,
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
}
