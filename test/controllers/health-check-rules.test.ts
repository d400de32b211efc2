import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  evaluateMachine,
  remediationAllowed,
} from '../../src/controllers/machine-health-check/mhc-evaluate.ts';
import type { MachineHealthCheckSpec } from '../../src/domain/index.ts';
import { machine, READY } from './builders.ts';

const spec: MachineHealthCheckSpec = {
  clusterName: 'c1',
  selector: {},
  checks: {
    nodeStartupTimeoutSeconds: 600,
    unhealthyNodeConditions: [
      { type: 'Ready', status: 'False', timeoutSeconds: 300 },
      { type: 'Ready', status: 'Unknown', timeoutSeconds: 300 },
    ],
  },
  remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
};
const T0 = Date.parse('2026-01-01T00:00:00Z');

void test('a machine whose server went to ERROR is unhealthy at once, with the cloud message', () => {
  const m = machine('m1', {
    conditions: [
      {
        type: 'InfrastructureReady',
        status: 'False',
        reason: 'InstanceStateError',
        message: 'server m1 is ERROR: No valid host was found',
      },
    ],
  });
  const v = evaluateMachine(m, spec, T0, T0);
  assert.equal(v.healthy, false);
  assert.equal(v.reason, 'InstanceStateError');
  assert.match(v.message!, /No valid host was found/);
});

void test('a node that stays NotReady past its timeout makes the machine unhealthy; before that, a recheck is scheduled', () => {
  const m = machine('m1', {
    nodeRef: 'm1',
    conditions: [
      ...READY.filter((c) => c.type !== 'NodeReady'),
      { type: 'NodeReady', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  });
  const early = evaluateMachine(m, spec, T0 + 299_000, T0);
  assert.equal(early.healthy, true);
  assert.equal(early.recheckAtMs, T0 + 300_000);
  const late = evaluateMachine(m, spec, T0 + 300_000, T0);
  assert.equal(late.healthy, false);
  assert.match(late.message!, /Ready=False for more than 300 s/);
});

void test('a machine with no node after the startup timeout is unhealthy; a deleted node is unhealthy at once', () => {
  const m = machine('m1', { created: '2026-01-01T00:00:00Z' });
  assert.equal(evaluateMachine(m, spec, T0 + 599_000, T0).healthy, true);
  assert.equal(evaluateMachine(m, spec, T0 + 600_000, T0).reason, 'NodeStartupTimeout');
  const gone = machine('m2', {
    nodeRef: 'm2',
    conditions: [{ type: 'NodeReady', status: 'False', reason: 'NodeDeleted' }],
  });
  assert.equal(evaluateMachine(gone, spec, T0, T0).healthy, false);
});

void test('remediation short-circuits when more machines are unhealthy than allowed', () => {
  assert.equal(remediationAllowed(spec, 10, 4).allowed, true);
  const stop = remediationAllowed(spec, 10, 5);
  assert.equal(stop.allowed, false);
  assert.match(stop.message!, /5 of 10 machines are unhealthy/);
  assert.equal(
    remediationAllowed({ ...spec, remediation: { triggerIf: { unhealthyInRange: '[1-2]' } } }, 10, 3).allowed,
    false,
  );
  assert.equal(remediationAllowed({ ...spec, remediation: {} }, 3, 3).allowed, true);
  // A percentage never rounds down to zero: a group of one machine can be healed.
  assert.equal(
    remediationAllowed({ ...spec, remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '80%' } } }, 1, 1)
      .allowed,
    true,
  );
  assert.equal(
    remediationAllowed({ ...spec, remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 0 } } }, 1, 1)
      .allowed,
    false,
  );
});
