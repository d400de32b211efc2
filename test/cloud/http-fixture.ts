import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny throwaway HTTP server for client-mechanics tests: it plays the cloud's side of
 * situations no real cloud produces on demand (hangs, resets, 503 then success, expiring
 * tokens). A fixture for the client, not a mock of any module.
 */

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Reply =
  { status: number; headers?: Record<string, string>; body?: unknown; text?: string } | 'hang' | 'reset';

export type Handler = (req: SeenRequest, server: FixtureServer) => Reply | undefined;

export interface FixtureServer {
  url: string;
  requests: SeenRequest[];
  /** Requests to paths other than the token endpoint. */
  serviceRequests(): SeenRequest[];
  tokenRequests(): SeenRequest[];
  /** Resolves when the server has received `n` requests in total. */
  received(n: number): Promise<void>;
  /** Replace the handler. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

/** Start a fixture server on 127.0.0.1 with `handler`; unknown routes answer 404. */
export async function startFixture(handler: Handler = () => undefined): Promise<FixtureServer> {
  let current = handler;
  const requests: SeenRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const seen: SeenRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      const reply = current(seen, fixture) ?? {
        status: 404,
        body: { itemNotFound: { code: 404, message: `no route ${seen.method} ${seen.path}` } },
      };
      for (const w of waiters.filter((x) => requests.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      if (reply === 'hang') {
        hanging.push(res);
        return;
      }
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      const headers: Record<string, string> = { ...(reply.headers ?? {}) };
      let payload = '';
      if (reply.text !== undefined) payload = reply.text;
      else if (reply.body !== undefined) {
        payload = JSON.stringify(reply.body);
        headers['content-type'] ??= 'application/json';
      }
      res.writeHead(reply.status, headers);
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fixture: FixtureServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    serviceRequests: () => requests.filter((r) => !r.path.endsWith('/auth/tokens')),
    tokenRequests: () => requests.filter((r) => r.path.endsWith('/auth/tokens')),
    received(n) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    handle(h) {
      current = h;
    },
    async close() {
      for (const res of hanging) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fixture;
}

/** Options of {@link keystone}. */
export interface KeystoneFixtureOptions {
  /** Token lifetime in seconds. @default 3600 */
  ttlSeconds?: number;
  /** Catalog entries: service type → URL (public, RegionOne). */
  services?: Record<string, string>;
  /** Extra catalog entries as written. */
  catalog?: unknown[];
  /** Answer to give instead of a token. */
  refuse?: Reply;
}

/**
 * A minimal Keystone v3 token endpoint: every POST /v3/auth/tokens gets a fresh token
 * `tok-N`, scoped to the requested project id (or `p-default`), with a catalog.
 */
export function keystone(
  options: KeystoneFixtureOptions = {},
): (req: SeenRequest, server: FixtureServer) => Reply | undefined {
  let n = 0;
  return (req, server) => {
    if (!(req.method === 'POST' && req.path.endsWith('/v3/auth/tokens'))) return undefined;
    if (options.refuse) return options.refuse;
    n++;
    const body = JSON.parse(req.body) as { auth: { scope?: { project?: { id?: string; name?: string } } } };
    const projectId =
      body.auth.scope?.project?.id ??
      (body.auth.scope?.project?.name ? `id-of-${body.auth.scope.project.name}` : 'p-default');
    const issued = Date.parse('2026-01-01T00:00:00Z');
    const catalog = [
      ...Object.entries(options.services ?? {}).map(([type, url]) => ({
        type,
        name: type,
        endpoints: [
          {
            interface: 'public',
            region: 'RegionOne',
            region_id: 'RegionOne',
            url: url.replace('{base}', server.url),
          },
        ],
      })),
      ...(options.catalog ?? []),
    ];
    return {
      status: 201,
      headers: { 'x-subject-token': `tok-${n}` },
      body: {
        token: {
          methods: ['password'],
          issued_at: new Date(issued).toISOString(),
          expires_at: new Date(issued + (options.ttlSeconds ?? 3600) * 1000).toISOString(),
          user: { id: 'u-1', name: 'demo' },
          project: { id: projectId, name: 'demo' },
          catalog,
        },
      },
    };
  };
}

/** Combine handlers: the first that answers wins. */
export function routes(...handlers: Handler[]): Handler {
  return (req, server) => {
    for (const h of handlers) {
      const r = h(req, server);
      if (r !== undefined) return r;
    }
    return undefined;
  };
}
