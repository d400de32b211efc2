import { systemClock, type Clock } from '../domain/index.ts';
import {
  endpointNotFoundMessage,
  findEndpoint,
  serviceTypeCandidates,
  substituteProjectId,
  trimSlash,
} from './catalog.ts';
import { CloudError } from './cloud-error.ts';
import { authKindOf, CloudConfigError, validateCloudConfig, type CloudConfig } from './clouds-config.ts';
import { buildUrl, errorFrom, readBody, readJson, type Query, type ResponseType } from './http-answer.ts';
import { HttpTransport, TransportFailure, type RawResponse } from './http-transport.ts';
import {
  identityBase,
  parseTokenAnswer,
  tokenRequestBody,
  tokensUrl,
  type IssuedToken,
} from './keystone-auth.ts';

/** A retry the session is about to make, reported before it waits. */
export interface RetryEvent {
  service: string;
  method: string;
  path: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  error: CloudError;
}

/** Options of {@link Session}. */
export interface SessionOptions {
  /** Clock for deadlines, backoff waits and token lifetimes. @default systemClock */
  clock?: Clock;
  /** Deadline of one HTTP exchange, in milliseconds. @default 30000 */
  timeoutMs?: number;
  /** Retries of a transient failure (5xx except 501, 429, timeouts, resets). @default 3 */
  maxRetries?: number;
  /** @default "magnetar-cloud-client" */
  userAgent?: string;
  /** First backoff step; the n-th retry waits a random time up to base·2ⁿ⁻¹. @default 500 */
  retryBaseMs?: number;
  /** Cap of one backoff wait; a longer `Retry-After` is not waited for. @default 30000 */
  retryMaxDelayMs?: number;
  /** Re-authenticate this long before the token expires (at most half its lifetime). @default 120000 */
  reauthMarginMs?: number;
  /** Random source in [0, 1) for the jitter. @default Math.random */
  random?: () => number;
  /** Called before each retry wait (logging, metrics, tests). */
  onRetry?: (event: RetryEvent) => void;
  /** Share connections with another session (set by {@link Session.forProject}). */
  transport?: HttpTransport;
}

/** Options of {@link Session.request}. */
export interface RequestOptions {
  /** JSON body. */
  body?: unknown;
  /** Body sent as is (`application/octet-stream` unless `headers` says otherwise). */
  rawBody?: Buffer | string;
  /** Query parameters; undefined values are left out, arrays repeat the key. */
  query?: Query;
  headers?: Record<string, string>;
  /** Whether a transient failure may be retried. @default true for GET, HEAD, PUT, DELETE, OPTIONS */
  retry?: boolean;
  /** Statuses that count as success. @default any 2xx */
  expect?: number[];
  /** How to read the answer body. @default json (text when the answer is not JSON) */
  responseType?: ResponseType;
}

/** The answer of {@link Session.request}. */
export interface CloudResponse<T> {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: T;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** OpenSSL/Node codes of certificate verification failures (not transient). */
const TLS_CERT_ERRORS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ALTNAME/;

// Errors that must not be retried again by an outer loop (their own retries are spent),
// and transport failures where nothing reached the server (safe to repeat even for POST).
const exhausted = new WeakSet<CloudError>();
const notSent = new WeakSet<CloudError>();

/**
 * An authenticated connection to one cloud: Keystone v3 tokens (password, application
 * credential, token; or a fixed token/none with an endpoint), catalog look-ups, JSON
 * requests with deadlines, retries of transient failures with backoff and jitter, and one
 * re-authentication on a 401.
 */
export class Session {
  readonly config: CloudConfig;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly userAgent: string;
  private readonly retryBaseMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly reauthMarginMs: number;
  private readonly random: () => number;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;
  private readonly transport: HttpTransport;
  private readonly ownsTransport: boolean;
  private readonly kind: ReturnType<typeof authKindOf>;
  private readonly options: SessionOptions;
  private issued: IssuedToken | undefined;
  private pendingAuth: Promise<IssuedToken> | undefined;

