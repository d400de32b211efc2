import type { FastifyRequest } from 'fastify';
import { AuthenticationError, type AuthContext } from '../../domain/index.ts';
import type { LocalIdentity, ResolvedToken } from '../../identity/index.ts';

/** Everything a route module needs. */
export interface RouteContext {
  identity: LocalIdentity;
  /** Identity v3 base URL for links, e.g. `http://127.0.0.1:9511/identity/v3`. */
  v3: () => string;
  /** The caller, from `X-Auth-Token`; 401 when missing or invalid. */
  caller: (req: FastifyRequest) => Promise<AuthContext>;
  /** The caller's token with everything Keystone shows about it. */
  callerToken: (req: FastifyRequest) => Promise<ResolvedToken>;
}

function headerToken(req: FastifyRequest, name: string): string {
  const v = req.headers[name];
  const token = Array.isArray(v) ? v[0] : v;
  if (!token) {
    throw new AuthenticationError(
      `The request you have made requires authentication. Send a token in ${name === 'x-auth-token' ? 'X-Auth-Token' : 'X-Subject-Token'}.`,
      {
        code: 'NoToken',
      },
    );
  }
  return token;
}

/** The token a request names in a header. */
export function tokenFrom(req: FastifyRequest, header: 'x-auth-token' | 'x-subject-token'): string {
  return headerToken(req, header);
}

export function routeContext(identity: LocalIdentity): RouteContext {
  return {
    identity,
    v3: () => `${identity.baseUrl}/identity/v3`,
    caller: (req) => identity.validate(headerToken(req, 'x-auth-token')),
    callerToken: (req) => identity.resolve(headerToken(req, 'x-auth-token')),
  };
}
