import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, parseLabelSelector, type ApiObject } from '../../src/domain/index.ts';
import { sqliteMigrations } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { storeSuite } from './store-suite.ts';

const type = 'Widget.test.magnetar.io';

/** A small object of a test kind in project p1. */
function widget(name: string, size = 1) {
  return {
    apiVersion: 'test.magnetar.io/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'p1' },
    spec: { size },
  };
}

storeSuite('sqlite :memory:', async () => new SqliteStore({ path: ':memory:' }));

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'magnetar-store-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
storeSuite('sqlite file (WAL)', async () => new SqliteStore({ path: join(dir, 'sub', 'store.sqlite') }), {
  persistent: true,
});

test('sqlite: writes issued together commit together, each with its own outcome; a failed write leaves no trace and the others stand', async () => {
  const store = new SqliteStore({ path: join(dir, 'group', 'store.sqlite') });
  try {
    await store.create(widget('taken'));
    const head = await store.currentRevision();
    const outcomes = await Promise.allSettled([
      store.create(widget('a')),
      store.create(widget('taken')),
      store.commit([
        { op: 'create', object: widget('b') },
        { op: 'create', object: widget('taken') },
      ]),
      store.create(widget('c')),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    const rejected = outcomes[1] as PromiseRejectedResult;
    assert.ok(rejected.reason instanceof ConflictError);
    // the failed multi-object commit wrote nothing (b is absent) and used no revision
    assert.equal(await store.get(type, 'p1', 'b'), undefined);
    const events = await store.changes(head);
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name, e.revision]),
      [
        ['ADDED', 'a', head + 1],
        ['ADDED', 'c', head + 2],
      ],
    );
    const a = (outcomes[0] as PromiseFulfilledResult<ApiObject>).value;
    assert.equal(a.metadata.resourceVersion, String(head + 1));
  } finally {
    await store.close();
  }
  // what was reported written is on disk
  const again = new SqliteStore({ path: join(dir, 'group', 'store.sqlite') });
  try {
    assert.ok(await again.get(type, 'p1', 'c'));
  } finally {
    await again.close();
  }
});

test('sqlite: a read sees every write asked for before it, committed or waiting for the end of the turn', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const first = store.create(widget('a'));
    // not awaited: the read runs in the turn's open transaction
    assert.equal((await store.get(type, 'p1', 'a'))?.metadata.name, 'a');
    const a = await first;
    const grown = store.update({ ...a, spec: { size: 2 } });
    const made = store.create(widget('b'));
    assert.equal(await store.count(type, 'p1'), 2);
    assert.deepEqual(
      (await store.list(type, { namespace: 'p1' })).items.map((o) => [o.metadata.name, o.spec]),
      [
        ['a', { size: 2 }],
        ['b', { size: 1 }],
      ],
    );
    await Promise.all([grown, made]);
    // a read-then-write on the version just read does not conflict with a write asked for before it
    const gone = store.delete(type, 'p1', 'b');
    assert.equal(await store.get(type, 'p1', 'b'), undefined);
    await gone;
    const current = (await store.get(type, 'p1', 'a'))!;
    const pending = store.update({ ...current, spec: { size: 3 } });
    const fresh = (await store.getByUid(type, current.metadata.uid))!;
    assert.deepEqual(fresh.spec, { size: 3 });
    await pending;
    assert.deepEqual((await store.update({ ...fresh, spec: { size: 4 } })).spec, { size: 4 });
  } finally {
    await store.close();
  }
});

test('sqlite: the turn’s writes commit at its end, not when this connection reads them; another connection sees them then', async () => {
  const path = join(dir, 'turn', 'store.sqlite');
  const mine = new SqliteStore({ path });
  const other = new SqliteStore({ path });
  try {
    const made = mine.create(widget('a'));
    assert.equal((await mine.get(type, 'p1', 'a'))?.metadata.name, 'a');
    assert.equal(await mine.count(type, 'p1'), 1);
    // the reads above committed nothing: another process does not see the write yet
    assert.equal(await other.get(type, 'p1', 'a'), undefined);
    const a = await made;
    assert.equal((await other.get(type, 'p1', 'a'))?.metadata.resourceVersion, a.metadata.resourceVersion);
  } finally {
    await mine.close();
    await other.close();
  }
});