  constructor(config: CloudConfig, options: SessionOptions = {}) {
    validateCloudConfig(config);
    this.config = config;
    this.options = options;
    this.kind = authKindOf(config.authType);
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.userAgent = options.userAgent ?? 'magnetar-cloud-client';
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? 30_000;
    this.reauthMarginMs = options.reauthMarginMs ?? 120_000;
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry;
    this.ownsTransport = options.transport === undefined;
    this.transport =
      options.transport ??
      new HttpTransport({
        ...(config.cacert === undefined ? {} : { cacert: config.cacert }),
        ...(config.verify === undefined ? {} : { verify: config.verify }),
        ...(config.cert === undefined ? {} : { cert: config.cert }),
        ...(config.key === undefined ? {} : { key: config.key }),
      });
  }

  /** Whether this session gets its tokens from Keystone (and so can renew them). */
  private get usesKeystone(): boolean {
    return this.kind === 'password' || this.kind === 'application-credential' || this.kind === 'token';
  }

  /** Authenticate if needed; returns the token (empty for auth type `none`). */
  async token(): Promise<string> {
    switch (this.kind) {
      case 'admin-token':
        return this.config.auth.token ?? '';
      case 'none':
        return '';
      case 'password':
      case 'application-credential':
      case 'token':
        return (await this.currentToken()).token;
    }
  }

  private async currentToken(): Promise<IssuedToken> {
    const t = this.issued;
    if (t && !this.expiresSoon(t)) return t;
    this.pendingAuth ??= this.authenticate().finally(() => {
      this.pendingAuth = undefined;
    });
    return this.pendingAuth;
  }

  private expiresSoon(t: IssuedToken): boolean {
    const margin = Math.min(this.reauthMarginMs, (t.expiresAt - t.obtainedAt) / 2);
    return this.clock.now() >= t.expiresAt - margin;
  }

  private async authenticate(): Promise<IssuedToken> {
    const url = new URL(tokensUrl(this.config.auth.auth_url ?? ''));
    const body = Buffer.from(JSON.stringify(tokenRequestBody(this.config)));
    const res = await this.withRetries(
      { service: 'identity', method: 'POST', path: url.pathname, retryable: true },
      () =>
        this.exchange(
          'identity',
          'POST',
          url,
          { 'content-type': 'application/json', accept: 'application/json' },
          body,
        ),
    ).catch((err: unknown) => {
      if (err instanceof CloudError) exhausted.add(err);
      throw err;
    });
    if (res.status !== 201 && res.status !== 200) {
      const err = errorFrom(this.clock.now(), 'identity', 'POST', url, res);
      exhausted.add(err);
      throw err;
    }
    const issued = parseTokenAnswer(res.headers['x-subject-token'], readJson(res), this.clock.now());
    if (typeof issued === 'string') {
      const err = new CloudError({
        kind: 'other',
        service: 'identity',
        cloudMessage: issued,
        method: 'POST',
        path: url.pathname,
        status: res.status,
      });
      exhausted.add(err);
      throw err;
    }
    this.issued = issued;
    return issued;
  }

  /** Forget `token` if it is still the current one, so the next call authenticates again. */
  private forget(token: string): void {
    if (this.issued?.token === token) this.issued = undefined;
  }

