import type { FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { CLOUD_KINDS, cloudType } from './cloudsim/index.ts';
import type { Config, Logger } from './domain/index.ts';
import { launchThread, superviseThread, threadFigures, type ReadyThread } from './domain/index.ts';
import { SqliteStore, type ObjectStore } from './store/index.ts';

/**
 * The embedded cloud on a thread of its own (docs/adr/0013-embedded-cloud-thread.md).
 *
 * A real cloud runs beside Magnetar, not inside it: here the embedded cloud's services run in
 * a worker thread with their own HTTP listener on loopback and their own store, so its work
 * (about a quarter of the event loop while clusters are built) runs on the second core. The
 * controllers call it on the catalog's `internal` endpoints, straight at that listener; the
 * `public` endpoints stay under `/cloud` of Magnetar's own port, forwarded to the thread, so
 * the `openstack` CLI, the dashboard and every URL a tenant has seen keep working.
 *
 * The cloud's store: with SQLite, a file of its own next to Magnetar's (`<name>.cloud.sqlite`),
 * since SQLite lets one connection write at a time and Magnetar's holds the write lock for most
 * of a busy event-loop turn; with PostgreSQL, the same database on a pool of its own.
 */

/** What the thread needs from its parent; plain data (it crosses the thread boundary). */
export interface CloudWorkerData {
  config: Config;
  /** The cloud's own store. */
  cloudStore: Config['store'];
  /** The project whose admin seeds the region (flavors, images, the external network). */
  adminProjectId: string | undefined;
  /** Address the thread listens on (a loopback or specific address, not a wildcard). */
  host: string;
}

/** A running cloud thread. */
export interface CloudThread {
  /**
   * Base URL of the thread's listener, e.g. `http://127.0.0.1:40123` (services under `/cloud`).
   * It changes when a thread that died has been started again.
   */
  readonly url: string;
  /**
   * CPU seconds the running thread has used since it started, where the system tells (Linux);
   * undefined elsewhere. For benchmarks: the embedded cloud's share of a build.
   */
  cpuSeconds(): number | undefined;
  /** Full garbage collections of the running thread since it started. For benchmarks. */
  majorGcs(): number | undefined;
  /** Stop the thread abruptly, as a crash would (fault drills, tests); it is started again. */
  kill(): Promise<void>;
  /** Stop the thread: its listener, transitions and stores. */
  close(): Promise<void>;
}

/** The cloud's own store for Magnetar's store configuration (see the module comment). */
export function cloudStoreConfig(config: Config): Config['store'] {
  if (config.store.engine === 'postgres') return config.store;
  const url = config.store.url ?? 'magnetar.sqlite';
  if (url === ':memory:') throw new Error('the embedded cloud thread needs a store file, not :memory:');
  const path = resolve(config.dataDir, url);
  return {
    engine: 'sqlite',
    url: join(dirname(path), `${basename(path).replace(/\.sqlite$/, '')}.cloud.sqlite`),
  };
}

/**
 * Earlier versions kept the cloud's records in Magnetar's SQLite file: move them to the cloud's
 * own file, once, before the thread opens it. The copy is one transaction; the records are
 * then deleted from Magnetar's file. Returns how many records moved.
 */
export async function moveCloudRecords(from: ObjectStore, config: Config): Promise<number> {
  const target = cloudStoreConfig(config);
  if (target.engine !== 'sqlite' || from.engine !== 'sqlite') return 0;
  const records = [];
  for (const kind of CLOUD_KINDS) records.push(...(await from.list(cloudType(kind))).items);
  if (records.length === 0) return 0;
  const to = new SqliteStore({ path: target.url!, backgroundCheckpoints: false });
  try {
    // A copy interrupted after its commit left the records in both files: the cloud's file wins.
    const empty = (await Promise.all(CLOUD_KINDS.map((k) => to.count(cloudType(k))))).every((n) => n === 0);
    if (empty)
      await to.commit(
        records.map((r) => ({
          op: 'create' as const,
          object: {
            apiVersion: r.apiVersion,
            kind: r.kind,
            metadata: {
              name: r.metadata.name,
              namespace: r.metadata.namespace,
              uid: r.metadata.uid,
              labels: r.metadata.labels ?? {},
              annotations: r.metadata.annotations ?? {},
            },
            spec: r.spec,
            status: r.status,
          },
        })),
      );
  } finally {
    await to.close();
  }
  for (let i = 0; i < records.length; i += 500)
    await from.commit(
      records.slice(i, i + 500).map((r) => ({
        op: 'delete' as const,
        type: cloudType(r.kind as (typeof CLOUD_KINDS)[number]),
        namespace: r.metadata.namespace,
        name: r.metadata.name,
      })),
    );
  return records.length;
}

/** Pause before starting again a thread that died, and between failed starts. */
const RESTART_DELAY_MS = 1000;

interface Launched extends ReadyThread<number> {
  url: string;
}

/** Start one cloud thread and wait until it listens. */
async function launch(data: CloudWorkerData): Promise<Launched> {
  const thread = await launchThread<number>(
    new URL('./embedded-cloud-worker.ts', import.meta.url),
    data,
    'the embedded cloud thread',
  );
  return { ...thread, url: `http://${urlHost(data.host)}:${thread.ready}` };
}

/**
 * Start the cloud thread and wait until it listens. A thread that dies is started again (after
 * {@link RESTART_DELAY_MS}, on a new port: the catalog and `/cloud` follow `url`), so the
 * region's cloud is never silently gone; its state is in its store.
 */
export async function startCloudThread(options: {
  config: Config;
  adminProjectId: string | undefined;
  host: string;
  log: () => Logger;
}): Promise<CloudThread> {
  const data: CloudWorkerData = {
    config: options.config,
    cloudStore: cloudStoreConfig(options.config),
    adminProjectId: options.adminProjectId,
    host: options.host,
  };
  const thread = await superviseThread({
    what: 'the embedded cloud thread',
    launch: () => launch(data),
    log: options.log,
    backFields: (t) => ({ url: t.url }),
    restartDelayMs: RESTART_DELAY_MS,
  });
  return {
    get url() {
      return thread.current.url;
    },
    ...threadFigures(thread),
    async kill() {
      await thread.current.worker.terminate();
    },
    close: () => thread.close(),
  };
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and `Expect`,
 * which this server has already answered.
 */
const HOP_BY_HOP = new Set([
  'expect',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/**
 * The public `/cloud` endpoints: every request forwarded as it came (method, path, headers,
 * body, streamed) to the cloud thread, and its answer streamed back as it was given. The `Host`
 * header goes along, so the links the services put in their answers name the address the
 * client used. Body limits are the cloud's own (an image upload may be far larger than an API
 * call), so nothing is read here.
 */
export function cloudProxy(target: () => string): FastifyPluginAsync {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return async (app) => {
    app.removeAllContentTypeParsers();
    // the body stays a stream: handed on, not parsed
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    app.addHook('onClose', async () => agent.destroy());
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      const upstream = await new Promise<IncomingMessage>((done, fail) => {
        const out = httpRequest(
          new URL(req.url, target()),
          { method: req.method, headers: forwardable(req.headers), agent },
          done,
        );
        out.on('error', fail);
        // the parser's stream when the request named a content type, the raw request otherwise
        const body = req.body as Readable | undefined;
        (body && typeof body.pipe === 'function' ? body : req.raw).pipe(out);
      }).catch((err: unknown) => {
        req.log.error({ err }, 'the embedded cloud thread is not answering');
        return undefined;
      });
      if (!upstream) {
        return reply
          .code(503)
          .type('application/json')
          .send({ error: { code: 503, message: 'The embedded cloud is not answering; try again.' } });
      }
      void reply.code(upstream.statusCode ?? 502);
      for (const [k, v] of Object.entries(forwardable(upstream.headers))) void reply.header(k, v);
      return reply.send(upstream);
    };
    const methods: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
    app.route({ method: methods, url: '/', handler, exposeHeadRoute: false });
    app.route({ method: methods, url: '/*', handler, exposeHeadRoute: false });
  };
}