test('sqlite: when the database fails a turn’s transaction, every write of the turn fails, its revisions are never reused and a feed reader that saw them lists again', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    const head = await store.currentRevision();
    const first = store.create(widget('a'));
    // this connection's feed shows the write before its commit
    assert.deepEqual(
      (await store.changes(head)).map((e) => [e.object.metadata.name, e.revision]),
      [['a', head + 1]],
    );
    // a write the database cannot store (not a refusal: no MagnetarError) fails the transaction
    const broken = store.create({ ...widget('b'), spec: { size: 10n } });
    const outcomes = await Promise.allSettled([first, broken]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    assert.equal(await store.get(type, 'p1', 'a'), undefined);
    await assert.rejects(
      store.changes(head + 1),
      (e: unknown) => e instanceof ConflictError && e.code === 'Expired',
    );
    const again = await store.create(widget('a'));
    assert.ok(Number(again.metadata.resourceVersion) > head + 1, 'a lost revision is not handed out again');
    assert.deepEqual(
      (await store.changes(head)).map((e) => [e.object.metadata.name, e.revision]),
      [['a', Number(again.metadata.resourceVersion)]],
    );
  } finally {
    await store.close();
  }
});

test('sqlite: a write that fails in a batch leaves the object as it was for the next read', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  try {
    await store.create(widget('taken'));
    const a = await store.create(widget('a'));
    const outcomes = await Promise.allSettled([
      store.create(widget('c')),
      // updates a, then fails on the duplicate: the update is rolled back with it
      store.commit([
        { op: 'update', object: { ...a, spec: { size: 5 } } },
        { op: 'create', object: widget('taken') },
      ]),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected'],
    );
    const now = (await store.get(type, 'p1', 'a'))!;
    assert.deepEqual(now.spec, { size: 1 });
    assert.equal(now.metadata.resourceVersion, a.metadata.resourceVersion);
    assert.deepEqual((await store.update({ ...now, spec: { size: 6 } })).spec, { size: 6 });
  } finally {
    await store.close();
  }
});

test('sqlite: a store written before the label index moved out of triggers keeps answering label selectors after the upgrade', async () => {
  const path = join(dir, 'upgrade', 'store.sqlite');
  mkdirSync(join(dir, 'upgrade'));
  // a database as the first two schema versions left it, with an object indexed by their triggers
  const old = new Database(path);
  old.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  for (const m of sqliteMigrations.filter((x) => x.version <= 2)) {
    old.exec(m.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 'then');
  }
  const w = {
    apiVersion: 'test.magnetar.io/v1',
    kind: 'Widget',
    metadata: { name: 'old', namespace: 'p1', uid: 'u-old', labels: { tier: 'web' } },
    spec: {},
  };
  old.prepare('INSERT INTO objects VALUES (?, ?, ?, ?, 1, 1, ?)').run(
    type,
    'p1',
    'old',
    'u-old',
    JSON.stringify({
      ...w,
      metadata: {
        ...w.metadata,
        resourceVersion: '1',
        generation: 1,
        creationTimestamp: '2026-01-01T00:00:00.000Z',
        annotations: {},
        ownerReferences: [],
        finalizers: [],
      },
    }),
  );
  old.prepare(`UPDATE meta SET value = 1 WHERE key = 'revision'`).run();
  old.close();

  const store = new SqliteStore({ path });
  const names = async (text: string) =>
    (await store.list(type, { labelSelector: parseLabelSelector(text) })).items.map((o) => o.metadata.name);
  try {
    assert.deepEqual(await names('tier=web'), ['old']);
    const added = await store.create({
      ...w,
      metadata: { name: 'new', namespace: 'p1', labels: { tier: 'web' } },
    });
    assert.deepEqual(await names('tier=web'), ['old', 'new']);
    const old1 = (await store.get(type, 'p1', 'old'))!;
    await store.update({ ...old1, metadata: { ...old1.metadata, labels: { tier: 'db' } } });
    // a write that leaves the labels alone leaves the index alone
    await store.updateStatus({ ...added, status: { phase: 'Ready' } });
    assert.deepEqual(await names('tier=web'), ['new']);
    assert.deepEqual(await names('tier=db'), ['old']);
    assert.deepEqual(Object.fromEntries(await store.countByLabel(type, 'p1', 'tier')), { web: 1, db: 1 });
    await store.delete(type, 'p1', 'new');
    assert.deepEqual(await names('tier=web'), []);
    assert.equal(await store.currentRevision(), 5);
  } finally {
    await store.close();
  }
});

