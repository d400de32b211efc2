import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  CapiAnnotations,
  CapiTypes,
  ManualClock,
  silentLogger,
  type CapiClusterObject,
} from '../../src/domain/index.ts';
import { SqliteStore } from '../../src/store/index.ts';
import { StorePki, WorkloadAccess, WorkloadEmulator } from '../../src/workload/index.ts';
import { createCapiCluster, createMachine, PROJECT } from './fixtures.ts';

void test('of two processes sharing a store, one serves the emulated clusters; the other takes over on the same port when it stops', async () => {
  const store = new SqliteStore({ path: ':memory:' });
  const clock = new ManualClock(Date.now());
  const pki = new StorePki({ store, clock, encryptionKey: randomBytes(32) });
  const make = (holder: string) =>
    new WorkloadEmulator({
      store,
      pki,
      clock,
      log: silentLogger,
      timing: { nodeReadyMs: 0, podStartMs: 0 },
      lease: { holder, ttlMs: 3000 },
    });
  const a = make('process-a');
  const b = make('process-b');
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      await clock.advance(0);
      await a.idle();
      await b.idle();
    }
  };
  try {
    await a.start();
    await b.start();
    await createCapiCluster(store, 'lease-0000aaaa');
    await createMachine(store, pki, {
      cluster: 'lease-0000aaaa',
      name: 'lease-cp',
      controlPlane: true,
      boot: { role: 'init' },
    });
    await settle();
    assert.equal(a.servingCount, 1);
    assert.equal(b.servingCount, 0);
    const cluster = async () =>
      (await store.get<CapiClusterObject>(CapiTypes.Cluster, PROJECT, 'lease-0000aaaa'))!;
    const endpoint = (await cluster()).metadata.annotations[CapiAnnotations.workloadEndpoint];
    assert.ok(endpoint);

    await a.stop();
    await clock.advance(1000); // b's next lease attempt
    await settle();
    assert.equal(b.servingCount, 1);
    assert.equal(
      (await cluster()).metadata.annotations[CapiAnnotations.workloadEndpoint],
      endpoint,
      'same endpoint after the takeover',
    );
    const client = await new WorkloadAccess({ pki, clock }).forCluster(await cluster());
    assert.equal((await client!.listNodes()).length, 1);
  } finally {
    await a.stop();
    await b.stop();
    await store.close();
  }
  assert.equal(clock.pendingTimers, 0, 'no lease timer left behind');
});
