import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStoredJson } from '../../src/store/row.ts';

const good = {
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: {
    name: 'prod',
    namespace: 'p1',
    uid: 'u1',
    resourceVersion: '7',
    generation: 1,
    creationTimestamp: '2026-12-03T00:00:00.000Z',
    labels: { a: 'b' },
    annotations: {},
    ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u0' }],
    finalizers: ['f'],
  },
  spec: { paused: false, extra: [1] },
  status: {},
};

void test('a stored row of the right shape is handed out with its unknown fields', () => {
  assert.deepEqual(parseStoredJson(JSON.stringify(good)), good);
});

const broken: [string, (o: typeof good) => unknown, RegExp][] = [
  ['a missing uid', (o) => ({ ...o, metadata: { ...o.metadata, uid: undefined } }), /metadata\.uid/],
  ['a generation as text', (o) => ({ ...o, metadata: { ...o.metadata, generation: '1' } }), /generation/],
  ['a label that is a number', (o) => ({ ...o, metadata: { ...o.metadata, labels: { a: 1 } } }), /labels\.a/],
  ['finalizers as one string', (o) => ({ ...o, metadata: { ...o.metadata, finalizers: 'f' } }), /finalizers/],
  [
    'an owner without a uid',
    (o) => ({
      ...o,
      metadata: { ...o.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'S', name: 's' }] },
    }),
    /owner reference's uid/,
  ],
  ['no kind', (o) => ({ ...o, kind: undefined }), /kind/],
  ['a list instead of an object', () => [good], /not an object/],
];

for (const [name, edit, message] of broken) {
  void test(`a stored row with ${name} is refused loudly, naming the field`, () => {
    assert.throws(() => parseStoredJson(JSON.stringify(edit(structuredClone(good)))), message);
  });
}
