import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  controlPlaneDomains,
  nextFailureDomain,
  selectControlPlaneVictim,
} from '../../src/controllers/kubeadm-control-plane/kcp-placement.ts';
import { machineMatchesNode, machinesToDelete } from '../../src/controllers/machine-set/ms-deletion.ts';
import { machine, READY } from './builders.ts';

const AZS = controlPlaneDomains([
  { name: 'AZ-1', controlPlane: true },
  { name: 'AZ-2', controlPlane: true },
  { name: 'AZ-3', controlPlane: true },
]);

void test('three control plane machines land in three different availability zones', () => {
  const placed: ReturnType<typeof machine>[] = [];
  for (let i = 0; i < 3; i++) {
    const fd = nextFailureDomain(AZS, placed);
    placed.push(machine(`m${i}`, { fd: fd! }));
  }
  assert.deepEqual(
    placed.map((m) => m.spec.failureDomain),
    ['AZ-1', 'AZ-2', 'AZ-3'],
  );
  // A fourth (surge during a rollout) goes to the zone with the fewest, in order.
  assert.equal(nextFailureDomain(AZS, placed), 'AZ-1');
  // Deleting machines do not count.
  assert.equal(
    nextFailureDomain(AZS, [machine('a', { fd: 'AZ-1' }), machine('b', { fd: 'AZ-2', deleting: true })]),
    'AZ-2',
  );
  // Zones not flagged for the control plane are skipped.
  assert.deepEqual(controlPlaneDomains([{ name: 'AZ-1', controlPlane: false }, { name: 'AZ-2' }]), ['AZ-2']);
});

void test('a rollout removes the outdated machine from the fullest zone, oldest first', () => {
  const ms = [
    machine('new', { fd: 'AZ-1', version: 'v1.32.0', created: '2026-01-02T00:00:00Z', conditions: READY }),
    machine('old1', { fd: 'AZ-1', version: 'v1.31.0', created: '2026-01-01T00:00:00Z', conditions: READY }),
    machine('old2', { fd: 'AZ-2', version: 'v1.31.0', created: '2026-01-01T00:00:00Z', conditions: READY }),
    machine('old3', { fd: 'AZ-3', version: 'v1.31.0', created: '2026-01-01T00:00:00Z', conditions: READY }),
  ];
  const victim = selectControlPlaneVictim(ms, (m) => m.spec.version !== 'v1.32.0');
  assert.equal(victim?.metadata.name, 'old1');
  // A machine marked for deletion goes first.
  ms[2]!.metadata.annotations['cluster.x-k8s.io/delete-machine'] = 'yes';
  assert.equal(selectControlPlaneVictim(ms, (m) => m.spec.version !== 'v1.32.0')?.metadata.name, 'old2');
});

void test('scale-down removes the nodes named in nodes_to_remove first, then unhealthy, then the oldest', () => {
  const ms = [
    machine('w-a', { created: '2026-01-01T00:00:00Z', nodeRef: 'w-a', conditions: READY }),
    machine('w-b', { created: '2026-01-02T00:00:00Z', nodeRef: 'w-b', conditions: READY }),
    machine('w-c', {
      created: '2026-01-03T00:00:00Z',
      nodeRef: 'w-c',
      conditions: [{ type: 'NodeHealthy', status: 'False' }],
    }),
    machine('w-d', {
      created: '2026-01-04T00:00:00Z',
      nodeRef: 'w-d',
      annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' },
      conditions: READY,
    }),
  ];
  assert.deepEqual(
    machinesToDelete(ms, 1).map((m) => m.metadata.name),
    ['w-d'],
  );
  assert.deepEqual(
    machinesToDelete(ms, 2).map((m) => m.metadata.name),
    ['w-d', 'w-c'],
  );
  assert.deepEqual(
    machinesToDelete(ms, 3).map((m) => m.metadata.name),
    ['w-d', 'w-c', 'w-a'],
  );
  assert.deepEqual(
    machinesToDelete(ms, 3, 'Newest').map((m) => m.metadata.name),
    ['w-d', 'w-c', 'w-b'],
  );
});

void test('nodes_to_remove matches a machine by server uuid, node name or machine name', () => {
  const m = machine('c1-md-x', { providerID: 'openstack://RegionOne/1111-2222', nodeRef: 'node-x' });
  assert.ok(machineMatchesNode(m, ['1111-2222']));
  assert.ok(machineMatchesNode(m, ['node-x']));
  assert.ok(machineMatchesNode(m, ['c1-md-x']));
  assert.ok(!machineMatchesNode(m, ['other']));
});
