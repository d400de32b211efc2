import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  planRollout,
  resolveIntOrPercent,
  rolloutBounds,
} from '../../src/controllers/machine-deployment/md-rollout.ts';

const set = (name: string, replicas: number, available: number, created = '2026-01-01T00:00:00Z') => ({
  name,
  replicas,
  available,
  created,
});

void test('a rolling update adds one new machine before removing an old one (surge 1, unavailable 0)', () => {
  const bounds = rolloutBounds(3, undefined);
  assert.deepEqual(bounds, { maxSurge: 1, maxUnavailable: 0 });
  // Start: 3 old available, new set empty → the new set may grow by one only.
  let plan = planRollout(3, set('new', 0, 0), [set('old', 3, 3)], bounds);
  assert.deepEqual(Object.fromEntries(plan), { new: 1 });
  // New machine not available yet → nothing old may go.
  plan = planRollout(3, set('new', 1, 0), [set('old', 3, 3)], bounds);
  assert.deepEqual(Object.fromEntries(plan), {});
  // New machine available → one old machine goes.
  plan = planRollout(3, set('new', 1, 1), [set('old', 3, 3)], bounds);
  assert.deepEqual(Object.fromEntries(plan), { old: 2 });
  // Old set shrank → new set grows by one again.
  plan = planRollout(3, set('new', 1, 1), [set('old', 2, 2)], bounds);
  assert.deepEqual(Object.fromEntries(plan), { new: 2 });
  // End: old set goes to zero once the new set is complete and available.
  plan = planRollout(3, set('new', 3, 3), [set('old', 1, 1)], bounds);
  assert.deepEqual(Object.fromEntries(plan), { old: 0 });
});

void test('never drops below the requested number of available machines during a rollout', () => {
  const bounds = rolloutBounds(5, { maxSurge: 1, maxUnavailable: 0 });
  let newSet = set('new', 0, 0);
  let old = set('old', 5, 5);
  for (let step = 0; step < 40 && (old.replicas > 0 || newSet.replicas < 5); step++) {
    const plan = planRollout(5, newSet, [old], bounds);
    newSet = { ...newSet, replicas: plan.get('new') ?? newSet.replicas };
    old = {
      ...old,
      replicas: plan.get('old') ?? old.replicas,
      available: Math.min(old.available, plan.get('old') ?? old.replicas),
    };
    assert.ok(newSet.replicas + old.replicas <= 6, 'never more than replicas + maxSurge');
    assert.ok(newSet.available + old.available >= 5, 'never fewer available than replicas - maxUnavailable');
    // The new machines become available before the next step.
    newSet = { ...newSet, available: newSet.replicas };
  }
  assert.equal(newSet.replicas, 5);
  assert.equal(old.replicas, 0);
});

void test('old machines that are not available are removed first, without waiting', () => {
  const bounds = rolloutBounds(3, undefined);
  const plan = planRollout(3, set('new', 1, 1), [set('old', 3, 2)], bounds);
  // One unavailable old machine goes for free; availability (1 new + 2 old = 3) allows nothing more.
  assert.deepEqual(Object.fromEntries(plan), { old: 2 });
});

void test('plain scaling without a rollout just sets the new set size', () => {
  assert.deepEqual(Object.fromEntries(planRollout(7, set('only', 5, 5), [], rolloutBounds(7, undefined))), {
    only: 7,
  });
  assert.deepEqual(Object.fromEntries(planRollout(2, set('only', 5, 5), [], rolloutBounds(2, undefined))), {
    only: 2,
  });
});

void test('percentages round up for surge and down for unavailability; both zero becomes surge 1', () => {
  assert.equal(resolveIntOrPercent('25%', 10, 1, true), 3);
  assert.equal(resolveIntOrPercent('25%', 10, 0, false), 2);
  assert.deepEqual(rolloutBounds(4, { maxSurge: 0, maxUnavailable: 0 }), { maxSurge: 1, maxUnavailable: 0 });
});
