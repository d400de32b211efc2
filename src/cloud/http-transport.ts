import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Clock } from '../domain/index.ts';
import { CloudConfigError } from './clouds-config.ts';

/**
 * One HTTP exchange over Node's own http/https with keep-alive agents: TLS settings from the
 * cloud configuration, a deadline measured on the injected clock, the whole answer buffered.
 */

/** TLS settings of a {@link HttpTransport}. */
export interface TransportTls {
  /** CA bundle: file path or inline PEM. */
  cacert?: string;
  /** Verify server certificates. @default true */
  verify?: boolean;
  /** Client certificate (file path or PEM) for mutual TLS. */
  cert?: string;
  /** Client key (file path or PEM) for mutual TLS. */
  key?: string;
}

export interface RawRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  /** Deadline for the whole exchange, measured on `clock`. */
  timeoutMs: number;
  clock: Clock;
}

export interface RawResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Buffer;
}

/** The exchange failed before a complete answer arrived. */
export class TransportFailure extends Error {
  constructor(
    readonly kind: 'timeout' | 'network',
    message: string,
    /** errno-style code, e.g. ECONNRESET, ECONNREFUSED. */
    readonly code: string | undefined,
    /** The request went out on a kept-alive socket the server may have closed meanwhile. */
    readonly reusedSocket: boolean,
    /** Nothing was sent: retrying cannot duplicate the call. */
    readonly notSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportFailure';
  }
}

/** Largest answer body accepted. @default 1 GiB */
const MAX_BODY_BYTES = 1024 * 1024 * 1024;

function pem(value: string, setting: string): string {
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (err) {
    throw new CloudConfigError(`${setting}: cannot read ${value}: ${(err as Error).message}`);
  }
}

/** Keep-alive HTTP(S) client shared by a session and the sessions derived from it. */
export class HttpTransport {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(tls: TransportTls = {}) {
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const httpsOptions: https.AgentOptions = {
      keepAlive: true,
      maxSockets: 64,
      rejectUnauthorized: tls.verify !== false,
    };
    if (tls.cacert) httpsOptions.ca = pem(tls.cacert, 'cacert');
    if (tls.cert) httpsOptions.cert = pem(tls.cert, 'cert');
    if (tls.key) httpsOptions.key = pem(tls.key, 'key');
    this.httpsAgent = new https.Agent(httpsOptions);
  }

  send(req: RawRequest): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      const isHttps = req.url.protocol === 'https:';
      if (!isHttps && req.url.protocol !== 'http:') {
        reject(
          new TransportFailure('network', `unsupported URL scheme in ${req.url.href}`, 'EPROTO', false, true),
        );
        return;
      }
      const headers: Record<string, string> = { ...req.headers };
      if (req.body) headers['content-length'] = String(req.body.length);
      let settled = false;
      let timedOut = false;
      let connected = false;
      const options: http.RequestOptions = {
        method: req.method,
        headers,
        agent: isHttps ? this.httpsAgent : this.httpAgent,
      };
      const r = (isHttps ? https : http).request(req.url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            r.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          cancelTimer();
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) });
        });
        res.on('error', fail);
        res.on('close', () => {
          if (!res.complete)
            fail(
              Object.assign(new Error('connection closed before the answer was complete'), {
                code: 'ECONNRESET',
              }),
            );
        });
      });
      r.on('socket', (socket) => {
        if (!socket.connecting) connected = true;
        else socket.once('connect', () => (connected = true));
      });
      const cancelTimer = req.clock.setTimer(() => {
        timedOut = true;
        r.destroy(new Error(`no answer within ${req.timeoutMs} ms`));
      }, req.timeoutMs);
      function fail(err: Error & { code?: string }) {
        if (settled) return;
        settled = true;
        cancelTimer();
        const code = err.code;
        const notSent =
          !connected &&
          !r.reusedSocket &&
          (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
        reject(
          new TransportFailure(
            timedOut ? 'timeout' : 'network',
            timedOut ? `no answer within ${req.timeoutMs} ms` : err.message || code || 'connection failed',
            timedOut ? 'ETIMEDOUT' : code,
            r.reusedSocket,
            notSent,
            { cause: err },
          ),
        );
      }
      r.on('error', fail);
      r.end(req.body);
    });
  }

  /** Close idle connections and refuse new ones. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
