import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import {
  currentThreadId,
  majorGcCounter,
  majorGcsOf,
  silentLogger,
  threadCpuSeconds,
} from '../../src/domain/index.ts';
import { KeyMakerThread } from '../../src/workload/index.ts';

const linux = existsSync('/proc/thread-self');

void test(
  'the main thread is told apart by its id, and its CPU time grows with work',
  { skip: !linux },
  () => {
    assert.equal(currentThreadId(), process.pid);
    const before = threadCpuSeconds(process.pid)!;
    const until = Date.now() + 150;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    assert.ok(x > 0);
    const after = threadCpuSeconds(process.pid)!;
    assert.ok(after - before >= 0.05, `${before} → ${after}`);
    // a thread that is not there has no figure
    assert.equal(threadCpuSeconds(2 ** 30), undefined);
    assert.equal(threadCpuSeconds(undefined), undefined);
  },
);

void test(
  'the key maker reports the CPU of its own thread, not of the process',
  { skip: !linux },
  async () => {
    const keys = new KeyMakerThread(() => silentLogger);
    try {
      assert.equal(keys.cpuSeconds(), undefined, 'no thread before the first call');
      assert.equal(keys.majorGcs(), undefined, 'no count before the first call');
      await keys.createCa('warm-up', Date.now());
      assert.equal(typeof keys.majorGcs(), 'number', 'the thread sent its count when ready');
      const main0 = threadCpuSeconds(process.pid)!;
      const before = keys.cpuSeconds()!;
      await Promise.all(Array.from({ length: 20 }, (_, i) => keys.createCa(`ca-${i}`, Date.now())));
      const after = keys.cpuSeconds()!;
      const main = threadCpuSeconds(process.pid)! - main0;
      assert.ok(after > before, `${before} → ${after}`);
      // the work was the thread's: this thread only passed messages
      assert.ok(after - before > main, `key maker ${after - before} s, main ${main} s`);
    } finally {
      await keys.close();
    }
    assert.equal(keys.cpuSeconds(), undefined, 'no figure once it stopped');
  },
);

void test('a thread counts its full collections where another thread reads them, and only those', async () => {
  // a way to ask for a collection, as `--expose-gc` gives one
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'minor' }) => void;
  const counter = majorGcCounter();
  // the observer hears of a collection after the task it happened in
  const settle = () => new Promise((r) => setTimeout(r, 50));
  assert.equal(majorGcsOf(counter), 0);
  gc({ type: 'minor' });
  await settle();
  assert.equal(majorGcsOf(counter), 0, 'a young-generation collection is not a full one');
  gc();
  gc();
  await settle();
  assert.equal(majorGcsOf(counter), 2);
  // another thread reads the same cell
  const reader = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     parentPort.postMessage(Atomics.load(new Int32Array(workerData), 0));`,
    { eval: true, workerData: counter },
  );
  const seen = await new Promise<number>((resolve, reject) => {
    reader.once('message', resolve);
    reader.once('error', reject);
  });
  await reader.terminate();
  assert.equal(seen, 2);
  assert.equal(majorGcsOf(undefined), undefined, 'no counter, no figure');
});
