import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'coe.mjs');

test('the coe executable starts and prints its help', () => {
  const r = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Usage: coe /);
  assert.match(r.stdout, /cluster/);
});

test('the coe executable exits 2 on a usage error', () => {
  const r = spawnSync(process.execPath, [BIN, 'cluster', 'show'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /missing required argument 'cluster'/);
});
