import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CapiTypes,
  MagnumTypes,
  ManualClock,
  defaultPolicy,
  silentLogger,
  type ApiObject,
  type TypeKey,
} from '../../src/domain/index.ts';
import { createEngine, type ControllerDeps } from '../../src/controllers/index.ts';
import { SqliteStore, type AnyObject } from '../../src/store/index.ts';
import { CachedReads } from '../../src/controllers/common/cached-reads.ts';
import { ObjectCache } from '../../src/controllers/common/object-cache.ts';

const machine = (name: string, replicas = 1) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: { name, namespace: 'p1', labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } },
  spec: { clusterName: 'c1', bootstrap: {}, replicas },
});

/** A SQLite store that counts the `get`s that reach it. */
class CountingStore extends SqliteStore {
  gets = 0;
  override get<T extends AnyObject = ApiObject>(type: TypeKey, namespace: string, name: string) {
    this.gets++;
    return super.get<T>(type, namespace, name);
  }
  override getByUid<T extends AnyObject = ApiObject>(type: TypeKey, uid: string) {
    this.gets++;
    return super.getByUid<T>(type, uid);
  }
}

async function withReads(fn: (store: CountingStore, reads: CachedReads) => Promise<void>): Promise<void> {
  const store = new CountingStore({ path: ':memory:' });
  try {
    await fn(store, new CachedReads(store, new ObjectCache(store, [CapiTypes.Machine])));
  } finally {
    await store.close();
  }
}

test('cached reads: a cached kind is read from the cache, with every write made before the read', async () => {
  await withReads(async (store, reads) => {
    const made = await store.create(machine('m1'));
    assert.equal((await reads.get(CapiTypes.Machine, 'p1', 'm1'))?.metadata.uid, made.metadata.uid);
    const grown = await store.update({ ...made, spec: { ...made.spec, replicas: 2 } });
    const read = await reads.get<typeof grown>(CapiTypes.Machine, 'p1', 'm1');
    assert.equal(read?.metadata.resourceVersion, grown.metadata.resourceVersion);
    assert.deepEqual(read?.spec, grown.spec);
    await store.delete(CapiTypes.Machine, 'p1', 'm1');
    assert.equal(await reads.get(CapiTypes.Machine, 'p1', 'm1'), undefined);
    assert.equal(store.gets, 0, 'no read of a cached kind reached the store');
  });
});

test('cached reads: a read by uid of a cached kind comes from the cache; a deleted or replaced object is not found by its old uid', async () => {
  await withReads(async (store, reads) => {
    const made = await store.create(machine('m1'));
    assert.equal((await reads.getByUid(CapiTypes.Machine, made.metadata.uid))?.metadata.name, 'm1');
    const grown = await store.update({ ...made, spec: { ...made.spec, replicas: 2 } });
    const read = await reads.getByUid<typeof grown>(CapiTypes.Machine, made.metadata.uid);
    assert.equal(read?.metadata.resourceVersion, grown.metadata.resourceVersion);
    await store.delete(CapiTypes.Machine, 'p1', 'm1');
    assert.equal(await reads.getByUid(CapiTypes.Machine, made.metadata.uid), undefined);
    const again = await store.create(machine('m1'));
    assert.equal(await reads.getByUid(CapiTypes.Machine, made.metadata.uid), undefined);
    assert.equal((await reads.getByUid(CapiTypes.Machine, again.metadata.uid))?.metadata.name, 'm1');
    assert.equal(await reads.getByUid(CapiTypes.Machine, 'no-such-uid'), undefined);
    assert.equal(store.gets, 0, 'no read of a cached kind reached the store');
  });
});

test('cached reads: a write still waiting for its batch is committed before the cache answers', async () => {
  await withReads(async (store, reads) => {
    const made = await store.create(machine('m1'));
    await reads.get(CapiTypes.Machine, 'p1', 'm1');
    // not awaited: the write waits for the store's next batch
    const pending = store.update({ ...made, spec: { ...made.spec, replicas: 3 } });
    const read = await reads.get<typeof made>(CapiTypes.Machine, 'p1', 'm1');
    assert.equal((read?.spec as { replicas: number }).replicas, 3);
    // the version read is the current one: a write on it does not conflict
    await pending;
    const next = await store.update({ ...read!, spec: { ...read!.spec, replicas: 4 } });
    assert.equal(next.spec.replicas, 4);
  });
});