test('sqlite: the committed head includes at once what this connection wrote or read from the feed, and another connection’s commits by the next turn', async () => {
  const path = join(dir, 'head', 'store.sqlite');
  const mine = new SqliteStore({ path });
  const other = new SqliteStore({ path });
  const nextTurn = () => new Promise((r) => setImmediate(r));
  try {
    const start = await mine.currentRevision();
    await mine.create(widget('a'));
    assert.equal(await mine.currentRevision(), start + 1, 'its own commit');
    await nextTurn();
    await mine.currentRevision();
    await other.create(widget('b'));
    // read in the same turn as the other's commit: at most one turn late …
    const sameTurn = await mine.currentRevision();
    assert.ok(sameTurn === start + 1 || sameTurn === start + 2);
    // … and never behind what it has read from the feed
    const events = await mine.changes(start + 1);
    assert.deepEqual(
      events.map((e) => e.object.metadata.name),
      ['b'],
    );
    assert.equal(await mine.currentRevision(), start + 2, 'a revision read from the feed');
    await other.create(widget('c'));
    await nextTurn();
    assert.equal(await mine.currentRevision(), start + 3, 'the next turn reads the counter again');
    assert.equal((await mine.list(type)).items.length, 3);
  } finally {
    await mine.close();
    await other.close();
  }
});

test('sqlite: a file store’s WAL is copied into the database file by a thread of its own, not by a commit, and is gone after close', async () => {
  const big = (name: string) => ({ ...widget(name), spec: { size: 1, blob: 'x'.repeat(3000) } });
  const sizes = async (backgroundCheckpoints: boolean) => {
    const path = join(dir, `ckpt-${backgroundCheckpoints}`, 'store.sqlite');
    const store = new SqliteStore({ path, backgroundCheckpoints });
    const before = statSync(path).size;
    // about 1.5 MB of objects and feed entries: under SQLite's own checkpoint threshold (4 MB)
    for (let i = 0; i < 200; i += 20)
      await Promise.all(Array.from({ length: 20 }, (_, j) => store.create(big(`w${i + j}`))));
    await new Promise((r) => setTimeout(r, 600));
    const after = statSync(path).size;
    await store.close();
    return { before, after, walLeft: existsSync(`${path}-wal`) };
  };
  const background = await sizes(true);
  assert.ok(
    background.after > background.before + 1_000_000,
    `the database file grew ${background.after - background.before} bytes`,
  );
  assert.equal(background.walLeft, false);
  // without the thread, nothing has checkpointed yet: the writes are still only in the WAL
  const inline = await sizes(false);
  assert.equal(inline.after, inline.before);
  assert.equal(inline.walLeft, false);
});

test('sqlite: a database from before the object counts is counted when it opens, and the counts follow every write after', async () => {
  const path = join(dir, 'counts', 'store.sqlite');
  const first = new SqliteStore({ path });
  await Promise.all(['a', 'b', 'c'].map((n) => first.create(widget(n))));
  await first.create({ ...widget('x'), metadata: { name: 'x', namespace: 'p2' } });
  await first.close();
  // as a release before the counts left it
  const raw = new Database(path);
  raw.exec(`DROP TRIGGER objects_count_insert; DROP TRIGGER objects_count_delete; DROP TABLE object_counts;
            DELETE FROM schema_migrations WHERE version = 4`);
  raw.close();
  const again = new SqliteStore({ path });
  try {
    assert.equal(await again.count(type, 'p1'), 3);
    assert.equal(await again.count(type, 'p2'), 1);
    assert.equal(await again.count(type), 4);
    await again.delete(type, 'p1', 'a');
    await again.create(widget('d'));
    await again.create(widget('e'));
    // a batch refused as a whole counts nothing
    await assert.rejects(
      again.commit([
        { op: 'create', object: widget('f') },
        { op: 'create', object: widget('d') },
      ]),
    );
    assert.equal(await again.count(type, 'p1'), 4);
    assert.equal(await again.count(type), 5);
    assert.equal(await again.count(type, 'p3'), 0);
  } finally {
    await again.close();
  }
});

