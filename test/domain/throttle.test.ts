import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { throttled } from '../../src/domain/index.ts';

void test('a throttled call runs at once after a quiet spell', () => {
  let runs = 0;
  const t = throttled(10_000, () => runs++);
  t.call();
  assert.equal(runs, 1);
  t.cancel();
});

void test('the calls of a busy spell end in one run when the period is up, none lost', async () => {
  // a period long against a loaded machine's timer lateness, so the checks inside it hold
  const period = 300;
  const at: number[] = [];
  const start = performance.now();
  const t = throttled(period, () => at.push(performance.now() - start));
  t.call(); // runs now
  for (let i = 0; i < 50; i++) t.call(); // one more run, when the period is up
  assert.equal(at.length, 1);
  await sleep(30);
  t.call();
  assert.equal(at.length, 1, 'nothing runs before the period is up');
  await sleep(period + 100);
  assert.equal(at.length, 2, 'the busy spell ends in exactly one run');
  assert.ok(at[1]! >= period - 5, `the second run waited for the period (${at[1]!.toFixed(0)} ms)`);
  await sleep(period + 50);
  assert.equal(at.length, 2, 'no run without a call');
  t.call();
  assert.equal(at.length, 3, 'a call after a quiet spell runs at once');
});

void test('a cancelled throttle drops the run that was waiting', async () => {
  let runs = 0;
  const t = throttled(30, () => runs++);
  t.call();
  t.call();
  t.cancel();
  await sleep(60);
  assert.equal(runs, 1);
});
