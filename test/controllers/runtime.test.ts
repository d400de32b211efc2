import { describe, test, afterEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  ManualClock,
  MagnumTypes,
  setCondition,
  type ApiObject,
  type Condition,
  type MServiceObject,
  type NewObject,
} from '../../src/domain/index.ts';
import { PostgresStore, SqliteStore, type ObjectStore } from '../../src/store/index.ts';
import {
  ControllerManager,
  TerminalError,
  ownerRefsMapper,
  type ManagerOptions,
  type ObjectRef,
  type ReconcileContext,
  type Reconciler,
} from '../../src/controllers/index.ts';

const API = 'test.magnetar.io/v1';
const WIDGET = 'Widget.test.magnetar.io';
const PART = 'Part.test.magnetar.io';

type Widget = ApiObject<{ size: number }, { conditions?: Condition[] }>;

function widget(name: string, size = 1, namespace = 'p1'): NewObject<Widget['spec'], Widget['status']> {
  return { apiVersion: API, kind: 'Widget', metadata: { name, namespace }, spec: { size } };
}

/** Everything a test opened, closed afterwards. */
/** A Part in p1 owned by `owner` (a widget as the store returned it). */
function partOf(owner: ApiObject, name = 'wheel'): NewObject<Record<string, never>, Record<string, unknown>> {
  return {
    apiVersion: API,
    kind: 'Part',
    metadata: {
      name,
      namespace: 'p1',
      ownerReferences: [
        { apiVersion: API, kind: 'Widget', name: owner.metadata.name, uid: owner.metadata.uid },
      ],
    },
    spec: {},
  };
}

const cleanups: (() => Promise<void>)[] = [];
/** Gates are opened first, so a failed test never leaves a reconcile (and its manager's stop) hanging. */
const gates: (() => void)[] = [];
afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function memoryStore(): ObjectStore {
  const store = new SqliteStore({ path: ':memory:' });
  cleanups.push(() => store.close());
  return store;
}

function manager(
  store: ObjectStore,
  clock: ManualClock,
  options: Partial<ManagerOptions> = {},
): ControllerManager {
  const m = new ControllerManager({
    store,
    clock,
    holder: 'solo',
    serviceHeartbeatMs: 0,
    resyncMs: 10_000_000,
    ...options,
  });
  cleanups.push(() => m.stop());
  return m;
}

/** A reconciler that records calls and runs `body` for each. */
function recorder(
  body: (ctx: ReconcileContext, ref: ObjectRef) => Promise<{ requeueAfterMs?: number } | void> = async () =>
    undefined,
  extra: Partial<Reconciler> = {},
) {
  const calls: { key: string; at: number }[] = [];
  let clock: ManualClock | undefined;
  const reconciler: Reconciler = {
    name: 'widget',
    type: WIDGET,
    async reconcile(ctx, ref) {
      clock ??= ctx.clock as ManualClock;
      calls.push({ key: `${ref.namespace}/${ref.name}`, at: ctx.clock.now() });
      return body(ctx, ref);
    },
    ...extra,
  };
  const count = (key: string) => calls.filter((c) => c.key === key).length;
  return { reconciler, calls, count };
}

/** A promise and its resolver, to hold a reconcile open. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((r) => (open = r));
  gates.push(() => open());
  return { opened, open };
}

/** Start `m` with `r`, then create widget p1/a and delete it, each change reconciled to the end. */
async function createThenDelete(store: ObjectStore, m: ControllerManager, r: Reconciler): Promise<void> {
  m.register(r);
  await m.start();
  await store.create(widget('a'));
  await m.waitIdle();
  await store.delete(WIDGET, 'p1', 'a');
  await m.waitIdle();
}

