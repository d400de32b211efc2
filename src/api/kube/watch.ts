import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  acceptsTable,
  buildTable,
  ConflictError,
  kubeStatus,
  matchesFieldSelector,
  matchesSelector,
  type ApiObject,
  type KubeObject,
} from '../../domain/index.ts';
import type { KubeQuery, KubeRoutesDeps } from './context.ts';
import { toWire } from './objects.ts';
import { printerOf } from './printers.ts';
import type { KubeResource } from './resources.ts';
import { badRequest } from './status.ts';

/**
 * `?watch=1`: one JSON event `{type, object}` per line over a chunked response, read from the
 * store's revision feed. Without a resourceVersion (or "0") the current objects come first as
 * ADDED; with one, every change after it follows. A revision the feed no longer holds is an
 * ERROR event with a 410 `Expired` Status (the client lists again). With a Table Accept header
 * each event carries a one-row Table, columns on the first one only (`kubectl get -w`).
 */

/** Hard cap of a watch's life, as the API server's. @default 1800 s */
const MAX_TIMEOUT_SECONDS = 1800;
const PAGE = 500;

export async function serveWatch(
  deps: KubeRoutesDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  r: KubeResource,
  namespaces: string[] | undefined,
  q: KubeQuery,
): Promise<void> {
  let last: number;
  const rv = q.resourceVersion;
  const initial: KubeObject[] = [];
  const matches = (o: KubeObject) =>
    (!namespaces || namespaces.includes(o.metadata.namespace ?? '')) &&
    (!q.labelSelector || matchesSelector(o.metadata.labels, q.labelSelector)) &&
    matchesFieldSelector(o, q.fieldSelector);
  if (rv === undefined || rv === '' || rv === '0') {
    if (!namespaces || namespaces.length > 0) {
      const list = await deps.store.list<ApiObject<unknown, unknown>>(r.type, {
        ...(namespaces ? { namespace: namespaces[0]! } : {}),
        ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
      });
      for (const o of list.items) {
        const w = toWire(o);
        if (matches(w)) initial.push(w);
      }
      last = Number(list.resourceVersion);
    } else last = await deps.store.currentRevision();
  } else {
    if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: "${rv}"`);
    last = Number(rv);
  }

  const table = acceptsTable(req.headers.accept);
  let first = true;
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'no-cache, private',
    'transfer-encoding': 'chunked',
    'x-openstack-request-id': req.id,
  });
  raw.flushHeaders();
  const write = (type: string, object: KubeObject | ReturnType<typeof kubeStatus>) => {
    let payload: unknown = object;
    if (table && type !== 'ERROR') {
      const t = buildTable(printerOf(r.type), [object as KubeObject], {
        resourceVersion: (object as KubeObject).metadata.resourceVersion ?? '',
        nowMs: deps.clock.now(),
        ...(q.includeObject ? { includeObject: q.includeObject } : {}),
      });
      if (!first) t.columnDefinitions = [];
      first = false;
      payload = t;
    }
    raw.write(JSON.stringify({ type, object: payload }) + '\n');
  };

  let closed = false;
  let running = false;
  let again = false;
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    cancelTimer();
    if (!raw.writableEnded) raw.end();
  };
  const pump = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (;;) {
          const events = await deps.store.changes(last, { types: [r.type], limit: PAGE });
          for (const e of events) {
            last = e.revision;
            const w = toWire(e.object);
            if (!closed && matches(w)) write(e.type, w);
          }
          if (events.length < PAGE || closed) break;
        }
      } while (again && !closed);
    } catch (err) {
      if (!closed) {
        const expired = err instanceof ConflictError && err.code === 'Expired';
        write(
          'ERROR',
          expired
            ? kubeStatus(410, `too old resource version: ${rv ?? last}`, 'Expired')
            : kubeStatus(500, 'the watch failed; list again', 'InternalError'),
        );
        if (!expired) req.log.error({ err }, 'watch failed');
        close();
      }
    } finally {
      running = false;
    }
  };
  const unsubscribe = deps.store.onChange(() => void pump());
  const timeout = Math.min(q.timeoutSeconds || MAX_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS) * 1000;
  const cancelTimer = deps.clock.setTimer(close, timeout);
  req.raw.on('close', close);
  raw.on('close', close);
  for (const o of initial) write('ADDED', o);
  await pump();
}
