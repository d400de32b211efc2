import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { SqliteStore } from '../../src/store/index.ts';
import { Repo } from '../../src/cloudsim/core/repo.ts';
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