/** A started manager with one worker, whose reconcile of widget `name` waits for `hold`. */
async function oneWorkerHeldBy(name: string) {
  const store = memoryStore();
  const hold = gate();
  const rec = recorder(async (_ctx, ref) => {
    if (ref.name === name) await hold.opened;
  });
  const m = manager(store, new ManualClock(), { workers: 1 });
  m.register(rec.reconciler);
  await m.start();
  return { store, rec, m, hold };
}

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('controller runtime: work queue', () => {
  test('start reconciles every existing object, then each later change', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    await store.create(widget('a'));
    await store.create(widget('b', 1, 'p2'));
    const rec = recorder();
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    await m.waitIdle();
    assert.deepEqual(rec.calls.map((c) => c.key).sort(), ['p1/a', 'p2/b']);
    const a = (await store.get<Widget>(WIDGET, 'p1', 'a'))!;
    await store.update({ ...a, spec: { size: 2 } });
    await store.create(widget('c'));
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2);
    assert.equal(rec.count('p1/c'), 1);
    assert.equal(rec.count('p2/b'), 1);
    assert.deepEqual(m.stats().widget, { reconciles: 4, errors: 0, queued: 0, inFlight: 0 });
  });

  test('changes that pile up while a key waits for a worker are reconciled once', async () => {
    const { store, rec, m, hold } = await oneWorkerHeldBy('blocker');
    await store.create(widget('blocker'));
    await until(() => rec.count('p1/blocker') === 1, 'the blocker to start');
    let b = await store.create<Widget>(widget('b'));
    for (let i = 2; i <= 5; i++) b = await store.update<Widget>({ ...b, spec: { size: i } });
    await until(() => m.stats().widget!.queued === 1, 'b to be queued');
    hold.open();
    await m.waitIdle();
    assert.equal(rec.count('p1/b'), 1);
  });

  test('while workers are busy, the waiting objects of the cluster seen first go before a younger cluster’s', async () => {
    const { store, rec, m, hold } = await oneWorkerHeldBy('a-1');
    const of = (name: string, cluster: string) => {
      const w = widget(name);
      return { ...w, metadata: { ...w.metadata, labels: { 'cluster.x-k8s.io/cluster-name': cluster } } };
    };
    await store.create(of('a-1', 'a'));
    await until(() => rec.count('p1/a-1') === 1, 'a-1 to start');
    // cluster b's objects are asked for before a's second one
    await store.create(of('b-1', 'b'));
    await store.create(of('b-2', 'b'));
    await store.create(of('a-2', 'a'));
    await until(() => m.stats().widget!.queued === 3, 'three keys to wait');
    hold.open();
    await m.waitIdle();
    assert.deepEqual(
      rec.calls.map((c) => c.key),
      ['p1/a-1', 'p1/a-2', 'p1/b-1', 'p1/b-2'],
    );
  });

  test('an object changed during its reconcile is reconciled once more afterwards, never concurrently', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    let running = 0;
    let maxRunning = 0;
    const holds = [gate(), gate()];
    let call = 0;
    const rec = recorder(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      const hold = holds[call++];
      if (hold) await hold.opened;
      running--;
    });
    const m = manager(store, clock, { workers: 4 });
    m.register(rec.reconciler);
    await m.start();
    let a = await store.create<Widget>(widget('a'));
    await until(() => rec.count('p1/a') === 1, 'the first reconcile');
    for (let i = 2; i <= 4; i++) a = await store.update<Widget>({ ...a, spec: { size: i } });
    m.enqueue('widget', { namespace: 'p1', name: 'a' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(rec.count('p1/a'), 1, 'no second reconcile while the first runs');
    holds[0]!.open();
    await until(() => rec.count('p1/a') === 2, 'the follow-up reconcile');
    holds[1]!.open();
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2);
    assert.equal(maxRunning, 1);
  });

  test('different keys are reconciled concurrently up to the worker count', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const hold = gate();
    let running = 0;
    let maxRunning = 0;
    const rec = recorder(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await hold.opened;
      running--;
    });
    for (let i = 0; i < 6; i++) await store.create(widget(`w${i}`));
    const m = manager(store, clock, { workers: 3 });
    m.register(rec.reconciler);
    await m.start();
    await until(() => running === 3, 'three reconciles at once');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(running, 3);
    assert.deepEqual(
      { ...m.stats().widget!, reconciles: 0 },
      { reconciles: 0, errors: 0, queued: 3, inFlight: 3 },
    );
    hold.open();
    await m.waitIdle();
    assert.equal(maxRunning, 3);
    assert.equal(rec.calls.length, 6);
  });

  test('a deleted object is reconciled once more, and finds it gone', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const seen: (string | undefined)[] = [];
    const rec = recorder(async (ctx, ref) => {
      seen.push((await ctx.store.get(WIDGET, ref.namespace, ref.name))?.metadata.name);
    });
    await createThenDelete(store, manager(store, clock), rec.reconciler);
    assert.deepEqual(seen, ['a', undefined]);
  });

  test('a reconciler\u2019s own read is how the manager reads its object before each reconcile', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const reads: string[] = [];
    const rec = recorder(undefined, {
      read: async (s, ref) => {
        assert.equal(s, store);
        reads.push(ref.name);
        return s.get(WIDGET, ref.namespace, ref.name);
      },
    });
    await createThenDelete(store, manager(store, clock), rec.reconciler);
    assert.deepEqual(reads, ['a', 'a']);
    assert.equal(rec.count('p1/a'), 2);
  });
});