test('sqlite: a label key counted once is counted without reading its objects, kept by every connection’s writes and after a reopen', async () => {
  const path = join(dir, 'label-counts', 'store.sqlite');
  const sized = (name: string, size: string, namespace = 'p1') => ({
    ...widget(name),
    metadata: { name, namespace, labels: { size, name } },
  });
  const a = new SqliteStore({ path });
  const b = new SqliteStore({ path });
  try {
    await Promise.all([a.create(sized('s1', '2:4096')), a.create(sized('s2', '4:8192'))]);
    const counts = async (store: SqliteStore, ns = 'p1') =>
      Object.fromEntries(await store.countByLabel(type, ns, 'size'));
    assert.deepEqual(await counts(a), { '2:4096': 1, '4:8192': 1 });
    // the other connection writes after the key was registered, and reads the same counts
    await b.create(sized('s3', '2:4096'));
    await b.create(sized('s4', '2:4096', 'p2'));
    await b.delete(type, 'p1', 's2');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(await counts(a), { '2:4096': 2 });
    assert.deepEqual(await counts(b), { '2:4096': 2 });
    assert.deepEqual(await counts(b, 'p2'), { '2:4096': 1 });
  } finally {
    await a.close();
    await b.close();
  }
  const raw = new Database(path, { readonly: true });
  try {
    // only the counted key has count rows: a name label on every object writes none
    const keys = raw.prepare(`SELECT DISTINCT key FROM label_counts`).all() as { key: string }[];
    assert.deepEqual(
      keys.map((r) => r.key),
      ['size'],
    );
  } finally {
    raw.close();
  }
  const again = new SqliteStore({ path });
  try {
    await again.create(sized('s5', '8:16384'));
    assert.deepEqual(Object.fromEntries(await again.countByLabel(type, 'p1', 'size')), {
      '2:4096': 2,
      '8:16384': 1,
    });
  } finally {
    await again.close();
  }
});

test('sqlite: a label key registered in a turn whose commit fails is not counted; its next first count counts what is there', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  const sized = (name: string) => ({
    ...widget(name),
    metadata: { name, namespace: 'p1', labels: { size: '2:4096' } },
  });
  try {
    const counting = store.countByLabel(type, 'p1', 'size');
    // a write the database cannot store fails the whole turn, the registration with it
    const broken = store.create({ ...widget('b'), spec: { size: 10n } });
    const outcomes = await Promise.allSettled([counting, broken]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    await store.create(sized('a'));
    await store.create(sized('c'));
    assert.deepEqual(Object.fromEntries(await store.countByLabel(type, 'p1', 'size')), { '2:4096': 2 });
    await store.create(sized('d'));
    await store.delete(type, 'p1', 'a');
    assert.deepEqual(Object.fromEntries(await store.countByLabel(type, 'p1', 'size')), { '2:4096': 2 });
  } finally {
    await store.close();
  }
});

/** Two connections to one new SQLite file, closed afterwards. */
async function withTwoConnections(
  name: string,
  fn: (a: SqliteStore, b: SqliteStore) => Promise<void>,
): Promise<void> {
  const path = join(dir, name, 'store.sqlite');
  const a = new SqliteStore({ path });
  const b = new SqliteStore({ path });
  try {
    await fn(a, b);
  } finally {
    await a.close();
    await b.close();
  }
}

