import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CapiLabels, type ApiObject } from '../../src/domain/index.ts';
import { GroupRanks, WorkQueue, groupOf } from '../../src/controllers/runtime/work-queue.ts';

/** An object of `cluster` (its Cluster API cluster-name label), or of no cluster. */
function obj(name: string, cluster?: string, namespace = 'p1'): ApiObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: cluster ? { [CapiLabels.clusterName]: cluster } : {},
      annotations: {},
      finalizers: [],
      ownerReferences: [],
    },
    spec: {},
    status: {},
  };
}

function add(q: WorkQueue, o: ApiObject): boolean {
  return q.add({ namespace: o.metadata.namespace, name: o.metadata.name }, { kind: 'object', object: o });
}

/** Take every queued key (each is finished at once, as a reconcile that ended would be). */
function drain(q: WorkQueue): string[] {
  const out: string[] = [];
  for (let next = q.take(); next; next = q.take()) {
    out.push(next.ref.name);
    q.finish(next.key);
  }
  return out;
}

void test('an object belongs to the cluster its cluster-name label names, else it is a group of its own', () => {
  assert.equal(groupOf(obj('m1', 'alpha')), 'p1/alpha');
  assert.equal(groupOf(obj('alpha')), 'p1/alpha', 'a cluster is the group its objects name');
  assert.equal(groupOf(obj('lonely')), 'p1/lonely');
  assert.equal(groupOf(obj('m1', 'alpha', 'p2')), 'p2/alpha', 'clusters of two projects are two groups');
});

void test('keys are taken cluster by cluster, in the order the clusters were first seen, first in first out within one', () => {
  const q = new WorkQueue();
  add(q, obj('a-1', 'a'));
  add(q, obj('b-1', 'b'));
  add(q, obj('c-1', 'c'));
  add(q, obj('b-2', 'b'));
  add(q, obj('a-2', 'a'));
  add(q, obj('a-3', 'a'));
  assert.equal(q.depth, 6);
  assert.deepEqual(drain(q), ['a-1', 'a-2', 'a-3', 'b-1', 'b-2', 'c-1']);
  assert.equal(q.depth, 0);
});

void test('a key queued again keeps its cluster’s place ahead of younger clusters, and is queued once', () => {
  const q = new WorkQueue();
  add(q, obj('a-1', 'a'));
  add(q, obj('b-1', 'b'));
  const first = q.take();
  assert.equal(first?.ref.name, 'a-1');
  // changed while in flight: marked dirty, queued again when its reconcile ends
  assert.equal(add(q, obj('a-1', 'a')), false);
  add(q, obj('c-1', 'c'));
  assert.equal(q.finish(first.key), true);
  assert.equal(add(q, obj('a-1', 'a')), false, 'already queued');
  assert.deepEqual(drain(q), ['a-1', 'b-1', 'c-1']);
  // a timer or a mapped change of a known key keeps its group too
  add(q, obj('c-1', 'c'));
  q.add({ namespace: 'p1', name: 'b-1' }, { kind: 'timer' });
  q.add({ namespace: 'p1', name: 'a-1' }, { kind: 'mapped' });
  assert.deepEqual(drain(q), ['a-1', 'b-1', 'c-1']);
});

void test('queues sharing their ranks take clusters in the same order, whichever queue saw a cluster first', () => {
  const ranks = new GroupRanks();
  const machines = new WorkQueue(ranks);
  const configs = new WorkQueue(ranks);
  add(machines, obj('b-m', 'b'));
  add(machines, obj('a-m', 'a'));
  // the configs queue sees a's object first, but b was asked for first
  add(configs, obj('a-cfg', 'a'));
  add(configs, obj('b-cfg', 'b'));
  assert.deepEqual(drain(configs), ['b-cfg', 'a-cfg']);
  assert.deepEqual(drain(machines), ['b-m', 'a-m']);
  // a queue of its own has an order of its own
  const own = new WorkQueue();
  add(own, obj('a-x', 'a'));
  add(own, obj('b-x', 'b'));
  assert.deepEqual(drain(own), ['a-x', 'b-x']);
});

void test('a cluster whose keys are all forgotten is forgotten, and comes back as the youngest', () => {
  const ranks = new GroupRanks();
  const q = new WorkQueue(ranks);
  add(q, obj('a-1', 'a'));
  add(q, obj('a-2', 'a'));
  add(q, obj('b-1', 'b'));
  assert.deepEqual(drain(q), ['a-1', 'a-2', 'b-1']);
  assert.equal(ranks.size, 2);
  q.forget('p1/a-1');
  assert.equal(ranks.size, 2, 'a still has a key');
  q.forget('p1/a-2');
  assert.equal(ranks.size, 1, 'a is gone with its last key');
  q.forget('p1/a-2');
  assert.equal(ranks.size, 1, 'forgetting twice releases once');
  add(q, obj('a-9', 'a'));
  add(q, obj('b-1', 'b'));
  assert.deepEqual(drain(q), ['b-1', 'a-9']);
});

void test('many keys of many clusters come out in cluster order, then arrival order', () => {
  const q = new WorkQueue();
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const firstSeen: string[] = [];
  const added: { name: string; cluster: string }[] = [];
  for (let i = 0; i < 500; i++) {
    const cluster = `c${Math.floor(random() * 40)}`;
    if (!firstSeen.includes(cluster)) firstSeen.push(cluster);
    const name = `k${i}`;
    add(q, obj(name, cluster));
    added.push({ name, cluster });
  }
  const expected = [...added]
    .sort((x, y) => firstSeen.indexOf(x.cluster) - firstSeen.indexOf(y.cluster))
    .map((x) => x.name);
  assert.deepEqual(drain(q), expected);
});