describe('controller runtime: retries', () => {
  test('failures back off exponentially up to the cap, and success resets the backoff', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    let failing = true;
    const rec = recorder(async () => {
      if (failing) throw new Error('cloud says no');
    });
    // random just below 1: each delay is the top of its jitter window, minus one millisecond
    const m = manager(store, clock, { backoffBaseMs: 1000, backoffCapMs: 8000, random: () => 1 - 1e-9 });
    m.register(rec.reconciler);
    await m.start();
    await store.create(widget('a'));
    await m.waitIdle();
    for (let i = 0; i < 6; i++) {
      await clock.advance(9000);
      await m.waitIdle();
    }
    const times = rec.calls.map((c) => c.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    assert.deepEqual(gaps.slice(0, 6), [999, 1999, 3999, 7999, 7999, 7999]);
    assert.equal(m.stats().widget!.errors, rec.calls.length);

    failing = false;
    await clock.advance(8000);
    await m.waitIdle();
    const okCalls = rec.calls.length;
    await clock.advance(60_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, okCalls, 'a success stops the retries');

    failing = true;
    const a = (await store.get<Widget>(WIDGET, 'p1', 'a'))!;
    await store.update({ ...a, spec: { size: 9 } });
    await m.waitIdle();
    const failedAt = clock.now();
    await clock.advance(1000);
    await m.waitIdle();
    assert.equal(rec.calls[rec.calls.length - 1]!.at - failedAt, 999, 'the backoff starts again at the base');
  });

  test('full jitter spreads retries between zero and the exponential bound', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async () => {
      throw new Error('flaky');
    });
    const m = manager(store, clock, { backoffBaseMs: 1000, backoffCapMs: 100_000, random: () => 0.5 });
    m.register(rec.reconciler);
    await m.start();
    await store.create(widget('a'));
    await m.waitIdle();
    for (let i = 0; i < 3; i++) {
      await clock.advance(5000);
      await m.waitIdle();
    }
    const times = rec.calls.map((c) => c.at);
    assert.deepEqual(
      times.slice(1, 4).map((t, i) => t - times[i]!),
      [500, 1000, 2000],
    );
  });

  test('requeueAfterMs reconciles again after that delay without any change', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async () => ({ requeueAfterMs: 30_000 }));
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    await store.create(widget('a'));
    await m.waitIdle();
    const start = rec.calls[0]!.at;
    await clock.advance(29_999);
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 1);
    await clock.advance(1);
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2);
    assert.equal(rec.calls[1]!.at - start, 30_000);
  });

  test('a terminal error is not retried until the object changes', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async (ctx, ref) => {
      const w = (await ctx.store.get<Widget>(WIDGET, ref.namespace, ref.name))!;
      if (w.spec.size > 10) return;
      // as a reconciler should: record the failure where a person sees it, then stop
      await ctx.store.updateStatus<Widget>({
        ...w,
        status: {
          conditions: setCondition(
            w.status.conditions,
            {
              type: 'Ready',
              status: 'False',
              reason: 'TooSmall',
              message: `size ${w.spec.size} (${rec.calls.length})`,
            },
            new Date(ctx.clock.now()).toISOString(),
          ),
        },
      });
      throw new TerminalError('size must be above 10', 'TooSmall');
    });
    const m = manager(store, clock, { resyncMs: 60_000 });
    m.register(rec.reconciler);
    await m.start();
    await store.create(widget('a', 1));
    await m.waitIdle();
    await clock.advance(10 * 60_000);
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 1, 'not retried by backoff, by its own status write, or by resync');
    assert.equal(m.stats().widget!.errors, 1);

    const w = (await store.get<Widget>(WIDGET, 'p1', 'a'))!;
    await store.update<Widget>({ ...w, spec: { size: 20 } });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2, 'a spec change wakes it');
  });

  test('a key parked by a terminal error runs again when enqueued by hand or by a watched object', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(
      async () => {
        throw new TerminalError('missing part', 'MissingPart');
      },
      { watches: [{ type: PART, map: ownerRefsMapper(WIDGET) }] },
    );
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 1);
    m.enqueue('widget', { namespace: 'p1', name: 'a' });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2);
    await store.create(partOf(a, 'part'));
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 3);
  });
});

