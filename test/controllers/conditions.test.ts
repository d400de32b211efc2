import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../src/domain/index.ts';
import {
  buildConditions,
  falseCondition,
  trueCondition,
  unknownCondition,
} from '../../src/controllers/common/conditions.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';

const previous: Condition[] = [
  {
    type: 'Ready',
    status: 'False',
    reason: 'Provisioning',
    message: 'server is BUILD',
    lastTransitionTime: T0,
  },
  { type: 'InfrastructureReady', status: 'False', reason: 'Provisioning', lastTransitionTime: T0 },
  { type: 'HealthCheckSucceeded', status: 'True', lastTransitionTime: T0 },
];

void test('a condition keeps its transition time while its status stays, and takes now when it changes or is new', () => {
  const out = buildConditions(
    previous,
    [
      falseCondition('Ready', 'WaitingForNode', 'waiting for the node to join the cluster'),
      trueCondition('InfrastructureReady'),
      unknownCondition('NodeHealthy', 'NodeDoesNotExist', 'no node yet'),
    ],
    T1,
  );
  assert.deepEqual(out, [
    { type: 'InfrastructureReady', status: 'True', lastTransitionTime: T1 },
    {
      type: 'NodeHealthy',
      status: 'Unknown',
      reason: 'NodeDoesNotExist',
      message: 'no node yet',
      lastTransitionTime: T1,
    },
    {
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForNode',
      message: 'waiting for the node to join the cluster',
      lastTransitionTime: T0,
    },
  ]);
});

void test('conditions another writer owns are kept as they were, and every condition is listed by type', () => {
  const out = buildConditions(previous, [trueCondition('Ready')], T1, ['HealthCheckSucceeded', 'Missing'], 4);
  assert.deepEqual(out, [
    { type: 'HealthCheckSucceeded', status: 'True', lastTransitionTime: T0 },
    { type: 'Ready', status: 'True', observedGeneration: 4, lastTransitionTime: T1 },
  ]);
  assert.deepEqual(previous[0]!.status, 'False', 'the previous list is left as it was');
});

void test('a type given twice keeps its first place and takes the later values', () => {
  const out = buildConditions(
    undefined,
    [
      falseCondition('Ready', 'A', 'first'),
      trueCondition('Available'),
      falseCondition('Ready', 'B', 'second'),
    ],
    T1,
  );
  assert.deepEqual(
    out.map((c) => [c.type, c.reason ?? '', c.message ?? '']),
    [
      ['Available', '', ''],
      ['Ready', 'B', 'second'],
    ],
  );
});
