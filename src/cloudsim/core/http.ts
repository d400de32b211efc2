import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthenticationError, type AuthContext } from '../../domain/index.ts';
import type { CloudContext } from './context.ts';
import { CloudHttpError } from './errors.ts';
import type { ServiceName } from './faults.ts';

/** Who is calling, as the embedded cloud's services see it. */
export interface Caller {
  auth: AuthContext;
  /** The token's project: the project every call acts in unless an admin says otherwise. */
  project: string;
  userId: string;
  isAdmin: boolean;
}

const callers = new WeakMap<FastifyRequest, Caller>();

/** The caller of an authenticated request (set by {@link authHook}). */
export function callerOf(req: FastifyRequest): Caller {
  const c = callers.get(req);
  if (!c) throw new AuthenticationError('The request you have made requires authentication.');
  return c;
}

/**
 * keystonemiddleware's part: every call needs a valid `X-Auth-Token` scoped to a project.
 * Answers 401 (with `WWW-Authenticate`) otherwise.
 */
export function authHook(ctx: CloudContext) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = req.headers['x-auth-token'];
    const token = Array.isArray(header) ? header[0] : header;
    if (!token) {
      void reply.header('www-authenticate', `Keystone uri="${identityUri(req)}"`);
      throw new AuthenticationError('The request you have made requires authentication.');
    }
    let auth: AuthContext;
    try {
      auth = await ctx.identity.validate(token);
    } catch (err) {
      void reply.header('www-authenticate', `Keystone uri="${identityUri(req)}"`);
      throw new AuthenticationError('The request you have made requires authentication.', { cause: err });
    }
    if (!auth.projectId) throw new AuthenticationError('The request you have made requires authentication.');
    callers.set(req, { auth, project: auth.projectId, userId: auth.userId, isAdmin: auth.isAdmin });
  };
}

function identityUri(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}/identity`;
}

/** Base URL of the request (scheme and host), for links. */
export function baseUrl(req: FastifyRequest): string {
  const proto = (req.headers['x-forwarded-proto'] as string | undefined) ?? req.protocol;
  return `${proto}://${req.host}`;
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** The error a service answers when an injected `quota` failure fires. */
export type QuotaFault = (resource: string | undefined, operation: string) => Error;

/**
 * Registers a service's routes, each with a stable operation name (`compute.servers.create`) that
 * fault rules target; the injected delay/failure is applied before the handler runs.
 */
export class ServiceRoutes {
  constructor(
    private readonly app: FastifyInstance,
    private readonly ctx: CloudContext,
    readonly service: ServiceName,
    private readonly quotaFault: QuotaFault,
  ) {}

  private add(
    method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    operation: string,
    handler: Handler,
    bodyLimit?: number,
  ): void {
    const op = `${this.service}.${operation}`;
    this.ctx.faults.declareOperation(op);
    this.app.route({
      method,
      url,
      ...(bodyLimit ? { bodyLimit } : {}),
      ...(method === 'GET' ? { exposeHeadRoute: false } : {}),
      handler: async (req, reply) => {
        this.ctx.calls.count(op);
        const d = this.ctx.faults.decide(op);
        if (d.delayMs > 0) await this.ctx.clock.sleep(d.delayMs);
        if (d.failure) {
          switch (d.failure.type) {
            case 'http':
              throw new CloudHttpError(
                d.failure.status,
                d.failure.message ?? defaultFaultMessage(d.failure.status),
              );
            case 'quota':
              throw this.quotaFault(d.failure.resource, op);
            case 'error-state':
              break;
          }
        }
        return handler(req, reply);
      },
    });
  }

  get(url: string, operation: string, handler: Handler): void {
    this.add('GET', url, operation, handler);
  }
  head(url: string, operation: string, handler: Handler): void {
    this.add('HEAD', url, operation, handler);
  }
  post(url: string, operation: string, handler: Handler, bodyLimit?: number): void {
    this.add('POST', url, operation, handler, bodyLimit);
  }
  put(url: string, operation: string, handler: Handler, bodyLimit?: number): void {
    this.add('PUT', url, operation, handler, bodyLimit);
  }
  patch(url: string, operation: string, handler: Handler): void {
    this.add('PATCH', url, operation, handler);
  }
  delete(url: string, operation: string, handler: Handler): void {
    this.add('DELETE', url, operation, handler);
  }
}

function defaultFaultMessage(status: number): string {
  switch (status) {
    case 404:
      return 'Resource not found';
    case 409:
      return 'Conflict';
    case 500:
      return 'An unexpected error prevented the server from fulfilling your request.';
    case 502:
      return 'Bad Gateway';
    case 503:
      return 'The server is currently unavailable. Please try again at a later time.';
    case 504:
      return 'Gateway Timeout';
    default:
      return `Injected fault ${status}`;
  }
}

/** Query parameter as a single string (the last one when repeated). */
export function q(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** Query parameter as a list (repeated or single). */
export function qAll(req: FastifyRequest, name: string): string[] {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** Route parameter. */
export function p(req: FastifyRequest, name: string): string {
  return (req.params as Record<string, string>)[name] ?? '';
}

/** The JSON body as an object (empty object when absent). */
export function bodyOf(req: FastifyRequest): unknown {
  return req.body ?? {};
}

/** Boolean query values as OpenStack services accept them. */
export function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  const s = v.toLowerCase();
  if (['1', 't', 'true', 'on', 'y', 'yes'].includes(s)) return true;
  if (['0', 'f', 'false', 'off', 'n', 'no'].includes(s)) return false;
  return undefined;
}

/** Any value as text (objects as JSON), for comparisons and messages. */
export function asText(v: unknown): string {
  switch (typeof v) {
    case 'undefined':
      return '';
    case 'string':
      return v;
    case 'number':
    case 'boolean':
    case 'bigint':
      return v.toString();
    case 'symbol':
    case 'function':
      return '';
    case 'object':
      return v === null ? '' : JSON.stringify(v);
  }
}