describe('controller runtime: watches and resync', () => {
  test('an event source enqueues the keys it names while the manager runs, and is let go at stop', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    let tell: ((ref: ObjectRef) => void) | undefined;
    let subscriptions = 0;
    const rec = recorder(async () => undefined, {
      sources: [
        (enqueue) => {
          subscriptions++;
          tell = enqueue;
          return () => (tell = undefined);
        },
      ],
    });
    const m = manager(store, clock);
    m.register(rec.reconciler);
    assert.equal(tell, undefined, 'not subscribed before start');
    await m.start();
    await store.create(widget('a'));
    await store.create(widget('b'));
    await m.waitIdle();
    assert.deepEqual([rec.count('p1/a'), rec.count('p1/b')], [1, 1]);
    tell!({ namespace: 'p1', name: 'b' });
    await m.waitIdle();
    assert.deepEqual([rec.count('p1/a'), rec.count('p1/b')], [1, 2], 'only the key it named');
    await m.stop();
    assert.equal(tell, undefined, 'unsubscribed at stop');
    assert.equal(subscriptions, 1);
  });

  test('a change of an owned object enqueues its owner', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async () => undefined, { watches: [{ type: PART, map: ownerRefsMapper(WIDGET) }] });
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    await store.create(widget('b'));
    await m.waitIdle();
    const part = await store.create({
      apiVersion: API,
      kind: 'Part',
      metadata: {
        name: 'wheel',
        namespace: 'p1',
        ownerReferences: [
          { apiVersion: API, kind: 'Widget', name: 'a', uid: a.metadata.uid, controller: true },
          { apiVersion: 'other.io/v1', kind: 'Widget', name: 'b', uid: 'x' },
        ],
      },
      spec: {},
    });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2);
    assert.equal(rec.count('p1/b'), 1, 'an owner of another group is not this kind');
    await store.updateStatus({ ...part, status: { ok: true } });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 3);
  });

  test('a watch with a view ignores changes outside it; additions, deletions and changes inside it map', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async () => undefined, {
      watches: [
        {
          type: PART,
          map: ownerRefsMapper(WIDGET),
          // the owner reads the part's colour, never its counter
          view: (o) => (o.status as { colour?: string }).colour ?? null,
        },
      ],
    });
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    await m.waitIdle();
    let part = await store.create(partOf(a));
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2, 'the part was added');
    part = await store.updateStatus({ ...part, status: { counter: 1 } });
    part = await store.updateStatus({ ...part, status: { counter: 2 } });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2, 'counter changes are outside the view');
    await store.updateStatus({ ...part, status: { counter: 3, colour: 'red' } });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 3, 'the colour is inside the view');
    await store.delete(PART, 'p1', 'wheel');
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 4, 'the part was deleted');
  });

  test('controllers that watch with one view function each hear of a change inside it, and neither of one outside', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const colour = (o: ApiObject) => (o.status as { colour?: string }).colour ?? null;
    const watches = [{ type: PART, map: ownerRefsMapper(WIDGET), view: colour }];
    const first = recorder(async () => undefined, { watches, view: colour });
    const second = recorder(async () => undefined, { name: 'gadget', watches });
    const m = manager(store, clock);
    m.register(first.reconciler);
    m.register(second.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    let part = await store.create(partOf(a));
    await m.waitIdle();
    const counts = () => [first.count('p1/a'), second.count('p1/a')];
    const before = counts();
    part = await store.updateStatus({ ...part, status: { counter: 1 } });
    await m.waitIdle();
    assert.deepEqual(counts(), before, 'outside the view: neither');
    await store.updateStatus({ ...part, status: { counter: 2, colour: 'red' } });
    await m.waitIdle();
    assert.deepEqual(
      counts(),
      before.map((n) => n + 1),
      'inside the view: both, although the first computed it',
    );
    const widgetNow = (await store.get(WIDGET, 'p1', 'a'))!;
    await store.updateStatus({ ...widgetNow, status: { colour: 'blue' } });
    await m.waitIdle();
    assert.equal(first.count('p1/a'), before[0]! + 2, 'the same function as its own view, on another kind');
  });

  test('a reconciler with a view of its own kind skips its own status-only writes', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(
      async (ctx, ref) => {
        const w = (await ctx.store.get<Widget>(WIDGET, ref.namespace, ref.name))!;
        // a fresh message each pass: without the view, every pass would bring the next one
        const conditions = setCondition(
          w.status.conditions,
          { type: 'Ready', status: 'True', message: `pass at ${ctx.clock.now()}-${Math.random()}` },
          new Date(ctx.clock.now()).toISOString(),
        );
        await ctx.store.updateStatus({ ...w, status: { conditions } });
      },
      { view: (o) => o.metadata.generation },
    );
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 1, 'its own status write did not bring it back');
    await store.update({ ...(await store.get<Widget>(WIDGET, 'p1', 'a'))!, spec: { size: 5 } });
    await m.waitIdle();
    assert.equal(rec.count('p1/a'), 2, 'a spec change is inside the view');
    assert.ok(a.metadata.uid);
  });

  test('with a coalescing window, a burst of watched changes is one reconcile after the window', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder(async () => undefined, {
      coalesceMs: 200,
      watches: [{ type: PART, map: ownerRefsMapper(WIDGET) }],
    });
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    const a = await store.create(widget('a'));
    await until(() => rec.count('p1/a') === 1, 'the first reconcile');
    const owners = [{ apiVersion: API, kind: 'Widget', name: 'a', uid: a.metadata.uid }];
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) {
      await store.create({
        apiVersion: API,
        kind: 'Part',
        metadata: { name, namespace: 'p1', ownerReferences: owners },
        spec: {},
      });
    }
    // the changes are read from the feed at once; nothing runs before the window ends
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(rec.count('p1/a'), 1);
    await clock.advance(199);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(rec.count('p1/a'), 1, 'still inside the window');
    await clock.advance(1);
    await until(() => rec.count('p1/a') === 2, 'one reconcile for the burst');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(rec.count('p1/a'), 2);
    // a change of the widget itself is never delayed
    await store.update({ ...(await store.get<Widget>(WIDGET, 'p1', 'a'))!, spec: { size: 3 } });
    await until(() => rec.count('p1/a') === 3, 'the reconcile of its own change');
  });

  test('ownerRefsMapper maps to owners of the given kind in the object namespace', () => {
    const map = ownerRefsMapper('MachineSet.cluster.x-k8s.io');
    const refs = map({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: {
        name: 'm',
        namespace: 'ns',
        uid: 'u',
        resourceVersion: '1',
        generation: 1,
        creationTimestamp: '',
        labels: {},
        annotations: {},
        finalizers: [],
        ownerReferences: [
          { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', name: 'ms', uid: '1' },
          { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', name: 'md', uid: '2' },
        ],
      },
      spec: {},
      status: {},
    });
    assert.deepEqual(refs, [{ namespace: 'ns', name: 'ms' }]);
  });

  /** A manager with a recording controller and this resync period, not started. */
  function resyncing(resyncMs: number) {
    const store = memoryStore();
    const clock = new ManualClock();
    const rec = recorder();
    const m = manager(store, clock, { resyncMs });
    m.register(rec.reconciler);
    return { store, clock, rec, m };
  }

  test('periodic resync reconciles every object again', async () => {
    const { store, clock, rec, m } = resyncing(300_000);
    await store.create(widget('a'));
    await store.create(widget('b'));
    await m.start();
    await m.waitIdle();
    await clock.advance(299_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 2);
    await clock.advance(1_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 4);
  });

  test('a resync of many keys enqueues a hundred at once and spreads the rest over the first half of the period', async () => {
    const { store, clock, rec, m } = resyncing(400_000);
    for (let i = 0; i < 250; i++) await store.create(widget(`w${String(i).padStart(3, '0')}`));
    await m.start();
    await m.waitIdle();
    assert.equal(rec.calls.length, 250);
    await clock.advance(400_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 350, 'the first hundred at once');
    // the other 150 come in two slices, at a quarter and at half of the period
    await clock.advance(99_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 350);
    await clock.advance(1_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 450);
    await clock.advance(100_000);
    await m.waitIdle();
    assert.equal(rec.calls.length, 500);
    const perKey = new Map<string, number>();
    for (const { key } of rec.calls) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    assert.ok(
      [...perKey.values()].every((n) => n === 2),
      'every key once more, none twice',
    );
    await m.stop();
  });

  test('when the feed was compacted past its position, the manager lists everything again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'magnetar-rt-'));
    const path = join(dir, 'store.sqlite');
    const mine = new SqliteStore({ path });
    const other = new SqliteStore({ path });
    cleanups.push(async () => {
      await mine.close();
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const clock = new ManualClock();
    const rec = recorder();
    const m = manager(mine, clock);
    m.register(rec.reconciler);
    await m.start();
    await m.waitIdle();
    // written through another connection: this manager's store is not notified
    await other.create(widget('x'));
    await other.create(widget('y'));
    await other.compact((await other.currentRevision()) + 1);
    await assert.rejects(mine.changes(0), /compacted/);
    await clock.advance(2_000); // the poll finds the feed expired
    await m.waitIdle();
    assert.deepEqual(rec.calls.map((c) => c.key).sort(), ['p1/x', 'p1/y']);
  });
});

describe('controller runtime: lifecycle', () => {
  test('work left unfinished by a stopped manager is done by the next one', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const first = recorder(async () => {
      throw new Error('crashed half way');
    });
    const m1 = manager(store, clock, { holder: 'one' });
    m1.register(first.reconciler);
    await m1.start();
    await store.create(widget('a'));
    await m1.waitIdle();
    await m1.stop();
    await store.create(widget('b')); // while nothing runs

    const second = recorder(async () => ({ requeueAfterMs: 1_000_000 }));
    const m2 = manager(store, clock, { holder: 'two' });
    m2.register(second.reconciler);
    await m2.start();
    await m2.waitIdle();
    assert.deepEqual(second.calls.map((c) => c.key).sort(), ['p1/a', 'p1/b']);
  });

  test('stop aborts the signal of running reconciles and waits for them', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    let aborted = false;
    const rec = recorder(async (ctx) => {
      try {
        await ctx.clock.sleep(60_000, ctx.signal);
      } catch {
        aborted = ctx.signal.aborted;
      }
    });
    const m = manager(store, clock);
    m.register(rec.reconciler);
    await m.start();
    await store.create(widget('a'));
    await until(() => rec.calls.length === 1, 'the reconcile to start');
    await m.stop();
    assert.equal(aborted, true);
    assert.equal(m.stats().widget!.inFlight, 0);
    assert.equal(clock.pendingTimers, 0, 'no timers left behind');
  });

  test('registering after start or twice is refused', async () => {
    const store = memoryStore();
    const m = manager(store, new ManualClock());
    m.register(recorder().reconciler);
    assert.throws(() => m.register(recorder().reconciler), /twice/);
    await m.start();
    assert.throws(() => m.register({ ...recorder().reconciler, name: 'late' }), /before start/);
    assert.throws(() => m.enqueue('nope', { namespace: '', name: 'x' }), /no controller/);
  });

  test('each process reports an MService heartbeat with a stable id every 10 s', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    const m1 = manager(store, clock, { host: 'node-1', holder: 'n1', serviceHeartbeatMs: 10_000 });
    await m1.start();
    const name1 = 'node-1.magnetar-conductor';
    let s1 = (await store.get<MServiceObject>(MagnumTypes.MService, '', name1))!;
    assert.deepEqual(s1.spec, {
      id: 1,
      host: 'node-1',
      binary: 'magnetar-conductor',
      disabled: false,
      disabledReason: null,
    });
    assert.deepEqual(s1.status, { reportCount: 1, lastSeen: new Date(clock.now()).toISOString() });
    assert.equal(s1.apiVersion, 'magnum.magnetar.io/v1');

    const m2 = manager(store, clock, { host: 'node-2', holder: 'n2', serviceHeartbeatMs: 10_000 });
    await m2.start();
    const s2 = (await store.get<MServiceObject>(MagnumTypes.MService, '', 'node-2.magnetar-conductor'))!;
    assert.equal(s2.spec.id, 2);

    await clock.advance(10_000);
    await m1.waitIdle();
    s1 = (await store.get<MServiceObject>(MagnumTypes.MService, '', name1))!;
    assert.equal(s1.status.reportCount, 2);
    assert.equal(s1.status.lastSeen, new Date(clock.now()).toISOString());

    await m1.stop();
    const again = manager(store, clock, { host: 'node-1', holder: 'n1b', serviceHeartbeatMs: 10_000 });
    await again.start();
    s1 = (await store.get<MServiceObject>(MagnumTypes.MService, '', name1))!;
    assert.equal(s1.spec.id, 1, 'a restart keeps the id');
    assert.equal(s1.status.reportCount, 3);
  });
});

