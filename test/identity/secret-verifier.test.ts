import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/domain/index.ts';
import { SecretVerifier } from '../../src/identity/secret-verifier.ts';
import { hashSecret } from '../../src/identity/secrets.ts';
import { FAST_SCRYPT } from './helpers.ts';

/** A cost high enough that a real scrypt check is clearly slower than a remembered one. */
const SLOW = { N: 32768, r: 8, p: 1 };

async function timed(fn: () => Promise<boolean>): Promise<{ ok: boolean; ms: number }> {
  const t0 = performance.now();
  const ok = await fn();
  return { ok, ms: performance.now() - t0 };
}

void test('a password checked once is answered from memory the next time, without scrypt', async () => {
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  const v = new SecretVerifier(SLOW, clock);
  const stored = await hashSecret('s3cret', SLOW);
  const first = await timed(() => v.verify('s3cret', stored));
  const again = await timed(() => v.verify('s3cret', stored));
  assert.equal(first.ok, true);
  assert.equal(again.ok, true);
  assert.ok(again.ms * 10 < first.ms, `remembered ${again.ms} ms vs scrypt ${first.ms} ms`);
});

void test('wrong passwords are never remembered and always fail', async () => {
  const clock = new ManualClock(0);
  const v = new SecretVerifier(FAST_SCRYPT, clock);
  const stored = await hashSecret('right', FAST_SCRYPT);
  assert.equal(await v.verify('wrong', stored), false);
  assert.equal(await v.verify('wrong', stored), false);
  assert.equal(await v.verify('right', stored), true);
  assert.equal(await v.verify('wrong', stored), false);
  assert.equal(await v.verify('right', undefined), false, 'an unknown user never logs in');
});

void test('a changed password (new stored hash) no longer accepts the old one', async () => {
  const clock = new ManualClock(0);
  const v = new SecretVerifier(FAST_SCRYPT, clock);
  const before = await hashSecret('old', FAST_SCRYPT);
  assert.equal(await v.verify('old', before), true);
  const after = await hashSecret('new', FAST_SCRYPT);
  assert.equal(await v.verify('old', after), false);
  assert.equal(await v.verify('new', after), true);
});

void test('a remembered success expires after its lifetime and the oldest go first past the size limit', async () => {
  const clock = new ManualClock(0);
  const v = new SecretVerifier(SLOW, clock, { ttlMs: 1000, maxEntries: 1 });
  const a = await hashSecret('a', SLOW);
  const b = await hashSecret('b', SLOW);
  await v.verify('a', a);
  const warm = await timed(() => v.verify('a', a));
  await clock.advance(1001);
  const expired = await timed(() => v.verify('a', a));
  assert.equal(expired.ok, true);
  assert.ok(expired.ms > warm.ms * 10, 'after expiry the secret is checked with scrypt again');
  await v.verify('b', b); // evicts 'a'
  const evicted = await timed(() => v.verify('a', a));
  assert.ok(evicted.ms > warm.ms * 10, 'an evicted entry is checked with scrypt again');
});
