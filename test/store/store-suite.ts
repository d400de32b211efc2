import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConflictError,
  InputError,
  ManualClock,
  silentLogger,
  NotFoundError,
  parseLabelSelector,
  selectorFromSpec,
  type ApiObject,
  type NewObject,
} from '../../src/domain/index.ts';
import { startFeedCompaction, type ObjectStore, type WatchEvent } from '../../src/store/index.ts';

/**
 * The documented semantics of `ObjectStore`, run against every engine. One store serves the
 * whole suite (opening one per test is slow on a server); each test works on its own kind (and
 * so its own type key and lease names), so tests do not see each other's objects, and feed tests
 * read from the revision current when they start.
 */
export interface StoreSuiteOptions {
  /** The engine keeps data across close/open (file, server). */
  persistent?: boolean;
}

let kinds = 0;
const RUN = Date.now().toString(36);

/** A fresh kind for one test. */
function freshKind() {
  const kind = `Widget${RUN}x${kinds++}`;
  const apiVersion = 'test.magnetar.io/v1';
  return { kind, apiVersion, type: `${kind}.test.magnetar.io` };
}

type Widget = ApiObject<{ size?: number; color?: string }, { phase?: string }>;

export function storeSuite(
  engine: string,
  open: () => Promise<ObjectStore>,
  options: StoreSuiteOptions = {},
): void {
  describe(`object store (${engine})`, () => {
    let store: ObjectStore;
    let k: ReturnType<typeof freshKind>;

    function widget(
      name: string,
      extra: Partial<NewObject['metadata']> = {},
      spec: Widget['spec'] = { size: 1 },
    ): NewObject {
      return { apiVersion: k.apiVersion, kind: k.kind, metadata: { name, namespace: 'p1', ...extra }, spec };
    }

    async function feedSince(rev: number, types = [k.type]): Promise<WatchEvent[]> {
      return store.changes(rev, { types });
    }

    before(async () => {
      store = await open();
    });
    after(async () => {
      await store.close();
    });
    beforeEach(() => {
      k = freshKind();
    });

    describe('create and read', () => {
      test('create fills uid, resourceVersion, generation 1, timestamps and empty metadata collections', async () => {
        const before = await store.currentRevision();
        const w = await store.create<Widget>(widget('a'));
        assert.equal(w.metadata.name, 'a');
        assert.equal(w.metadata.namespace, 'p1');
        assert.match(w.metadata.uid, /^[0-9a-f-]{36}$/);
        assert.equal(w.metadata.generation, 1);
        assert.equal(Number(w.metadata.resourceVersion), before + 1);
        assert.ok(!Number.isNaN(Date.parse(w.metadata.creationTimestamp)));
        assert.deepEqual(w.metadata.labels, {});
        assert.deepEqual(w.metadata.finalizers, []);
        assert.deepEqual(w.status, {});
        assert.equal(await store.currentRevision(), before + 1);
      });

      test('create of an existing name is AlreadyExists and writes nothing', async () => {
        await store.create(widget('a'));
        const rev = await store.currentRevision();
        await assert.rejects(
          store.create(widget('a')),
          (e: unknown) => e instanceof ConflictError && e.code === 'AlreadyExists',
        );
        assert.equal(await store.currentRevision(), rev);
        assert.equal(await store.count(k.type), 1);
      });

      test('the same name in another namespace is a different object', async () => {
        await store.create(widget('a'));
        await store.create(widget('a', { namespace: 'p2' }));
        assert.equal(await store.count(k.type), 2);
      });

      test('a caller-chosen uid is kept, and reusing it is AlreadyExists', async () => {
        const uid = '00000000-0000-4000-8000-' + String(kinds).padStart(12, '0');
        const w = await store.create(widget('a', { uid }));
        assert.equal(w.metadata.uid, uid);
        await assert.rejects(
          store.create(widget('b', { uid })),
          (e: unknown) => e instanceof ConflictError && e.code === 'AlreadyExists',
        );
        assert.equal(await store.get(k.type, 'p1', 'b'), undefined);
      });

      test('generateName appends five random characters to the prefix', async () => {
        const a = await store.create(widget('', { generateName: 'web-' }));
        const b = await store.create(widget('', { generateName: 'web-' }));
        assert.match(a.metadata.name, /^web-[a-z0-9]{5}$/);
        assert.notEqual(a.metadata.name, b.metadata.name);
        assert.deepEqual((await store.get(k.type, 'p1', a.metadata.name))?.metadata.uid, a.metadata.uid);
      });

      test('create without name or generateName is an InputError', async () => {
        await assert.rejects(store.create(widget('')), InputError);
      });

      test('get and getByUid return the stored object; unknown keys return undefined', async () => {
        const w = await store.create<Widget>(
          widget('a', { labels: { tier: 'web' } }, { size: 3, color: 'red' }),
        );
        assert.deepEqual(await store.get(k.type, 'p1', 'a'), w);
        assert.deepEqual(await store.getByUid(k.type, w.metadata.uid), w);
        assert.equal(await store.get(k.type, 'p1', 'nope'), undefined);
        assert.equal(await store.get(k.type, 'p2', 'a'), undefined);
        assert.equal(await store.getByUid(k.type, 'no-such-uid'), undefined);
        assert.equal(
          await store.getByUid(`Other${k.type}`, w.metadata.uid),
          undefined,
          'getByUid is scoped to the type',
        );
      });

      test('versionOf gives the resourceVersion get would, follows updates, and is undefined for a missing object', async () => {
        const w = await store.create<Widget>(widget('a', {}, { size: 3, color: 'red' }));
        assert.equal(await store.versionOf(k.type, 'p1', 'a'), w.metadata.resourceVersion);
        const u = await store.update<Widget>({ ...w, spec: { ...w.spec, size: 4 } });
        assert.notEqual(u.metadata.resourceVersion, w.metadata.resourceVersion);
        assert.equal(await store.versionOf(k.type, 'p1', 'a'), u.metadata.resourceVersion);
        assert.equal(
          await store.versionOf(k.type, 'p1', 'a'),
          (await store.get(k.type, 'p1', 'a'))?.metadata.resourceVersion,
        );
        assert.equal(await store.versionOf(k.type, 'p2', 'a'), undefined);
        await store.delete(k.type, 'p1', 'a');
        assert.equal(await store.versionOf(k.type, 'p1', 'a'), undefined);
      });

      test('spec with nested values and unicode survives the round trip', async () => {
        const spec = { size: 2, color: 'grün ☃', nested: { list: [1, 'two', { three: null }], empty: {} } };
        const w = await store.create(widget('a', {}, spec as Widget['spec']));
        assert.deepEqual((await store.get(k.type, 'p1', 'a'))?.spec, spec);
        assert.deepEqual(w.spec, spec);
      });

      if (options.persistent) {
        test('objects and revisions survive closing and reopening the store', async () => {
          const w = await store.create(widget('kept'));
          await store.close();
          store = await open();
          assert.deepEqual(await store.get(k.type, 'p1', 'kept'), w);
          assert.ok((await store.currentRevision()) >= Number(w.metadata.resourceVersion));
        });
      }
    });

    describe('list', () => {
      async function seed(n: number, ns = 'p1', labels: (i: number) => Record<string, string> = () => ({})) {
        const out: ApiObject[] = [];
        for (let i = 0; i < n; i++)
          out.push(
            await store.create(
              widget(`w${String(i).padStart(3, '0')}`, { namespace: ns, labels: labels(i) }),
            ),
          );
        return out;
      }
      const names = (items: ApiObject[]) => items.map((o) => o.metadata.name);

      test('lists in creation order, all namespaces or one, at the current revision', async () => {
        await store.create(widget('b'));
        await store.create(widget('a', { namespace: 'p2' }));
        await store.create(widget('c'));
        const all = await store.list(k.type);
        assert.deepEqual(names(all.items), ['b', 'a', 'c']);
        assert.equal(all.resourceVersion, String(await store.currentRevision()));
        assert.equal(all.continue, undefined);
        assert.deepEqual(names((await store.list(k.type, { namespace: 'p1' })).items), ['b', 'c']);
        assert.deepEqual(names((await store.list(k.type, { namespace: 'p3' })).items), []);
        assert.deepEqual(names((await store.list(`Other${k.type}`)).items), []);
      });

      test('label selectors filter by equality, inequality, set membership and existence', async () => {
        await store.create(widget('a', { labels: { tier: 'web', env: 'prod' } }));
        await store.create(widget('b', { labels: { tier: 'db', env: 'prod' } }));
        await store.create(widget('c', { labels: { tier: 'web' } }));
        await store.create(widget('d'));
        const sel = async (text: string) =>
          names((await store.list(k.type, { labelSelector: parseLabelSelector(text) })).items);
        assert.deepEqual(await sel('tier=web'), ['a', 'c']);
        assert.deepEqual(await sel('tier==web,env=prod'), ['a']);
        assert.deepEqual(await sel('tier!=web'), ['b', 'd']);
        assert.deepEqual(await sel('tier in (db, web)'), ['a', 'b', 'c']);
        assert.deepEqual(await sel('tier notin (web)'), ['b', 'd']);
        assert.deepEqual(await sel('env'), ['a', 'b']);
        assert.deepEqual(await sel('!env'), ['c', 'd']);
        assert.deepEqual(await sel(''), ['a', 'b', 'c', 'd']);
        const structured = selectorFromSpec({
          matchLabels: { tier: 'web' },
          matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }],
        });
        assert.deepEqual(names((await store.list(k.type, { labelSelector: structured })).items), ['c']);
      });

      test('limit and continue page through every object exactly once', async () => {
        await seed(7);
        const seen: string[] = [];
        let cont: string | undefined;
        let pages = 0;
        do {
          const page = await store.list(k.type, { limit: 3, ...(cont ? { continue: cont } : {}) });
          assert.ok(page.items.length <= 3);
          seen.push(...names(page.items));
          cont = page.continue;
          pages++;
        } while (cont);
        assert.equal(pages, 3);
        assert.deepEqual(seen, ['w000', 'w001', 'w002', 'w003', 'w004', 'w005', 'w006']);
      });

      test('a page that ends exactly at the last object has no continue', async () => {
        await seed(4);
        const first = await store.list(k.type, { limit: 2 });
        assert.ok(first.continue);
        const second = await store.list(k.type, { limit: 2, continue: first.continue });
        assert.deepEqual(names(second.items), ['w002', 'w003']);
        assert.equal(second.continue, undefined);
      });

      test('limit 0 means no limit', async () => {
        await seed(3);
        const page = await store.list(k.type, { limit: 0 });
        assert.equal(page.items.length, 3);
        assert.equal(page.continue, undefined);
      });

      test('an equality selector follows label changes, commits and deletes', async () => {
        const sel = async (text: string) =>
          names((await store.list(k.type, { labelSelector: parseLabelSelector(text) })).items);
        const a = await store.create(widget('a', { labels: { tier: 'web' } }));
        await store.create(widget('b', { labels: { tier: 'web' } }));
        await store.update({ ...a, metadata: { ...a.metadata, labels: { tier: 'db' } } });
        assert.deepEqual(await sel('tier=web'), ['b']);
        assert.deepEqual(await sel('tier=db'), ['a']);
        await store.commit([{ op: 'create', object: widget('c', { labels: { tier: 'db', zone: 'az1' } }) }]);
        assert.deepEqual(await sel('tier=db'), ['a', 'c']);
        assert.deepEqual(await sel('tier=db,zone=az1'), ['c']);
        await store.delete(k.type, 'p1', 'a');
        assert.deepEqual(await sel('tier=db'), ['c']);
        assert.deepEqual(await sel('tier=web'), ['b']);
        // some labels changed, one dropped, one added, one left alone
        const c = (await store.get(k.type, 'p1', 'c'))!;
        await store.update({
          ...c,
          metadata: { ...c.metadata, labels: { tier: 'db', zone: 'az2', disk: 'ssd' } },
        });
        assert.deepEqual(await sel('tier=db'), ['c']);
        assert.deepEqual(await sel('zone=az1'), []);
        assert.deepEqual(await sel('zone=az2,disk=ssd,tier=db'), ['c']);
        const c2 = (await store.get(k.type, 'p1', 'c'))!;
        await store.update({ ...c2, metadata: { ...c2.metadata, labels: { disk: 'ssd' } } });
        assert.deepEqual(await sel('tier=db'), []);
        assert.deepEqual(await sel('zone=az2'), []);
        assert.deepEqual(await sel('disk=ssd'), ['c']);
      });

      test('pages with a label selector are filled with matching objects only', async () => {
        await seed(10, 'p1', (i) => ({ parity: i % 2 === 0 ? 'even' : 'odd' }));
        const labelSelector = parseLabelSelector('parity=odd');
        const first = await store.list(k.type, { labelSelector, limit: 2 });
        assert.deepEqual(names(first.items), ['w001', 'w003']);
        const rest = await store.list(k.type, { labelSelector, limit: 10, continue: first.continue! });
        assert.deepEqual(names(rest.items), ['w005', 'w007', 'w009']);
      });

      test('afterUid starts after the marker object, as Magnum markers do', async () => {
        const items = await seed(5);
        const page = await store.list(k.type, { afterUid: items[1]!.metadata.uid, limit: 2 });
        assert.deepEqual(names(page.items), ['w002', 'w003']);
        const desc = await store.list(k.type, { afterUid: items[3]!.metadata.uid, descending: true });
        assert.deepEqual(names(desc.items), ['w002', 'w001', 'w000']);
      });

      test('an unknown marker is NotFound', async () => {
        await seed(1);
        await assert.rejects(
          store.list(k.type, { afterUid: 'ffffffff-0000-4000-8000-000000000000' }),
          (e: unknown) => e instanceof NotFoundError && e.code === 'MarkerNotFound',
        );
      });

      test('descending lists newest first and pages backwards', async () => {
        await seed(5);
        const first = await store.list(k.type, { descending: true, limit: 2 });
        assert.deepEqual(names(first.items), ['w004', 'w003']);
        const second = await store.list(k.type, { descending: true, limit: 2, continue: first.continue! });
        assert.deepEqual(names(second.items), ['w002', 'w001']);
        const third = await store.list(k.type, { descending: true, limit: 2, continue: second.continue! });
        assert.deepEqual(names(third.items), ['w000']);
        assert.equal(third.continue, undefined);
      });

      test('a malformed continue token is an InputError', async () => {
        await assert.rejects(store.list(k.type, { continue: 'not-a-token' }), InputError);
      });

      test('count counts a type, optionally in one namespace', async () => {
        await seed(3, 'p1');
        await seed(2, 'p2');
        assert.equal(await store.count(k.type), 5);
        assert.equal(await store.count(k.type, 'p2'), 2);
        assert.equal(await store.count(k.type, 'p9'), 0);
        await store.delete(k.type, 'p2', 'w000');
        assert.equal(await store.count(k.type, 'p2'), 1);
      });

      test('countByLabel counts a namespace by label value and follows label changes and deletes', async () => {
        const a = await store.create(widget('a', { labels: { size: '2:4096' } }));
        await store.create(widget('b', { labels: { size: '2:4096' } }));
        await store.create(widget('c', { labels: { size: '4:8192' } }));
        await store.create(widget('d'));
        await store.create(widget('e', { namespace: 'p2', labels: { size: '2:4096' } }));
        const counts = async (ns = 'p1') => Object.fromEntries(await store.countByLabel(k.type, ns, 'size'));
        assert.deepEqual(await counts(), { '2:4096': 2, '4:8192': 1 });
        assert.deepEqual(await counts('p2'), { '2:4096': 1 });
        await store.update({ ...a, metadata: { ...a.metadata, labels: { size: '4:8192' } } });
        await store.delete(k.type, 'p1', 'b');
        assert.deepEqual(await counts(), { '4:8192': 2 });
        assert.deepEqual(await counts('p9'), {});
        // writes after the first count are counted as well: creates, a label dropped, a delete
        // held by a finalizer (still there, still counted) and its removal
        const f = await store.create(widget('f', { labels: { size: '2:4096' }, finalizers: ['x.io/f'] }));
        await store.create(widget('g', { labels: { size: '2:4096', other: 'x' } }));
        const c = (await store.get(k.type, 'p1', 'c'))!;
        await store.update({ ...c, metadata: { ...c.metadata, labels: { other: 'y' } } });
        assert.deepEqual(await counts(), { '2:4096': 2, '4:8192': 1 });
        const marked = (await store.delete(k.type, 'p1', 'f'))!;
        assert.deepEqual(await counts(), { '2:4096': 2, '4:8192': 1 });
        await store.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
        assert.equal(await store.get(k.type, 'p1', f.metadata.name), undefined);
        assert.deepEqual(await counts(), { '2:4096': 1, '4:8192': 1 });
        assert.deepEqual(await counts('p2'), { '2:4096': 1 });
        assert.deepEqual(Object.fromEntries(await store.countByLabel(k.type, 'p1', 'other')), { x: 1, y: 1 });
      });
    });

    describe('update and updateStatus', () => {
      test('a spec change bumps generation; a metadata-only change does not', async () => {
        const w = await store.create<Widget>(widget('a'));
        const labelled = await store.update<Widget>({
          ...w,
          metadata: { ...w.metadata, labels: { x: 'y' } },
        });
        assert.equal(labelled.metadata.generation, 1);
        assert.deepEqual(labelled.metadata.labels, { x: 'y' });
        assert.ok(Number(labelled.metadata.resourceVersion) > Number(w.metadata.resourceVersion));
        const resized = await store.update<Widget>({ ...labelled, spec: { size: 2 } });
        assert.equal(resized.metadata.generation, 2);
        const same = await store.update<Widget>({ ...resized, spec: { size: 2 } });
        assert.equal(same.metadata.generation, 2);
        assert.deepEqual(await store.get(k.type, 'p1', 'a'), same);
      });

      test('update withStatus writes spec and status together: one revision, one event, the spec change counted', async () => {
        const w = await store.create<Widget>(widget('a'));
        const rev = Number(w.metadata.resourceVersion);
        const both = await store.update<Widget>(
          { ...w, spec: { size: 3 }, status: { phase: 'Grown' } },
          { withStatus: true },
        );
        assert.equal(both.metadata.generation, 2);
        assert.deepEqual(both.spec, { size: 3 });
        assert.deepEqual(both.status, { phase: 'Grown' });
        assert.equal(Number(both.metadata.resourceVersion), rev + 1);
        const events = await feedSince(rev);
        assert.equal(events.length, 1);
        assert.deepEqual(events[0]!.object.status, { phase: 'Grown' });
        assert.deepEqual(await store.get(k.type, 'p1', 'a'), both);
        // the same resourceVersion check as any update
        await assert.rejects(
          store.update<Widget>({ ...w, status: { phase: 'Stale' } }, { withStatus: true }),
          (err: unknown) => err instanceof ConflictError && err.code === 'Conflict',
        );
        // in a batch too
        const [batched] = await store.commit([
          { op: 'update', object: { ...both, status: { phase: 'Batched' } }, options: { withStatus: true } },
        ]);
        assert.deepEqual(batched!.status, { phase: 'Batched' });
        assert.equal(batched!.metadata.generation, 2);
      });

      test('spec key order does not count as a change', async () => {
        const w = await store.create<Widget>(widget('a', {}, { size: 1, color: 'red' }));
        const u = await store.update<Widget>({ ...w, spec: { color: 'red', size: 1 } });
        assert.equal(u.metadata.generation, 1);
      });

      test('update keeps the stored status and the immutable metadata', async () => {
        const w = await store.create<Widget>(widget('a'));
        const st = await store.updateStatus<Widget>({ ...w, status: { phase: 'Ready' } });
        const u = await store.update<Widget>({
          ...st,
          metadata: { ...st.metadata, creationTimestamp: '1999-01-01T00:00:00Z', generation: 99 },
          spec: { size: 5 },
          status: { phase: 'Hacked' },
        });
        assert.deepEqual(u.status, { phase: 'Ready' });
        assert.equal(u.metadata.creationTimestamp, w.metadata.creationTimestamp);
        assert.equal(u.metadata.generation, 2);
        assert.equal(u.metadata.uid, w.metadata.uid);
      });

      test('a stale resourceVersion is a Conflict and changes nothing', async () => {
        const w = await store.create<Widget>(widget('a'));
        await store.update<Widget>({ ...w, spec: { size: 2 } });
        await assert.rejects(
          store.update<Widget>({ ...w, spec: { size: 3 } }),
          (e: unknown) => e instanceof ConflictError && e.code === 'Conflict',
        );
        await assert.rejects(
          store.updateStatus<Widget>({ ...w, status: { phase: 'x' } }),
          (e: unknown) => e instanceof ConflictError && e.code === 'Conflict',
        );
        assert.deepEqual((await store.get<Widget>(k.type, 'p1', 'a'))?.spec, { size: 2 });
      });

      test('an update naming another uid is a Conflict (the object was replaced)', async () => {
        const w = await store.create<Widget>(widget('a'));
        await store.delete(k.type, 'p1', 'a');
        const again = await store.create<Widget>(widget('a'));
        await assert.rejects(
          store.update<Widget>({
            ...w,
            metadata: { ...w.metadata, resourceVersion: again.metadata.resourceVersion },
          }),
          ConflictError,
        );
      });

      test('updating a missing object is NotFound', async () => {
        const w = await store.create<Widget>(widget('a'));
        await store.delete(k.type, 'p1', 'a');
        await assert.rejects(store.update(w), NotFoundError);
        await assert.rejects(store.updateStatus(w), NotFoundError);
      });

      test('updateStatus replaces status only and keeps spec, labels and generation', async () => {
        const w = await store.create<Widget>(widget('a', { labels: { a: 'b' } }, { size: 4 }));
        const s = await store.updateStatus<Widget>({
          ...w,
          metadata: { ...w.metadata, labels: { changed: 'yes' } },
          spec: { size: 100 },
          status: { phase: 'Running' },
        });
        assert.deepEqual(s.spec, { size: 4 });
        assert.deepEqual(s.metadata.labels, { a: 'b' });
        assert.equal(s.metadata.generation, 1);
        assert.deepEqual(s.status, { phase: 'Running' });
        assert.deepEqual(await store.get(k.type, 'p1', 'a'), s);
      });
    });

    describe('delete and finalizers', () => {
      test('delete without finalizers removes the object and records its last state', async () => {
        const w = await store.create<Widget>(widget('a'));
        const rev = await store.currentRevision();
        assert.equal(await store.delete(k.type, 'p1', 'a'), undefined);
        assert.equal(await store.get(k.type, 'p1', 'a'), undefined);
        assert.equal(await store.getByUid(k.type, w.metadata.uid), undefined);
        const [ev] = await feedSince(rev);
        assert.equal(ev?.type, 'DELETED');
        assert.equal(ev?.object.metadata.uid, w.metadata.uid);
        assert.equal(ev?.object.metadata.resourceVersion, String(ev?.revision));
      });

      test('delete with finalizers only marks the object, once', async () => {
        await store.create(widget('a', { finalizers: ['x.io/cleanup'] }));
        const marked = await store.delete(k.type, 'p1', 'a', { now: '2030-01-01T00:00:00.000Z' });
        assert.equal(marked?.metadata.deletionTimestamp, '2030-01-01T00:00:00.000Z');
        const rev = await store.currentRevision();
        const again = await store.delete(k.type, 'p1', 'a');
        assert.equal(again?.metadata.deletionTimestamp, '2030-01-01T00:00:00.000Z');
        assert.equal(again?.metadata.resourceVersion, marked?.metadata.resourceVersion);
        assert.equal(await store.currentRevision(), rev, 'a repeated delete writes nothing');
        assert.deepEqual(await store.get(k.type, 'p1', 'a'), marked);
      });

      test('removing the last finalizer of a deleted object removes it', async () => {
        await store.create(widget('a', { finalizers: ['one', 'two'] }));
        let w = (await store.delete<Widget>(k.type, 'p1', 'a'))!;
        w = await store.update<Widget>({ ...w, metadata: { ...w.metadata, finalizers: ['two'] } });
        assert.ok(await store.get(k.type, 'p1', 'a'));
        const rev = await store.currentRevision();
        await store.update<Widget>({ ...w, metadata: { ...w.metadata, finalizers: [] } });
        assert.equal(await store.get(k.type, 'p1', 'a'), undefined);
        assert.deepEqual(
          (await feedSince(rev)).map((e) => e.type),
          ['DELETED'],
        );
      });

      test('an object without deletionTimestamp may drop its finalizers and stays', async () => {
        const w = await store.create<Widget>(widget('a', { finalizers: ['one'] }));
        await store.update<Widget>({ ...w, metadata: { ...w.metadata, finalizers: [] } });
        assert.deepEqual((await store.get(k.type, 'p1', 'a'))?.metadata.finalizers, []);
      });

      test('deleting a missing object is NotFound', async () => {
        await assert.rejects(store.delete(k.type, 'p1', 'nope'), NotFoundError);
      });

      test('delete preconditions on uid and resourceVersion are Conflicts', async () => {
        const w = await store.create<Widget>(widget('a'));
        await assert.rejects(store.delete(k.type, 'p1', 'a', { uid: 'other' }), ConflictError);
        await assert.rejects(
          store.delete(k.type, 'p1', 'a', { resourceVersion: '999999999' }),
          ConflictError,
        );
        assert.ok(await store.get(k.type, 'p1', 'a'));
        await store.delete(k.type, 'p1', 'a', {
          uid: w.metadata.uid,
          resourceVersion: w.metadata.resourceVersion,
        });
        assert.equal(await store.get(k.type, 'p1', 'a'), undefined);
      });
    });

    describe('commit', () => {
      test('applies several writes atomically and returns their results in order', async () => {
        const a = await store.create<Widget>(widget('a'));
        const b = await store.create<Widget>(widget('b', { finalizers: ['f'] }));
        const rev = await store.currentRevision();
        const out = await store.commit([
          { op: 'create', object: widget('c') },
          { op: 'update', object: { ...a, spec: { size: 9 } } },
          { op: 'updateStatus', object: { ...b, status: { phase: 'Done' } } },
          { op: 'delete', type: k.type, namespace: 'p1', name: 'c' },
        ]);
        assert.equal(out.length, 4);
        assert.equal(out[0]?.metadata.name, 'c');
        assert.equal(out[1]?.metadata.generation, 2);
        assert.deepEqual(out[2]?.status, { phase: 'Done' });
        assert.equal(out[3], undefined);
        const feed = await feedSince(rev);
        assert.deepEqual(
          feed.map((e) => [e.type, e.object.metadata.name]),
          [
            ['ADDED', 'c'],
            ['MODIFIED', 'a'],
            ['MODIFIED', 'b'],
            ['DELETED', 'c'],
          ],
        );
        assert.deepEqual(
          feed.map((e) => e.revision),
          [rev + 1, rev + 2, rev + 3, rev + 4],
        );
      });

      test('a failing write rolls back every write of the batch', async () => {
        const a = await store.create<Widget>(widget('a'));
        const rev = await store.currentRevision();
        await assert.rejects(
          store.commit([
            { op: 'create', object: widget('new') },
            { op: 'update', object: { ...a, spec: { size: 7 } } },
            { op: 'create', object: widget('a') },
          ]),
          (e: unknown) => e instanceof ConflictError && e.code === 'AlreadyExists',
        );
        assert.equal(await store.get(k.type, 'p1', 'new'), undefined);
        assert.deepEqual((await store.get<Widget>(k.type, 'p1', 'a'))?.spec, { size: 1 });
        assert.equal(await store.currentRevision(), rev);
        assert.deepEqual(await feedSince(rev), []);
        // the store still works after a rolled back batch
        const next = await store.create(widget('after'));
        assert.equal(Number(next.metadata.resourceVersion), rev + 1);
      });

      test('an empty batch writes nothing', async () => {
        const rev = await store.currentRevision();
        assert.deepEqual(await store.commit([]), []);
        assert.equal(await store.currentRevision(), rev);
      });
    });

    describe('revision feed', () => {
      test('every write appends one entry, in revision order, with the object after the change', async () => {
        const rev = await store.currentRevision();
        const a = await store.create<Widget>(widget('a'));
        const a2 = await store.update<Widget>({ ...a, spec: { size: 2 } });
        const a3 = await store.updateStatus<Widget>({ ...a2, status: { phase: 'Up' } });
        await store.delete(k.type, 'p1', 'a');
        const feed = await feedSince(rev);
        assert.deepEqual(
          feed.map((e) => e.type),
          ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED'],
        );
        assert.deepEqual(
          feed.map((e) => e.revision),
          [rev + 1, rev + 2, rev + 3, rev + 4],
        );
        assert.deepEqual(feed[0]?.object, a);
        assert.deepEqual(feed[1]?.object, a2);
        assert.deepEqual(feed[2]?.object, a3);
        for (const e of feed) assert.equal(e.object.metadata.resourceVersion, String(e.revision));
      });

      test('types filters the feed and resuming from a revision returns only what follows', async () => {
        const other = freshKind();
        const rev = await store.currentRevision();
        await store.create(widget('a'));
        await store.create({
          apiVersion: other.apiVersion,
          kind: other.kind,
          metadata: { name: 'o', namespace: 'p1' },
          spec: {},
        });
        await store.create(widget('b'));
        const mine = await feedSince(rev);
        assert.deepEqual(
          mine.map((e) => e.object.metadata.name),
          ['a', 'b'],
        );
        const both = await store.changes(rev, { types: [k.type, other.type] });
        assert.deepEqual(
          both.map((e) => e.object.metadata.name),
          ['a', 'o', 'b'],
        );
        const resumed = await store.changes(both[1]!.revision, { types: [k.type, other.type] });
        assert.deepEqual(
          resumed.map((e) => e.object.metadata.name),
          ['b'],
        );
        const limited = await store.changes(rev, { types: [k.type, other.type], limit: 2 });
        assert.deepEqual(
          limited.map((e) => e.object.metadata.name),
          ['a', 'o'],
        );
        assert.deepEqual(await store.changes(await store.currentRevision()), []);
      });

      test('reading from before a compaction is Expired; entries after it remain', async () => {
        const rev = await store.currentRevision();
        await store.create(widget('a'));
        await store.create(widget('b'));
        await store.create(widget('c'));
        await store.compact(rev + 3);
        await assert.rejects(
          feedSince(rev),
          (e: unknown) => e instanceof ConflictError && e.code === 'Expired',
        );
        await assert.rejects(
          feedSince(rev + 1),
          (e: unknown) => e instanceof ConflictError && e.code === 'Expired',
        );
        assert.deepEqual(
          (await feedSince(rev + 2)).map((e) => e.object.metadata.name),
          ['c'],
        );
        // a later, smaller compaction does not move the mark back
        await store.compact(rev + 1);
        await assert.rejects(feedSince(rev + 1), ConflictError);
      });

      test('periodic compaction keeps one period of history: a watcher within it resumes, an older one is Expired', async () => {
        const clock = new ManualClock();
        let ticks = 0;
        const stop = startFeedCompaction({
          store,
          clock,
          log: silentLogger,
          retainMs: 60_000,
          afterTick: () => ticks++,
        });
        const period = async (n: number) => {
          if (n > 1) await clock.advance(60_000);
          for (let i = 0; ticks < n && i < 500; i++) await new Promise((r) => setTimeout(r, 5));
          assert.equal(ticks, n);
        };
        try {
          await period(1);
          await store.create(widget('early'));
          const seen = await store.currentRevision();
          await period(2); // remembers the head; nothing is dropped yet
          assert.equal((await feedSince(seen - 1)).length, 1);
          await store.create(widget('late'));
          await period(3); // drops what was written before the previous period
          await assert.rejects(
            feedSince(seen - 1),
            (e: unknown) => e instanceof ConflictError && e.code === 'Expired',
          );
          assert.deepEqual(
            (await feedSince(seen)).map((e) => e.object.metadata.name),
            ['late'],
          );
        } finally {
          await stop();
        }
      });

      test('onChange fires after a write and stops after unsubscribing', async () => {
        let calls = 0;
        let wake: () => void = () => undefined;
        const woke = new Promise<void>((r) => (wake = r));
        const off = store.onChange(() => {
          calls++;
          wake();
        });
        await store.create(widget('a'));
        await woke;
        assert.ok(calls >= 1);
        off();
        const before = calls;
        await store.create(widget('b'));
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(calls, before);
      });

      test('concurrent writers get distinct revisions and the feed has no gaps', async () => {
        const rev = await store.currentRevision();
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.create(widget(`c${i}`))));
        const feed = await feedSince(rev);
        assert.equal(feed.length, 20);
        assert.deepEqual(
          feed.map((e) => e.revision),
          Array.from({ length: 20 }, (_, i) => rev + 1 + i),
        );
      });

      test('of two concurrent updates from the same read, exactly one wins', async () => {
        const w = await store.create<Widget>(widget('a'));
        const results = await Promise.allSettled([
          store.update<Widget>({ ...w, spec: { size: 10 } }),
          store.update<Widget>({ ...w, spec: { size: 20 } }),
        ]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        const rejected = results.find((r) => r.status === 'rejected');
        assert.ok(rejected && rejected.reason instanceof ConflictError);
        assert.equal((await store.get(k.type, 'p1', 'a'))?.metadata.generation, 2);
      });
    });

    describe('leases', () => {
      const lease = () => `lease-${k.kind}`;

      test('a free lease is acquired and renewed by its holder', async () => {
        assert.equal(await store.acquireLease(lease(), 'a', 1000, 10_000), true);
        assert.equal(await store.leaseHolder(lease(), 10_500), 'a');
        assert.equal(await store.acquireLease(lease(), 'a', 1000, 10_900), true);
        assert.equal(await store.leaseHolder(lease(), 11_500), 'a', 'renewal extends the expiry');
      });

      test('another holder cannot take an unexpired lease', async () => {
        await store.acquireLease(lease(), 'a', 1000, 10_000);
        assert.equal(await store.acquireLease(lease(), 'b', 1000, 10_999), false);
        assert.equal(await store.leaseHolder(lease(), 10_999), 'a');
      });

      test('an expired lease is taken over', async () => {
        await store.acquireLease(lease(), 'a', 1000, 10_000);
        assert.equal(await store.leaseHolder(lease(), 11_000), undefined);
        assert.equal(await store.acquireLease(lease(), 'b', 1000, 11_000), true);
        assert.equal(await store.leaseHolder(lease(), 11_500), 'b');
        assert.equal(await store.acquireLease(lease(), 'a', 1000, 11_500), false);
      });

      test('release frees the lease only for its holder', async () => {
        await store.acquireLease(lease(), 'a', 1000, 10_000);
        await store.releaseLease(lease(), 'b');
        assert.equal(await store.leaseHolder(lease(), 10_100), 'a');
        await store.releaseLease(lease(), 'a');
        assert.equal(await store.leaseHolder(lease(), 10_100), undefined);
        assert.equal(await store.acquireLease(lease(), 'b', 1000, 10_100), true);
      });

      test('listLeases reports unexpired leases under a prefix', async () => {
        const p = lease();
        await store.acquireLease(`${p}/m/a`, 'a', 1000, 10_000);
        await store.acquireLease(`${p}/m/b`, 'b', 5000, 10_000);
        await store.acquireLease(`${p}/other`, 'c', 5000, 10_000);
        assert.deepEqual(await store.listLeases(`${p}/m/`, 10_500), [
          { name: `${p}/m/a`, holder: 'a', expiresMs: 11_000 },
          { name: `${p}/m/b`, holder: 'b', expiresMs: 15_000 },
        ]);
        assert.deepEqual(
          (await store.listLeases(`${p}/m/`, 12_000)).map((l) => l.holder),
          ['b'],
        );
      });

      test('only one of many concurrent claimants gets a free lease', async () => {
        const got = await Promise.all(
          Array.from({ length: 8 }, (_, i) => store.acquireLease(lease(), `h${i}`, 1000, 10_000)),
        );
        assert.equal(got.filter(Boolean).length, 1);
      });
    });
  });
}
