import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, type AuthContext } from '../../src/domain/index.ts';
import { LocalIdentity, type BootstrapCredential } from '../../src/identity/index.ts';
import { SqliteStore, type ObjectStore } from '../../src/store/index.ts';
import { FAST_SCRYPT } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'magnetar-identity-view-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Count the calls that reach the store (it stays a real SQLite store). */
function counted(store: ObjectStore): { store: ObjectStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]): unknown => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

function total(calls: Map<string, number>): number {
  let n = 0;
  for (const [name, c] of calls) if (name !== 'onChange') n += c;
  return n;
}

async function passwordToken(identity: LocalIdentity, c: BootstrapCredential): Promise<string> {
  const t = await identity.authenticate({
    identity: {
      method: 'password',
      user: { name: c.username, domain: { name: 'Default' } },
      password: c.password,
    },
    scope: { type: 'project', project: { name: c.projectName, domain: { name: 'Default' } } },
  });
  return t.token;
}

void test('validation reads the store at most once per staleness window, however many requests arrive', async () => {
  const clock = new ManualClock();
  const { store, calls } = counted(new SqliteStore({ path: ':memory:' }));
  const identity = await LocalIdentity.open({
    store,
    clock,
    baseUrl: () => 'http://x',
    scryptCost: FAST_SCRYPT,
    maxStalenessMs: 1000,
  });
  try {
    const boot = await identity.bootstrap();
    const token = await passwordToken(
      identity,
      boot.credentials.find((c) => c.username === 'demo-sa')!,
    );
    await identity.validate(token);
    calls.clear();
    let last: AuthContext | undefined;
    for (let i = 0; i < 2000; i++) last = await identity.validate(token);
    assert.equal(last?.userName, 'demo-sa');
    assert.equal(total(calls), 0, JSON.stringify([...calls]));
    await clock.advance(1001);
    for (let i = 0; i < 2000; i++) await identity.validate(token);
    assert.deepEqual([...calls], [['currentRevision', 1]], 'one cheap revision read for the whole window');
  } finally {
    await identity.close();
    await store.close();
  }
});

void test('a second process over the same database sees a disabled user within the staleness window, without notifications', async () => {
  const path = join(dir, 'shared.sqlite');
  const clock = new ManualClock();
  // Two SQLite connections do not notify each other: only the staleness check can bring news.
  const storeA = new SqliteStore({ path });
  const storeB = new SqliteStore({ path });
  const a = await LocalIdentity.open({
    store: storeA,
    clock,
    baseUrl: () => 'http://a',
    scryptCost: FAST_SCRYPT,
    maxStalenessMs: 1000,
  });
  const boot = await a.bootstrap();
  const b = await LocalIdentity.open({
    store: storeB,
    clock,
    baseUrl: () => 'http://b',
    scryptCost: FAST_SCRYPT,
    maxStalenessMs: 1000,
  });
  try {
    const demo = boot.credentials.find((c) => c.username === 'demo')!;
    const admin = boot.credentials.find((c) => c.username === 'admin')!;
    // Tokens signed by one process are valid in the other: the key is shared through the store.
    const token = await passwordToken(a, demo);
    assert.equal((await b.validate(token)).userName, 'demo');
    const adminCtx = await a.validate(await passwordToken(a, admin));
    await a.users.update(adminCtx, (await b.validate(token)).userId, { enabled: false });
    await assert.rejects(a.validate(token), /disabled/, 'the writing process knows at once');
    await clock.advance(1001);
    await assert.rejects(b.validate(token), /disabled/, 'the other process knows after one staleness window');
  } finally {
    await a.close();
    await b.close();
    await storeA.close();
    await storeB.close();
  }
});

void test('a process that missed compacted changes reloads everything and carries on', async () => {
  const path = join(dir, 'compacted.sqlite');
  const clock = new ManualClock();
  const storeA = new SqliteStore({ path });
  const storeB = new SqliteStore({ path });
  const a = await LocalIdentity.open({
    store: storeA,
    clock,
    baseUrl: () => 'http://a',
    scryptCost: FAST_SCRYPT,
    maxStalenessMs: 1000,
  });
  try {
    const boot = await a.bootstrap();
    const token = await passwordToken(
      a,
      boot.credentials.find((c) => c.username === 'demo')!,
    );
    // Another process writes, then compacts the feed past what this one has read.
    await storeB.create({
      apiVersion: 'identity.magnetar.io/v1',
      kind: 'Project',
      metadata: { name: '0123456789abcdef0123456789abcdef', namespace: '' },
      spec: { name: 'written-elsewhere', domainId: 'default' },
    });
    await storeB.compact((await storeB.currentRevision()) + 1);
    await clock.advance(1001);
    assert.equal((await a.validate(token)).userName, 'demo');
    assert.ok((await a.listProjects()).some((p) => p.name === 'written-elsewhere'));
  } finally {
    await a.close();
    await storeA.close();
    await storeB.close();
  }
});
