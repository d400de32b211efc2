import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Token format: `<key id>.<payload>.<signature>`, where payload is base64url JSON and the
 * signature is HMAC-SHA256 over `<key id>.<payload>` with the deployment's signing key.
 * Tokens carry who and what scope, never roles: roles are read from the live identity
 * state at every validation, so a role removal takes effect at once.
 */

/** What a token is scoped to. */
export type TokenScope =
  | { type: 'unscoped' }
  | { type: 'project'; id: string }
  | { type: 'domain'; id: string }
  | { type: 'system' };

/** The signed content of a token. */
export interface TokenPayload {
  userId: string;
  scope: TokenScope;
  methods: string[];
  issuedAtMs: number;
  expiresAtMs: number;
  /** This token's audit id first, then the audit id of the token it was rescoped from. */
  auditIds: string[];
  /** Set when the token was obtained with an application credential. */
  appCredId?: string;
}

/** A signing key. */
export interface SigningKey {
  id: string;
  secret: Buffer;
}

/** A new random signing key. */
export function newSigningKey(): { id: string; secret: string } {
  return { id: randomBytes(6).toString('base64url'), secret: randomBytes(32).toString('base64') };
}

interface Wire {
  u: string;
  s: string;
  m: string[];
  i: number;
  e: number;
  a: string[];
  c?: string;
}

function encodeScope(scope: TokenScope): string {
  switch (scope.type) {
    case 'unscoped':
      return '';
    case 'project':
      return `p:${scope.id}`;
    case 'domain':
      return `d:${scope.id}`;
    case 'system':
      return 'system';
  }
}

function decodeScope(s: string): TokenScope | undefined {
  if (s === '') return { type: 'unscoped' };
  if (s === 'system') return { type: 'system' };
  if (s.startsWith('p:')) return { type: 'project', id: s.slice(2) };
  if (s.startsWith('d:')) return { type: 'domain', id: s.slice(2) };
  return undefined;
}

function sign(key: SigningKey, signed: string): string {
  return createHmac('sha256', key.secret).update(signed).digest('base64url');
}

/** Encode and sign a token. */
export function encodeToken(payload: TokenPayload, key: SigningKey): string {
  const wire: Wire = {
    u: payload.userId,
    s: encodeScope(payload.scope),
    m: payload.methods,
    i: payload.issuedAtMs,
    e: payload.expiresAtMs,
    a: payload.auditIds,
    ...(payload.appCredId ? { c: payload.appCredId } : {}),
  };
  const signed = `${key.id}.${Buffer.from(JSON.stringify(wire)).toString('base64url')}`;
  return `${signed}.${sign(key, signed)}`;
}

const MAX_TOKEN_LENGTH = 4096;

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

/**
 * Check a token's signature and decode it. Returns undefined for anything that is not a
 * token signed by one of `keys` (expiry and revocation are the caller's business).
 */
export function decodeToken(token: string, keys: ReadonlyMap<string, SigningKey>): TokenPayload | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const first = token.indexOf('.');
  const last = token.lastIndexOf('.');
  if (first <= 0 || last <= first) return undefined;
  const key = keys.get(token.slice(0, first));
  if (!key) return undefined;
  const signed = token.slice(0, last);
  const given = Buffer.from(token.slice(last + 1), 'base64url');
  const expected = Buffer.from(sign(key, signed), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let wire: Partial<Wire>;
  try {
    wire = JSON.parse(
      Buffer.from(token.slice(first + 1, last), 'base64url').toString('utf8'),
    ) as Partial<Wire>;
  } catch {
    return undefined;
  }
  const scope = typeof wire.s === 'string' ? decodeScope(wire.s) : undefined;
  if (
    typeof wire.u !== 'string' ||
    !scope ||
    !isStringArray(wire.m) ||
    typeof wire.i !== 'number' ||
    typeof wire.e !== 'number' ||
    !isStringArray(wire.a) ||
    (wire.c !== undefined && typeof wire.c !== 'string')
  ) {
    return undefined;
  }
  return {
    userId: wire.u,
    scope,
    methods: wire.m,
    issuedAtMs: wire.i,
    expiresAtMs: wire.e,
    auditIds: wire.a,
    ...(wire.c ? { appCredId: wire.c } : {}),
  };
}
