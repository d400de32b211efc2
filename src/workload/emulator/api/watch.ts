import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  acceptsTable,
  buildTable,
  kubeStatus,
  type KubeObject,
  type Printer,
} from '../../../domain/index.ts';
import type { ModelEvent } from '../cluster-model.ts';
import type { ClusterView } from './cluster-view.ts';
import type { ListQuery } from './http-io.ts';

/**
 * Watches of nodes and pods (`?watch=true`): one JSON event per line over a chunked
 * response. Without a resourceVersion (or with "0") the current objects come first as
 * ADDED; with one, the kept history after it is replayed, or an ERROR 410 tells the client to
 * list again. With a Table Accept header each event carries a one-row Table (columns on the
 * first event only), as `kubectl get -w` expects.
 */
export function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  view: ClusterView,
  options: {
    kind: ModelEvent['kind'];
    current: () => KubeObject[];
    matches: (o: KubeObject) => boolean;
    query: ListQuery;
    printer: Printer;
  },
): void {
  const table = acceptsTable(req.headers.accept);
  let first = true;
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'no-cache, private',
    'transfer-encoding': 'chunked',
  });
  res.flushHeaders();
  const write = (type: string, object: unknown) => {
    let payload = object;
    if (table && type !== 'ERROR') {
      const t = buildTable(options.printer, [object as KubeObject], {
        resourceVersion: (object as KubeObject).metadata.resourceVersion ?? '',
        nowMs: view.clock.now(),
        includeObject: options.query.includeObject,
      });
      if (!first) t.columnDefinitions = [];
      first = false;
      payload = t;
    }
    res.write(JSON.stringify({ type, object: payload }) + '\n');
  };

  const rv = options.query.resourceVersion;
  if (rv === undefined || rv === '' || rv === '0') {
    for (const o of options.current()) if (options.matches(o)) write('ADDED', o);
  } else {
    const n = Number(rv);
    const past = Number.isInteger(n) ? view.model.eventsSince(n) : undefined;
    if (!past) {
      write(
        'ERROR',
        kubeStatus(410, `too old resource version: ${rv} (${view.model.resourceVersion})`, 'Expired'),
      );
      res.end();
      return;
    }
    for (const e of past) if (e.kind === options.kind && options.matches(e.object)) write(e.type, e.object);
  }

  const unsubscribe = view.model.subscribe((e) => {
    if (e.kind === options.kind && options.matches(e.object)) write(e.type, e.object);
  });
  const close = () => {
    unsubscribe();
    cancelTimer();
    view.watches.delete(close);
    if (!res.writableEnded) res.end();
  };
  view.watches.add(close);
  const timeoutMs = Math.min(options.query.timeoutSeconds ?? 1800, 1800) * 1000;
  const cancelTimer = view.clock.setTimer(close, timeoutMs);
  req.on('close', close);
  res.on('close', close);
}