  /** Endpoint URL of a service type from the catalog (or the override), without trailing slash. */
  async endpoint(serviceType: string): Promise<string> {
    const projectId = await this.projectId();
    const fill = (url: string) => {
      try {
        return trimSlash(substituteProjectId(url, projectId));
      } catch (err) {
        throw new CloudError({ kind: 'other', service: serviceType, cloudMessage: (err as Error).message });
      }
    };
    for (const type of serviceTypeCandidates(serviceType)) {
      const override = this.config.endpointOverrides?.[type];
      if (override) return fill(override);
    }
    if (this.config.endpointOverride && serviceType !== 'identity') return fill(this.config.endpointOverride);
    if (!this.usesKeystone) {
      throw new CloudError({
        kind: 'other',
        service: serviceType,
        cloudMessage: `no endpoint configured for ${serviceType}`,
      });
    }
    if (serviceType === 'identity' && this.config.auth.auth_url) {
      const fromCatalog = this.lookup(serviceType, (await this.currentToken()).catalog);
      return fill(fromCatalog ?? identityBase(this.config.auth.auth_url));
    }
    const issued = await this.currentToken();
    if (!issued.catalog) {
      throw new CloudError({
        kind: 'other',
        service: serviceType,
        cloudMessage: 'the token has no service catalog (unscoped: set project_name or project_id)',
      });
    }
    const url = this.lookup(serviceType, issued.catalog);
    // Not 'not-found': a missing endpoint must never pass for a deleted resource.
    if (!url) {
      throw new CloudError({
        kind: 'other',
        service: serviceType,
        cloudMessage: endpointNotFoundMessage(serviceType, this.lookupOptions()),
      });
    }
    return fill(url);
  }

  private lookupOptions() {
    return {
      ...(this.config.regionName === undefined ? {} : { region: this.config.regionName }),
      ...(this.config.interface === undefined ? {} : { interface: this.config.interface }),
    };
  }

  private lookup(serviceType: string, catalog: IssuedToken['catalog']): string | undefined {
    return catalog ? findEndpoint(catalog, serviceType, this.lookupOptions()) : undefined;
  }

  /** Project the session acts in (from the token, or `auth.project_id` without Keystone). */
  async projectId(): Promise<string | undefined> {
    if (!this.usesKeystone) return this.config.auth.project_id;
    return (await this.currentToken()).projectId;
  }

  /** User the session acts as (from the token, or `auth.user_id` without Keystone). */
  async userId(): Promise<string | undefined> {
    if (!this.usesKeystone) return this.config.auth.user_id;
    return (await this.currentToken()).userId;
  }