test('cached reads: a read is shared and frozen: changing it in place throws and changes nothing', async () => {
  await withReads(async (store, reads) => {
    await store.create(machine('m1'));
    const first = await reads.get<ApiObject>(CapiTypes.Machine, 'p1', 'm1');
    assert.throws(() => {
      first!.metadata.labels.changed = 'yes';
    }, TypeError);
    assert.throws(() => {
      (first!.spec as { replicas: number }).replicas = 9;
    }, TypeError);
    const second = await reads.get<ApiObject>(CapiTypes.Machine, 'p1', 'm1');
    assert.equal(second?.metadata.labels.changed, undefined);
    assert.equal((second?.spec as { replicas: number }).replicas, 1);
    // the next version is built as a new object, as every write does
    const next = await store.update({ ...second!, spec: { ...second!.spec, replicas: 2 } });
    assert.equal(next.spec.replicas, 2);
  });
});

test('cached reads: a kind the cache does not hold is read from the store', async () => {
  await withReads(async (store, reads) => {
    await store.create({
      apiVersion: 'magnum.magnetar.io/v1',
      kind: 'NodeGroup',
      metadata: { name: 'ng', namespace: 'p1' },
      spec: {},
    });
    assert.equal((await reads.get(MagnumTypes.NodeGroup, 'p1', 'ng'))?.metadata.name, 'ng');
    assert.equal(store.gets, 1);
  });
});

test('cached reads: the engine\u2019s reconcilers, and the manager\u2019s read of their object, go through the cache', async () => {
  await withReads(async (store) => {
    const engine = createEngine({
      store,
      cloud: () => {
        throw new Error('no cloud in this test');
      },
      pki: {} as ControllerDeps['pki'],
      workload: {} as ControllerDeps['workload'],
      policy: defaultPolicy,
      clock: new ManualClock(),
      log: silentLogger,
      region: 'RegionOne',
    });
    const machines = engine.reconcilers.find((r) => r.type === CapiTypes.Machine)!;
    await store.create(machine('m1'));
    assert.equal((await machines.read!(store, { namespace: 'p1', name: 'm1' }))?.metadata.name, 'm1');
    assert.equal(await machines.read!(store, { namespace: 'p1', name: 'gone' }), undefined);
    assert.equal(store.gets, 0, 'the manager\u2019s reads of a cached kind did not reach the store');
    // a manager on another store reads that store
    await withReads(async (other) => {
      await other.create(machine('m2'));
      assert.equal((await machines.read!(other, { namespace: 'p1', name: 'm2' }))?.metadata.name, 'm2');
      assert.equal(other.gets, 1);
    });
  });
});

test('object cache: the by-cluster and by-owner indexes follow updates, moves between clusters and owners, and deletes', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const cache = new ObjectCache(store, [CapiTypes.Machine]);
    const owner = (uid: string) => [
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineSet', name: uid, uid },
    ];
    const made = await store.create({
      ...machine('m1'),
      metadata: { ...machine('m1').metadata, ownerReferences: owner('set-a') },
    });
    const names = async (cluster: string) =>
      (await cache.listByCluster<ApiObject>(CapiTypes.Machine, 'p1', cluster)).map((m) => m.metadata.name);
    const owned = async (uid: string) =>
      (await cache.listByOwner<ApiObject>(CapiTypes.Machine, uid)).map((m) => m.metadata.resourceVersion);
    assert.deepEqual(await names('c1'), ['m1']);

    // an update in place: one entry, the new version, under each index
    const grown = await store.update({ ...made, spec: { ...made.spec, replicas: 2 } });
    assert.deepEqual(await owned('set-a'), [grown.metadata.resourceVersion]);
    const [inCluster] = await cache.listByCluster<typeof grown>(CapiTypes.Machine, 'p1', 'c1');
    assert.equal(inCluster?.spec.replicas, 2);

    // moved to another cluster and owner: gone from the old keys, found under the new ones
    const moved = await store.update({
      ...grown,
      metadata: {
        ...grown.metadata,
        labels: { 'cluster.x-k8s.io/cluster-name': 'c2' },
        ownerReferences: owner('set-b'),
      },
    });
    assert.deepEqual([await names('c1'), await names('c2')], [[], ['m1']]);
    assert.deepEqual([await owned('set-a'), await owned('set-b')], [[], [moved.metadata.resourceVersion]]);

    await store.delete(CapiTypes.Machine, 'p1', 'm1');
    assert.deepEqual([await names('c2'), await owned('set-b')], [[], []]);
  } finally {
    await store.close();
  }
});
