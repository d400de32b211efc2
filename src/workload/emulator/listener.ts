import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from '../../domain/index.ts';

/**
 * The sockets of the emulated API servers. Each cluster gets its own loopback port (a plain
 * listening socket) and its own TLS context (server certificate from the cluster CA, client
 * certificates required and verified against the cluster's current CA); all clusters share
 * one HTTP engine that is never bound to a port itself. No timers run per cluster while it
 * is idle, so a thousand emulated clusters cost a thousand listening sockets and little else.
 */

/**
 * How long an idle client connection stays open: longer than the workload client keeps its
 * own (90 s), so the client, which knows when it is about to send, is the one that closes.
 */
export const SERVER_KEEP_ALIVE_MS = 120_000;

/** TLS material of one cluster's endpoint. */
export interface EndpointTls {
  certPem: string;
  keyPem: string;
  /** CA whose client certificates are accepted. */
  caPem: string;
}

/** Handler of requests arriving on one cluster's port. */
export type ClusterHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The shared HTTP engine. */
export class SharedHttpEngine {
  private readonly handlers = new WeakMap<object, ClusterHandler>();
  readonly server: HttpServer;

  constructor() {
    this.server = createHttpServer((req, res) => {
      const handler = this.handlers.get(req.socket);
      if (!handler) {
        res.destroy();
        return;
      }
      handler(req, res);
    });
    this.server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  }

  /** Serve a TLS connection with `handler`. */
  accept(socket: TLSSocket, handler: ClusterHandler): void {
    this.handlers.set(socket, handler);
    this.server.emit('connection', socket);
  }
}

/** One cluster's endpoint. */
export class ClusterListener {
  private readonly net: NetServer;
  private readonly tls: TlsServer;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;

  constructor(
    private readonly engine: SharedHttpEngine,
    tls: EndpointTls,
    handler: ClusterHandler,
    private readonly log: Logger,
  ) {
    this.tls = createTlsServer({
      ...this.contextOptions(tls),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    });
    this.tls.on('secureConnection', (socket: TLSSocket) => this.engine.accept(socket, handler));
    this.tls.on('tlsClientError', (err) =>
      this.log.debug({ err: err.message, port: this.boundPort }, 'emulated API: TLS handshake refused'),
    );
    this.net = createNetServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      this.tls.emit('connection', socket);
    });
  }

  private contextOptions(tls: EndpointTls) {
    return { key: tls.keyPem, cert: tls.certPem, ca: [tls.caPem] };
  }

  /** The port, once listening. */
  get port(): number {
    return this.boundPort;
  }

  /** Listen on `host`, on `preferredPort` when it is free, else on any free port. */
  async listen(host: string, preferredPort?: number): Promise<number> {
    const attempt = (port: number) =>
      new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        this.net.once('error', onError);
        this.net.listen({ host, port, exclusive: true }, () => {
          this.net.off('error', onError);
          resolve((this.net.address() as AddressInfo).port);
        });
      });
    if (preferredPort) {
      try {
        this.boundPort = await attempt(preferredPort);
        return this.boundPort;
      } catch (err) {
        this.log.info(
          { port: preferredPort, err: (err as Error).message },
          'emulated API: previous port not available, taking another',
        );
      }
    }
    this.boundPort = await attempt(0);
    return this.boundPort;
  }

  /** New certificates/CA (CA rotation): new connections use them, open ones are dropped. */
  updateTls(tls: EndpointTls): void {
    this.tls.setSecureContext(this.contextOptions(tls));
    for (const s of this.sockets) s.destroy();
  }

  /** Stop listening and drop every connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.net.listening ? this.net.close(() => resolve()) : resolve()));
  }
}