  /**
   * A session with the same credentials scoped to another project, sharing this session's
   * connections. Application credentials are bound to one project and cannot be re-scoped.
   */
  forProject(projectId: string): Session {
    if (this.kind === 'application-credential') {
      throw new CloudConfigError(
        'application credentials are bound to their own project; use password or token credentials to act in other projects',
      );
    }
    const auth: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.config.auth)) {
      if (!/^(project_|tenant_|system_scope$)/.test(k)) auth[k] = v;
    }
    auth.project_id = projectId;
    return new Session({ ...this.config, auth }, { ...this.options, transport: this.transport });
  }

  /**
   * A session acting with someone else's token (e.g. the caller of an API request), sharing
   * this session's connections. With Keystone the token is exchanged for one scoped to
   * `projectId` (or the token's own scope), which also yields that project's catalog; without
   * Keystone the token is sent as is to the configured endpoints.
   */
  forToken(token: string, projectId?: string): Session {
    const options = { ...this.options, transport: this.transport };
    if (!this.usesKeystone) {
      const auth: Record<string, string> = { token, ...(projectId ? { project_id: projectId } : {}) };
      return new Session(
        { ...this.config, authType: this.kind === 'none' ? 'none' : 'admin_token', auth },
        options,
      );
    }
    const auth: Record<string, string> = {
      auth_url: this.config.auth.auth_url ?? '',
      token,
      ...(projectId ? { project_id: projectId } : {}),
    };
    return new Session({ ...this.config, authType: 'v3token', auth }, options);
  }

  /** Close the connections this session opened (not those shared with its parent). */
  close(): void {
    if (this.ownsTransport) this.transport.close();
  }

  /** JSON request to a service: path relative to the endpoint. Throws CloudError. */
  async request<T = unknown>(
    serviceType: string,
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<CloudResponse<T>> {
    const m = method.toUpperCase();
    const retryable = options.retry ?? IDEMPOTENT.has(m);
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: Buffer | undefined;
    if (options.rawBody !== undefined) {
      body = Buffer.isBuffer(options.rawBody) ? options.rawBody : Buffer.from(options.rawBody);
      headers['content-type'] = 'application/octet-stream';
    } else if (options.body !== undefined) {
      body = Buffer.from(JSON.stringify(options.body));
      headers['content-type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
    const pathOnly = path.split('?')[0] ?? path;
    let reauthenticated = false;
    const res = await this.withRetries(
      { service: serviceType, method: m, path: pathOnly, retryable },
      async () => {
        for (;;) {
          const token = await this.token();
          const url = buildUrl(await this.endpoint(serviceType), path, options.query);
          const sent = { ...headers };
          if (this.kind !== 'none') sent['x-auth-token'] = token;
          const answer = await this.exchange(serviceType, m, url, sent, body);
          const ok = options.expect
            ? options.expect.includes(answer.status)
            : answer.status >= 200 && answer.status < 300;
          if (ok) return answer;
          if (answer.status === 401 && this.usesKeystone && !reauthenticated) {
            // The token may have been revoked or expired early: authenticate once more.
            reauthenticated = true;
            this.forget(token);
            continue;
          }
          throw errorFrom(this.clock.now(), serviceType, m, url, answer);
        }
      },
    );
    return {
      status: res.status,
      headers: res.headers,
      body: readBody(serviceType, m, pathOnly, res, options.responseType) as T,
    };
  }

  private async exchange(
    service: string,
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: Buffer | undefined,
  ): Promise<RawResponse> {
    try {
      return await this.transport.send({
        method,
        url,
        headers: { 'user-agent': this.userAgent, ...headers },
        ...(body === undefined ? {} : { body }),
        timeoutMs: this.timeoutMs,
        clock: this.clock,
      });
    } catch (err) {
      if (!(err instanceof TransportFailure)) throw err;
      if (err.code && TLS_CERT_ERRORS.test(err.code)) {
        // A certificate problem does not go away by retrying: say how to fix it.
        throw new CloudError({
          kind: 'other',
          service,
          method,
          path: url.pathname,
          cloudMessage: `TLS certificate of ${url.host} not accepted: ${err.message} (${err.code}); set cacert to the CA bundle that signed it, or verify: false`,
          cause: err,
        });
      }
      const cloudErr = new CloudError({
        kind: err.kind,
        service,
        method,
        path: url.pathname,
        cloudMessage: `${err.message}${err.code && !err.message.includes(err.code) ? ` (${err.code})` : ''}`,
        cause: err,
      });
      // Node's advice for keep-alive races: a reset on a reused socket means the server
      // closed it before reading the request.
      if (err.notSent || (err.reusedSocket && err.code === 'ECONNRESET')) notSent.add(cloudErr);
      throw cloudErr;
    }
  }

  private async withRetries<T>(
    ctx: { service: string; method: string; path: string; retryable: boolean },
    fn: () => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof CloudError) || exhausted.has(err) || !err.transient) throw err;
        if (attempt > this.maxRetries || !(ctx.retryable || notSent.has(err))) throw err;
        const ceiling = Math.min(this.retryMaxDelayMs, this.retryBaseMs * 2 ** (attempt - 1));
        let delayMs = Math.floor(this.random() * ceiling);
        if (err.retryAfterMs !== undefined) {
          // Asked to wait longer than we are willing to block: give up, let the caller requeue.
          if (err.retryAfterMs > this.retryMaxDelayMs) throw err;
          delayMs = Math.max(delayMs, err.retryAfterMs);
        }
        this.onRetry?.({ ...ctx, attempt, delayMs, error: err });
        await this.clock.sleep(delayMs);
      }
    }
  }
}
