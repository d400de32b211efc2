import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SETTINGS } from '../../src/controllers/deps.ts';
import { magnumNames } from '../../src/controllers/magnum-driver/magnum-names.ts';
import { RenderCache, type RenderInput } from '../../src/controllers/magnum-driver/magnum-render.ts';
import type { ClusterTemplateObject, MagnumClusterObject, NodeGroupObject } from '../../src/domain/index.ts';

const meta = (name: string, uid: string, generation = 1, resourceVersion = '1') => ({
  name,
  namespace: 'p1',
  uid,
  generation,
  resourceVersion,
  labels: {},
  annotations: {},
  finalizers: [],
  ownerReferences: [],
  creationTimestamp: '2026-01-01T00:00:00Z',
});

function cluster(generation = 1): MagnumClusterObject {
  return {
    apiVersion: 'magnum.magnetar.io/v1',
    kind: 'Cluster',
    metadata: meta('k8s', '0b0c3a2e-5d1f-4c1e-9a57-5b1f0e2d9c11', generation),
    spec: {
      action: 'CREATE',
      operationId: 'op-1',
      clusterTemplateId: 't1',
      keypair: 'key',
      dockerVolumeSize: null,
      labels: {},
      masterFlavorId: 'm1.small',
      flavorId: 'm1.small',
      fixedNetwork: null,
      fixedSubnet: null,
      floatingIpEnabled: true,
      masterLbEnabled: true,
      createTimeout: 60,
      discoveryUrl: null,
      userId: 'u1',
    },
    status: {},
  };
}

function template(): ClusterTemplateObject {
  return {
    apiVersion: 'magnum.magnetar.io/v1',
    kind: 'ClusterTemplate',
    metadata: meta('t1', 't1', 1, '7'),
    spec: { coe: 'kubernetes', imageId: 'ubuntu', keypairId: null, externalNetworkId: 'public', labels: {} },
    status: {},
  } as unknown as ClusterTemplateObject;
}

function group(name: string, role: string, nodeCount: number, generation = 1, id = 0): NodeGroupObject {
  return {
    apiVersion: 'magnum.magnetar.io/v1',
    kind: 'NodeGroup',
    metadata: meta(`c.${name}`, `uid-${name}`, generation, String(10 + generation)),
    spec: {
      action: 'CREATE',
      operationId: 'op-1',
      clusterId: '0b0c3a2e-5d1f-4c1e-9a57-5b1f0e2d9c11',
      name,
      role,
      nodeCount,
      minNodeCount: 1,
      maxNodeCount: null,
      flavorId: null,
      imageId: null,
      dockerVolumeSize: null,
      labels: {},
      isDefault: true,
      id,
    },
    status: {},
  };
}

function input(over: Partial<RenderInput> = {}): RenderInput {
  const c = over.cluster ?? cluster();
  return {
    cluster: c,
    template: template(),
    nodeGroups: [group('default-master', 'master', 3), group('default-worker', 'worker', 3, 1, 1)],
    names: magnumNames(c),
    version: 'v1.31.9',
    settings: DEFAULT_SETTINGS,
    pauseHealthChecks: false,
    ...over,
  };
}

const replicasOf = (d: ReturnType<RenderCache['render']>) =>
  (d.groups[0]!.machineDeployment.object.spec as { replicas: number }).replicas;

test('magnum driver: a cluster is rendered once per operation, and each reconcile gets the node groups it read and a Cluster it may annotate', () => {
  const cache = new RenderCache();
  const first = cache.render(input());
  assert.equal(replicasOf(first), 3);

  // Status-only changes of the node groups (new resourceVersion, same generation): same render.
  const later = [group('default-master', 'master', 3), group('default-worker', 'worker', 3, 1, 1)];
  later[1] = { ...later[1]!, metadata: { ...later[1]!.metadata, resourceVersion: '99' } };
  const again = cache.render(input({ nodeGroups: later }));
  assert.equal(again.controlPlane.object, first.controlPlane.object, 'the kept render is given back');
  assert.equal(again.groups[0]!.nodeGroup, later[1], 'with the node group this reconcile read');

  // The driver writes its operation annotations into the Cluster it is given: no other caller sees them.
  again.cluster.object.metadata.annotations!['test/op'] = 'x';
  assert.equal(cache.render(input()).cluster.object.metadata.annotations!['test/op'], undefined);

  // A resize is a new generation of the node group: rendered again.
  const resized = cache.render(
    input({ nodeGroups: [group('default-master', 'master', 3), group('default-worker', 'worker', 5, 2, 1)] }),
  );
  assert.equal(replicasOf(resized), 5);
  // So is a version step, and pausing the health checks.
  const stepped = cache.render(input({ version: 'v1.32.5' }));
  assert.notEqual(stepped.controlPlane.object, resized.controlPlane.object);
  assert.match(JSON.stringify(stepped.controlPlane.object.spec), /v1\.32\.5/);
  const paused = cache.render(input({ pauseHealthChecks: true }));
  assert.equal(
    paused.groups[0]!.healthCheck?.object.metadata.annotations?.['cluster.x-k8s.io/paused'],
    'true',
  );
});