test('sqlite: a write builds on the stored version even when this connection updated the object before and another connection since', async () => {
  await withTwoConnections('updated-elsewhere', async (a, b) => {
    const made = await a.create(widget('a'));
    await a.update({ ...made, spec: { size: 2 } });
    const theirs = await b.update({ ...(await b.get(type, 'p1', 'a'))!, spec: { size: 3 } });
    await new Promise((r) => setImmediate(r));
    const read = (await a.get(type, 'p1', 'a'))!;
    assert.equal(read.metadata.resourceVersion, theirs.metadata.resourceVersion);
    const done = await a.updateStatus({ ...read, status: { phase: 'Ready' } });
    assert.deepEqual(done.spec, { size: 3 }, 'the other connection’s spec stays');
    assert.deepEqual((await b.get(type, 'p1', 'a'))!.status, { phase: 'Ready' });
  });
});

test('sqlite: feed readers share one frozen copy of each entry, and a write builds on it without changing it', async () => {
  const store = new SqliteStore({ path: join(dir, 'shared-feed', 'store.sqlite') });
  try {
    const made = await store.create(widget('a'));
    assert.ok(Object.isFrozen(made) && Object.isFrozen(made.spec), 'what a write returns is frozen too');
    const [one] = await store.changes(0);
    const [two] = await store.changes(0, { types: [type] });
    assert.equal(one!.object, two!.object, 'one decoded copy for both readers');
    assert.throws(() => {
      (one!.object.spec as { size: number }).size = 9;
    }, TypeError);
    const grown = await store.update({ ...one!.object, spec: { size: 2 } });
    assert.deepEqual(grown.spec, { size: 2 });
    assert.deepEqual(one!.object.spec, { size: 1 }, 'the version read is left as it was');
    const events = await store.changes(0);
    assert.deepEqual(
      events.map((e) => [e.type, (e.object.spec as { size: number }).size]),
      [
        ['ADDED', 1],
        ['MODIFIED', 2],
      ],
    );
  } finally {
    await store.close();
  }
});

test('sqlite: entries another connection wrote are read from the file, and a refused batch leaves no entry behind', async () => {
  await withTwoConnections('two-writers', async (a, b) => {
    await a.create(widget('from-a', 3));
    const seen = await b.changes(0);
    assert.deepEqual(
      seen.map((e) => [e.object.metadata.name, e.object.spec]),
      [['from-a', { size: 3 }]],
    );
    // the batch's first create takes a revision and is rolled back with the second
    await assert.rejects(
      b.commit([
        { op: 'create', object: widget('gone', 4) },
        { op: 'create', object: widget('from-a') },
      ]),
    );
    const next = await b.create(widget('from-b', 5));
    const all = await b.changes(0);
    assert.deepEqual(
      all.map((e) => [e.revision, e.object.metadata.name, e.object.spec]),
      [
        [1, 'from-a', { size: 3 }],
        [Number(next.metadata.resourceVersion), 'from-b', { size: 5 }],
      ],
    );
    assert.deepEqual(
      (await a.changes(0)).map((e) => e.object.metadata.name),
      ['from-a', 'from-b'],
    );
  });
});

test('sqlite: a feed read over a connection’s own writes and another’s in between lists every entry once, in order', async () => {
  await withTwoConnections('interleaved', async (a, b) => {
    const a1 = await a.create(widget('a1', 1));
    const b1 = await b.create(widget('b1', 2));
    const a2 = await a.create(widget('a2', 3));
    const a3 = await a.update({ ...a2, spec: { size: 4 } });
    const rv = (o: { metadata: { resourceVersion: string } }) => Number(o.metadata.resourceVersion);
    const names = (events: { revision: number; type: string; object: { metadata: { name: string } } }[]) =>
      events.map((e) => `${e.revision} ${e.type} ${e.object.metadata.name}`);
    const all = [`${rv(a1)} ADDED a1`, `${rv(b1)} ADDED b1`, `${rv(a2)} ADDED a2`, `${rv(a3)} MODIFIED a2`];
    assert.deepEqual(names(await a.changes(0)), all, 'the other connection’s entry in between');
    assert.deepEqual(names(await b.changes(0)), all);
    assert.deepEqual(names(await a.changes(rv(b1))), all.slice(2), 'only its own writes after that');
    assert.deepEqual(names(await a.changes(rv(b1), { limit: 1 })), all.slice(2, 3));
    assert.deepEqual(names(await a.changes(rv(a3))), [], 'nothing after the head');
    assert.deepEqual(names(await a.changes(rv(b1), { types: ['Other.test.magnetar.io'] })), []);
    // the other connection writes again: a read from a's last write finds it
    const b2 = await b.create(widget('b2', 5));
    assert.deepEqual(names(await a.changes(rv(a3))), [`${rv(b2)} ADDED b2`]);
    const a4 = await a.create(widget('a4', 6));
    assert.deepEqual(names(await a.changes(rv(a3))), [`${rv(b2)} ADDED b2`, `${rv(a4)} ADDED a4`]);
  });
});

