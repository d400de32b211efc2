import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addFault,
  clearFaults,
  createCluster,
  createKeypair,
  startHarness,
  waitForStatus,
  type Harness,
} from './harness.ts';

/** Keypair copies Magnetar's service identity holds in the embedded cloud (every project). */
async function copies(h: Harness): Promise<string[]> {
  const res = await fetch(`${h.m.url}/cloud/_inventory`, {
    headers: { 'X-Auth-Token': await h.admin.token() },
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { projects: Record<string, Record<string, { name: string }[]>> };
  return Object.values(body.projects)
    .flatMap((p) => p.Keypair ?? [])
    .map((k) => k.name)
    .filter((n) => n.startsWith('magnetar-'))
    .sort();
}

void test("a user's clusters share one copy of their keypair, removed with the last of them", async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await createCluster(h, 'one', { master_count: 1, node_count: 1 });
    await createCluster(h, 'two', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'one', 'CREATE_COMPLETE');
    await waitForStatus(h, 'two', 'CREATE_COMPLETE');
    const shared = await copies(h);
    assert.equal(shared.length, 1, `one copy for both clusters: ${shared.join(', ')}`);
    await h.magnum('DELETE', '/v1/clusters/one');
    await waitForStatus(h, 'one', 'gone');
    assert.deepEqual(await copies(h), shared, 'still used by the other cluster');
    await h.magnum('DELETE', '/v1/clusters/two');
    await waitForStatus(h, 'two', 'gone');
    assert.deepEqual(await copies(h), []);
  } finally {
    await h.close();
  }
});

void test('when the service identity cannot store the copy (key-pair quota), the create fails at once saying so', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await addFault(h, {
      kind: 'fail',
      operation: 'compute.keypairs.create',
      count: 5,
      failure: { type: 'quota' },
    });
    await createCluster(h, 'kq', { master_count: 1, node_count: 1 });
    const failed = await waitForStatus(h, 'kq', 'CREATE_FAILED');
    assert.match(failed.reason, /cannot store another keypair.*[Qq]uota.*openstack quota set --key-pairs/);
    await clearFaults(h);
    await h.magnum('DELETE', '/v1/clusters/kq');
    await waitForStatus(h, 'kq', 'gone');
    assert.deepEqual(await copies(h), []);
  } finally {
    await h.close();
  }
});
