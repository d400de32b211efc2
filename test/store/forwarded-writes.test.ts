import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, NotFoundError } from '../../src/domain/index.ts';
import {
  ForwardedWrites,
  SqliteStore,
  answerWrite,
  type WriteAnswer,
  type WriteRequest,
} from '../../src/store/index.ts';

/**
 * The store of a thread that shares Magnetar's SQLite file: reads on its own connection,
 * writes made by the main thread's connection. Here both connections are in one thread and
 * the hand-over is a structured clone, as a message between threads is.
 */
async function pair(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'magnetar-forwarded-'));
  const main = new SqliteStore({ path: join(dir, 'm.sqlite'), backgroundCheckpoints: false });
  const reads = new SqliteStore({ path: join(dir, 'm.sqlite'), backgroundCheckpoints: false });
  const sent: WriteRequest[] = [];
  const thread: ForwardedWrites = new ForwardedWrites(reads, (req) => {
    sent.push(req);
    void answerWrite(main, structuredClone(req)).then((a: WriteAnswer) =>
      thread.answered(structuredClone(a)),
    );
  });
  t.after(async () => {
    await thread.close();
    await main.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { main, thread, sent };
}

const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  spec: { data },
  status: {},
});

void test('a write made through the main thread is seen by the next read on the thread’s own connection', async (t) => {
  const { main, thread, sent } = await pair(t);
  const created = await thread.create(cm('a', { k: 'v' }));
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.op, 'create');
  const read = await thread.get('ConfigMap', 'ns', 'a');
  assert.deepEqual(read?.spec, { data: { k: 'v' } });
  assert.equal(read?.metadata.resourceVersion, created.metadata.resourceVersion);
  assert.equal((await main.get('ConfigMap', 'ns', 'a'))?.metadata.uid, created.metadata.uid);
  // the feed, read on the thread's connection, has the main thread's write
  const events = await thread.changes(0, { types: ['ConfigMap'] });
  assert.deepEqual(
    events.map((e) => [e.type, e.object.metadata.name]),
    [['ADDED', 'a']],
  );
  assert.ok(read);
  const updated = await thread.update({ ...read, spec: { data: { k: 'w' } } });
  assert.deepEqual((await thread.get('ConfigMap', 'ns', 'a'))?.spec, { data: { k: 'w' } });
  assert.equal(await thread.versionOf('ConfigMap', 'ns', 'a'), updated.metadata.resourceVersion);
});

void test('refusals cross back as the errors the callers test for, and change nothing', async (t) => {
  const { thread } = await pair(t);
  const a = await thread.create(cm('a'));
  await assert.rejects(thread.create(cm('a')), (err: unknown) => {
    assert.ok(err instanceof ConflictError);
    assert.equal(err.code, 'AlreadyExists');
    return true;
  });
  await thread.update({ ...a, spec: { data: { n: '1' } } });
  await assert.rejects(thread.update({ ...a, spec: { data: { n: 'stale' } } }), ConflictError);
  await assert.rejects(thread.delete('ConfigMap', 'ns', 'missing'), NotFoundError);
  assert.deepEqual((await thread.get('ConfigMap', 'ns', 'a'))?.spec, { data: { n: '1' } });
});

void test('leases are taken through the main thread: one holder at a time', async (t) => {
  const { main, thread } = await pair(t);
  assert.equal(await thread.acquireLease('workload-emulator', 'thread-1', 15_000, 1_000), true);
  assert.equal(await main.acquireLease('workload-emulator', 'other', 15_000, 2_000), false);
  assert.equal(await thread.leaseHolder('workload-emulator', 2_000), 'thread-1');
  await thread.releaseLease('workload-emulator', 'thread-1');
  assert.equal(await main.acquireLease('workload-emulator', 'other', 15_000, 3_000), true);
});

void test('the main thread’s commit announcements reach the listeners; only writes are made for the thread', async (t) => {
  const { main } = await pair(t);
  let heard = 0;
  const reads = new SqliteStore({ path: ':memory:', backgroundCheckpoints: false });
  const thread = new ForwardedWrites(reads, () => undefined);
  const stop = thread.onChange(() => heard++);
  thread.changed();
  thread.changed();
  stop();
  thread.changed();
  assert.equal(heard, 2);

  const refused = await answerWrite(main, { write: 7, op: 'get' as never, args: ['ConfigMap', 'ns', 'a'] });
  assert.deepEqual(refused, { write: 7, ok: false, error: { name: 'Error', message: 'not a write: get' } });

  // a write whose answer never comes fails when the store closes
  const pending = thread.create(cm('never'));
  await thread.close();
  await assert.rejects(pending, /the store is closed/);
});