test('sqlite: a revision a refused batch gave back and another connection then wrote is read as that connection wrote it', async () => {
  await withTwoConnections('given-back', async (a, b) => {
    await b.create(widget('first', 1));
    await assert.rejects(
      b.commit([
        { op: 'create', object: widget('rolled-back', 2) },
        { op: 'create', object: widget('first') },
      ]),
    );
    const other = await a.create(widget('from-a', 3));
    const seen = (await b.changes(0)).find((e) => e.revision === Number(other.metadata.resourceVersion));
    assert.equal(seen?.object.metadata.name, 'from-a');
    assert.deepEqual(seen?.object.spec, { size: 3 });
  });
});

test('sqlite: after a refused batch updated an object, the next write of that object builds on the version stored, not on the one rolled back', async () => {
  const store = new SqliteStore({ path: join(dir, 'refused-update', 'store.sqlite') });
  try {
    const a = await store.create<ApiObject & { spec: { size: number } }>(widget('a', 1));
    await assert.rejects(
      store.commit([
        { op: 'update', object: { ...a, spec: { size: 7 } } },
        { op: 'create', object: widget('a') },
      ]),
      (e: unknown) => e instanceof ConflictError && e.code === 'AlreadyExists',
    );
    // the revision the rolled-back update took is handed out again, to another object
    const b = await store.create(widget('b', 2));
    assert.equal(Number(b.metadata.resourceVersion), Number(a.metadata.resourceVersion) + 1);
    const grown = await store.update({ ...a, spec: { size: 3 } });
    assert.equal(grown.metadata.name, 'a');
    assert.deepEqual(grown.spec, { size: 3 });
    assert.equal(grown.metadata.uid, a.metadata.uid);
    assert.deepEqual((await store.get(type, 'p1', 'b'))?.spec, { size: 2 }, 'the other object is untouched');
    // a stale version is still refused
    await assert.rejects(
      store.update({ ...a, spec: { size: 4 } }),
      (e: unknown) => e instanceof ConflictError,
    );
  } finally {
    await store.close();
  }
});

test('sqlite: a store kept without a revision feed stores, updates and deletes records, writes no feed entry and refuses to be watched', async () => {
  const path = join(dir, 'no-feed.sqlite');
  const s = new SqliteStore({ path, feed: false, backgroundCheckpoints: false });
  try {
    const a = await s.create<ApiObject>(widget('a'));
    const b = await s.create<ApiObject>(widget('b'));
    await s.update({ ...a, spec: { size: 2 } });
    await s.delete(type, 'p1', b.metadata.name);
    assert.deepEqual((await s.get<ApiObject & { spec: { size: number } }>(type, 'p1', 'a'))?.spec, {
      size: 2,
    });
    assert.equal(await s.get(type, 'p1', 'b'), undefined);
    assert.equal(await s.count(type), 1);
    assert.ok((await s.currentRevision()) >= 4, 'revisions still count every write');
    await assert.rejects(s.changes(0), /keeps no revision feed/);
  } finally {
    await s.close();
  }
  const db = new Database(path, { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM feed').get(), { n: 0 });
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM objects').get(), { n: 1 });
  } finally {
    db.close();
  }
});
