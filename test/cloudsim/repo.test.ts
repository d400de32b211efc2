import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { SqliteStore } from '../../src/store/index.ts';
import { Repo } from '../../src/cloudsim/core/repo.ts';
import { labelValue } from '../../src/cloudsim/core/labels.ts';
import { CLOUD_API_VERSION, cloudType } from '../../src/cloudsim/core/kinds.ts';

const Rec = z.object({ name: z.string(), size: z.number().default(1) });

test('embedded cloud rows: a version read again is the same record; defaults are filled on every read; a damaged row fails every read', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const repo = new Repo(store, 'Network', Rec);
    const made = await repo.create('p1', 'n1', { name: 'net', size: 3 });
    const first = (await repo.get('p1', 'n1'))!;
    const again = (await repo.get('p1', 'n1'))!;
    assert.deepEqual(first.rec, { name: 'net', size: 3 });
    assert.deepEqual(again.rec, first.rec);
    assert.equal(made.rec.size, 3);

    // a row written before `size` existed: the default is filled in, on each read
    await store.create({
      apiVersion: CLOUD_API_VERSION,
      kind: 'Network',
      metadata: { name: 'old', namespace: 'p1', uid: 'old' },
      spec: { name: 'legacy' },
    });
    assert.deepEqual((await repo.get('p1', 'old'))!.rec, { name: 'legacy', size: 1 });
    assert.deepEqual((await repo.get('p1', 'old'))!.rec, { name: 'legacy', size: 1 });

    // a later version that does not match the schema is refused, although an earlier one passed
    const stored = (await store.get(cloudType('Network'), 'p1', 'n1'))!;
    await store.update({ ...stored, spec: { name: 42 } });
    await assert.rejects(repo.get('p1', 'n1'), /stored Network n1 is invalid/);
    await assert.rejects(repo.get('p1', 'n1'), /stored Network n1 is invalid/);
    await assert.rejects(repo.list({ project: 'p1' }), /invalid/);
  } finally {
    await store.close();
  }
});

test('embedded cloud rows: index labels follow the record on create and update, and rows stored without them are relabelled', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const Member = z.object({ name: z.string(), groups: z.array(z.string()) });
    const index = (rec: z.infer<typeof Member>) => ({
      name: rec.name,
      ...Object.fromEntries(rec.groups.map((g) => [`sg.${g}`, 'true'])),
    });
    const repo = new Repo(store, 'Port', Member, index);
    const inGroup = async (g: string) =>
      (await repo.list({ labels: { [`sg.${g}`]: 'true' } })).map((r) => r.id).sort();

    const a = await repo.create('p1', 'a', { name: 'a', groups: ['g1', 'g2'] }, { labels: { owner: 'x' } });
    await repo.create('p1', 'b', { name: 'b', groups: ['g2'] });
    assert.deepEqual(await inGroup('g1'), ['a']);
    assert.deepEqual(await inGroup('g2'), ['a', 'b']);

    // leaving a group drops its key; labels the caller gave (owner) stay
    const moved = await repo.update(a, { name: 'a2', groups: ['g2'] });
    assert.deepEqual(moved.object.metadata.labels, { owner: 'x', name: 'a2', 'sg.g2': 'true' });
    assert.deepEqual(await inGroup('g1'), []);
    assert.deepEqual(
      (await repo.list({ labels: { name: 'a2' } })).map((r) => r.id),
      ['a'],
    );

    // a row an older version stored without the index labels
    await store.create({
      apiVersion: CLOUD_API_VERSION,
      kind: 'Port',
      metadata: { name: 'old', namespace: 'p1', uid: 'old', labels: { owner: 'y' } },
      spec: { name: 'old', groups: ['g1'] },
    });
    assert.deepEqual(await inGroup('g1'), []);
    assert.equal(await repo.reindex(), 1);
    assert.deepEqual(await inGroup('g1'), ['old']);
    assert.equal((await repo.get('p1', 'old'))!.object.metadata.labels?.owner, 'y');
    assert.equal(await repo.reindex(), 0);
  } finally {
    await store.close();
  }
});

test('embedded cloud rows: long names that share a prefix get index values of their own, and rows labelled by the old truncation are relabelled', async () => {
  const prefix = 'k8s-clusterapi-cluster-0123456789abcdef0123456789abcdef-'; // as Cluster API names things
  const a = `${prefix}bench-0001-network`;
  const b = `${prefix}bench-0002-network`;
  assert.ok(a.length > 63 && a.slice(0, 63) === b.slice(0, 63), 'the two names agree on 63 characters');
  assert.notEqual(labelValue(a), labelValue(b));
  for (const v of [labelValue(a), labelValue(b)]) assert.ok(v.length <= 63 && /^[A-Za-z0-9_.-]+$/.test(v), v);
  assert.equal(labelValue('short name'), 'short_name', 'short text keeps its readable form');

  const store = new SqliteStore({ path: ':memory:' });
  try {
    const Named = z.object({ name: z.string() });
    const repo = new Repo(store, 'Network', Named, (rec) => ({ name: labelValue(rec.name) }));
    // stored by a version that cut names at 63 characters
    for (const [id, name] of [
      ['n1', a],
      ['n2', b],
    ] as const)
      await store.create({
        apiVersion: CLOUD_API_VERSION,
        kind: 'Network',
        metadata: { name: id, namespace: 'p1', uid: id, labels: { name: name.slice(0, 63) } },
        spec: { name },
      });
    assert.equal(await repo.reindex(), 2);
    const found = await repo.list({ project: 'p1', labels: { name: labelValue(b) } });
    assert.deepEqual(
      found.map((r) => r.id),
      ['n2'],
      'the index narrows to the one row',
    );
  } finally {
    await store.close();
  }
});
