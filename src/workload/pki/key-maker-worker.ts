import { parentPort } from 'node:worker_threads';
import { currentThreadId, majorGcCounter } from '../../domain/index.ts';
import { inlineKeyMaker, type KeyMaker } from './key-maker.ts';

/**
 * The key maker's thread (see `KeyMakerThread`): says `{ ready, tid }` once loaded, then answers
 * `{ id, op, args }` with `{ id, value }` or `{ id, error }`.
 */

type Op = keyof KeyMaker;
interface Call {
  id: number;
  op: Op;
  args: unknown[];
}

const port = parentPort!;
const maker = inlineKeyMaker();

port.on('message', (call: Call) => {
  const run = (maker[call.op] as (...args: unknown[]) => Promise<unknown>).bind(maker);
  void run(...call.args).then(
    (value) => port.postMessage({ id: call.id, value }),
    (err: unknown) =>
      port.postMessage({ id: call.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
port.postMessage({ ready: true, tid: currentThreadId(), gcs: majorGcCounter() });