describe('controller runtime: MService ids', () => {
  test('two hosts that pick the same id at the same moment end with distinct ids', async () => {
    const store = memoryStore();
    const clock = new ManualClock();
    // Another host's first heartbeat lands between this host's id choice and its create.
    let raced = false;
    const racing = new Proxy(store, {
      get(target, prop) {
        if (prop === 'create') {
          return async (obj: NewObject<{ id?: number }>) => {
            if (obj.kind === 'MService' && !raced) {
              raced = true;
              await target.create({
                ...obj,
                metadata: { name: 'rival.magnetar-conductor', namespace: '' },
                spec: { ...obj.spec, host: 'rival' },
              });
            }
            return target.create(obj);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const m = manager(racing, clock, { host: 'node-1', serviceHeartbeatMs: 10_000 });
    await m.start();
    assert.ok(raced);
    const all = (await store.list<MServiceObject>(MagnumTypes.MService)).items;
    const ids = Object.fromEntries(all.map((s) => [s.spec.host, s.spec.id]));
    assert.deepEqual(ids, { rival: 1, 'node-1': 2 });
  });
});

/**
 * Two managers (two processes, as far as the store can tell) on one store: each key is
 * reconciled by exactly one of them; a manager that dies without releasing its leases has its
 * keys taken over once the lease TTL has passed.
 */
async function twoManagersScenario(openStore: () => Promise<ObjectStore>): Promise<void> {
  const storeA = await openStore();
  const storeB = await openStore();
  const clock = new ManualClock();
  const byA = recorder();
  const byB = recorder();
  const options = { leaseTtlMs: 3_000, shards: 8, pollMs: 500 };
  const a = new ControllerManager({
    store: storeA,
    clock,
    holder: 'a',
    serviceHeartbeatMs: 0,
    resyncMs: 10_000_000,
    ...options,
  });
  const b = new ControllerManager({
    store: storeB,
    clock,
    holder: 'b',
    serviceHeartbeatMs: 0,
    resyncMs: 10_000_000,
    ...options,
  });
  cleanups.push(async () => {
    await a.stop();
    await b.stop();
    await storeA.close();
    await storeB.close();
  });
  a.register(byA.reconciler);
  b.register(byB.reconciler);
  const names = Array.from({ length: 40 }, (_, i) => `w${String(i).padStart(2, '0')}`);
  for (const n of names) await storeA.create(widget(n));

  const settle = async (steps: number, ms: number) => {
    for (let i = 0; i < steps; i++) {
      await clock.advance(ms);
      await a.waitIdle();
      await b.waitIdle();
    }
  };

  await a.start();
  await b.start();
  await settle(4, 1_000); // a sees b join, hands half of the shards over; b takes them
  assert.equal(a.ownedShards().length + b.ownedShards().length, 8);
  assert.equal(a.ownedShards().filter((s) => b.ownedShards().includes(s)).length, 0, 'no shard held twice');
  assert.ok(a.ownedShards().length > 0 && b.ownedShards().length > 0);

  // every object changes once: each is reconciled by exactly one manager
  byA.calls.length = 0;
  byB.calls.length = 0;
  for (const n of names) {
    const w = (await storeA.get<Widget>(WIDGET, 'p1', n))!;
    await storeA.update<Widget>({ ...w, spec: { size: 2 } });
  }
  await settle(2, 500);
  const keysA = new Set(byA.calls.map((c) => c.key));
  const keysB = new Set(byB.calls.map((c) => c.key));
  assert.equal(keysA.size + keysB.size, 40, 'every object reconciled');
  assert.equal([...keysA].filter((k) => keysB.has(k)).length, 0, 'no object reconciled by both');
  assert.ok(keysA.size > 0 && keysB.size > 0, `work split: a ${keysA.size}, b ${keysB.size}`);

  // a dies: leases stay in the store until they expire
  await a.stop({ releaseLeases: false });
  byB.calls.length = 0;
  for (const n of names) {
    const w = (await storeB.get<Widget>(WIDGET, 'p1', n))!;
    await storeB.update<Widget>({ ...w, spec: { size: 3 } });
  }
  await settle(1, 500);
  const early = new Set(byB.calls.map((c) => c.key));
  assert.deepEqual(
    [...early].filter((k) => keysA.has(k)),
    [],
    "a's keys wait for its leases to expire",
  );
  await settle(8, 1_000); // past the TTL and the next lease tick
  const late = new Set(byB.calls.map((c) => c.key));
  assert.equal(late.size, 40, "b took a's keys over");
  assert.equal(b.ownedShards().length, 8);
}

describe('controller runtime: several processes', () => {
  test('two managers on one SQLite file split the work; a dead one is taken over after the lease TTL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'magnetar-rt-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    await twoManagersScenario(async () => new SqliteStore({ path: join(dir, 'store.sqlite') }));
  });

  const pgUrl = process.env.MAGNETAR_TEST_PG_URL;
  const pgSkip = pgUrl
    ? false
    : process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1'
      ? false
      : 'MAGNETAR_TEST_PG_URL not set';
  const schema = `t_runtime_${randomBytes(4).toString('hex')}`;
  if (pgUrl) {
    after(async () => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });
  }
  test(
    'two managers on one PostgreSQL split the work; a dead one is taken over after the lease TTL',
    { skip: pgSkip },
    async () => {
      if (!pgUrl)
        assert.fail(
          'MAGNETAR_TEST_PG_URL not set, and MAGNETAR_REQUIRE_REAL_CLIENTS=1 requires the PostgreSQL tests',
        );
      await twoManagersScenario(() => PostgresStore.connect({ url: pgUrl, schema, pool: 4 }));
    },
  );
});
