import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { LOOKUP_TTL_MS, Lookups, type Found } from '../../src/controllers/common/lookups.ts';

/** A lookup that counts its calls and answers what `answers` holds, in turn. */
function counted<T>(...answers: (Found<T> | Error)[]) {
  const calls = { n: 0 };
  const look = async (): Promise<Found<T>> => {
    const a = answers[Math.min(calls.n, answers.length - 1)];
    calls.n++;
    await new Promise<void>((r) => setImmediate(r));
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, look };
}

void test('machines of a project asking for the same image at once share one lookup, and its answer for a minute', async () => {
  const clock = new ManualClock();
  const lookups = new Lookups(clock);
  const image = { id: 'img-1' };
  const { calls, look } = counted(image, { id: 'img-2' });
  const six = await Promise.all(Array.from({ length: 6 }, () => lookups.find('p1\0image\0ubuntu', look)));
  assert.equal(calls.n, 1);
  assert.ok(six.every((f) => f === image));
  await clock.advance(LOOKUP_TTL_MS - 1);
  assert.equal(await lookups.find('p1\0image\0ubuntu', look), image);
  assert.equal(calls.n, 1);
  // another project, or another name, is its own lookup
  await lookups.find('p2\0image\0ubuntu', look);
  assert.equal(calls.n, 2);
  // past the minute the cloud is asked again, and its new answer is taken
  await clock.advance(1);
  assert.deepEqual(await lookups.find('p1\0image\0ubuntu', look), { id: 'img-2' });
  assert.equal(calls.n, 3);
});

void test('a miss, an ambiguous name or a failed lookup is not remembered: the next machine asks the cloud again', async () => {
  const clock = new ManualClock();
  const lookups = new Lookups(clock);
  const { calls, look } = counted<{ id: string }>(undefined, 'ambiguous', new Error('503'), { id: 'f1' });
  assert.equal(await lookups.find('p1\0flavor\0m1.small', look), undefined);
  assert.equal(await lookups.find('p1\0flavor\0m1.small', look), 'ambiguous');
  await assert.rejects(lookups.find('p1\0flavor\0m1.small', look), /503/);
  assert.deepEqual(await lookups.find('p1\0flavor\0m1.small', look), { id: 'f1' });
  assert.deepEqual(await lookups.find('p1\0flavor\0m1.small', look), { id: 'f1' });
  assert.equal(calls.n, 4);
});
