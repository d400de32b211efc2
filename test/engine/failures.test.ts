import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addFault,
  createCluster,
  createKeypair,
  leftovers,
  startHarness,
  statusOf,
  waitForStatus,
} from './harness.ts';

void test('quota exceeded while creating servers ends in CREATE_FAILED with the cloud’s own text, and delete still leaves nothing', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await addFault(h, {
      kind: 'fail',
      operation: 'compute.servers.create',
      count: 50,
      failure: { type: 'quota' },
    });
    await createCluster(h, 'q1', { master_count: 1, node_count: 1 });
    const failed = await waitForStatus(h, 'q1', 'CREATE_FAILED');
    assert.match(failed.reason, /[Qq]uota exceeded/);
    await h.magnum('DELETE', '/v1/clusters/q1');
    await waitForStatus(h, 'q1', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('a server that goes to ERROR once ("No valid host was found") is replaced by the health check and the create completes', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await addFault(h, {
      kind: 'fail',
      operation: 'compute.servers.create',
      count: 1,
      failure: { type: 'error-state', message: 'No valid host was found. ' },
    });
    await createCluster(h, 'e1', { master_count: 1, node_count: 1 });
    await waitForStatus(h, 'e1', 'CREATE_COMPLETE');
    const servers = await h.userCloud.compute.listServers();
    assert.equal(servers.length, 2);
    assert.ok(servers.every((s) => s.status === 'ACTIVE'));
    await h.magnum('DELETE', '/v1/clusters/e1');
    await waitForStatus(h, 'e1', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('servers that keep going to ERROR end in CREATE_FAILED with Nova’s fault message instead of staying in progress forever', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    await addFault(h, {
      kind: 'fail',
      operation: 'compute.servers.create',
      count: 100,
      failure: { type: 'error-state', message: 'No valid host was found. ' },
    });
    await createCluster(h, 'e2', { master_count: 1, node_count: 1 });
    const failed = await waitForStatus(h, 'e2', 'CREATE_FAILED');
    assert.match(failed.reason, /No valid host was found/);
    await h.magnum('DELETE', '/v1/clusters/e2');
    await waitForStatus(h, 'e2', 'gone');
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('missing flavor, image or keypair fails the create at once with a reason naming it', async () => {
  const h = await startHarness();
  try {
    await createKeypair(h);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['bad-flavor', { flavor_id: 'm1.gigantic' }, /flavor m1\.gigantic/i],
      ['bad-keypair', { keypair: 'nobody-has-this' }, /keypair nobody-has-this/i],
    ];
    for (const [name, overrides, reason] of cases) {
      const res = await h.magnum('POST', '/v1/clusters', {
        name,
        cluster_template_id: 'k8s-v1.31',
        master_count: 1,
        master_flavor_id: 'm1.medium',
        node_count: 1,
        flavor_id: 'm1.medium',
        keypair: 'my-keypair',
        ...overrides,
      });
      if (res.status !== 202) {
        // The API may refuse it up front, which is just as good.
        assert.ok(res.status === 400 || res.status === 404, JSON.stringify(res.body));
        assert.match(JSON.stringify(res.body), reason);
        continue;
      }
      const failed = await waitForStatus(h, name, 'CREATE_FAILED', 30);
      assert.match(failed.reason, reason);
      assert.equal((await h.userCloud.compute.listServers()).length, 0, 'nothing was built');
      await h.magnum('DELETE', `/v1/clusters/${name}`);
      await waitForStatus(h, name, 'gone', 60);
    }
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});

void test('create_timeout ends a create that cannot finish in CREATE_FAILED, saying what it was waiting for', async () => {
  const h = await startHarness({ latencyMs: 3 * 60_000 });
  try {
    await createKeypair(h);
    await createCluster(h, 't1', { master_count: 1, node_count: 1, create_timeout: 2 });
    const s = await statusOf(h, 't1');
    assert.equal(s?.status, 'CREATE_IN_PROGRESS');
    const failed = await waitForStatus(h, 't1', 'CREATE_FAILED', 400);
    assert.match(failed.reason, /^Timed out after 2 minutes waiting for the cluster to be created: .+/);
    await h.magnum('DELETE', '/v1/clusters/t1');
    await waitForStatus(h, 't1', 'gone', 2000);
    assert.deepEqual(await leftovers(h), {});
  } finally {
    await h.close();
  }
});
