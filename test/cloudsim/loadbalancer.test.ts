import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/domain/index.ts';
import { startCloud, type CloudHarness } from './harness.ts';

type Obj = Record<string, unknown> & { id: string; provisioning_status: string; operating_status: string };

async function subnet(h: CloudHarness): Promise<string> {
  const n = await h.call<{ network: { id: string } }>('POST', '/network/v2.0/networks', {
    body: { network: { name: 'lb-net' } },
  });
  const s = await h.call<{ subnet: { id: string } }>('POST', '/network/v2.0/subnets', {
    body: { subnet: { network_id: n.body.network.id, cidr: '10.9.0.0/24', ip_version: 4 } },
  });
  return s.body.subnet.id;
}

const lbPath = (p: string) => `/load-balancer/v2/lbaas/${p}`;

async function lbStatus(h: CloudHarness, id: string): Promise<string> {
  return (await h.call<{ loadbalancer: Obj }>('GET', lbPath(`loadbalancers/${id}`))).body.loadbalancer
    .provisioning_status;
}

test('a load balancer goes PENDING_CREATE then ACTIVE, with a VIP port on the subnet', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 2000 });
  try {
    const sub = await subnet(h);
    const r = await h.call<{ loadbalancer: Obj }>('POST', lbPath('loadbalancers'), {
      body: { loadbalancer: { name: 'kubeapi', vip_subnet_id: sub } },
    });
    assert.equal(r.status, 201);
    const lb = r.body.loadbalancer;
    assert.equal(lb.provisioning_status, 'PENDING_CREATE');
    assert.equal(lb.operating_status, 'OFFLINE');
    assert.equal(lb.vip_address, '10.9.0.2');
    const port = await h.call<{ port: { device_owner: string; name: string } }>(
      'GET',
      `/network/v2.0/ports/${String(lb.vip_port_id)}`,
    );
    assert.equal(port.body.port.device_owner, 'Octavia');
    await clock.advance(2000);
    const active = await h.call<{ loadbalancer: Obj }>('GET', lbPath(`loadbalancers/${lb.id}`));
    assert.equal(active.body.loadbalancer.provisioning_status, 'ACTIVE');
    assert.equal(active.body.loadbalancer.operating_status, 'ONLINE');
    const list = await h.call<{ loadbalancers: Obj[]; loadbalancers_links: unknown[] }>(
      'GET',
      '/load-balancer/v2.0/lbaas/loadbalancers?name=kubeapi',
    );
    assert.equal(list.body.loadbalancers.length, 1);
    assert.deepEqual(list.body.loadbalancers_links, []);
    await h.call('POST', lbPath('loadbalancers'), {
      body: { loadbalancer: { name: 'other', vip_subnet_id: sub } },
    });
    const named = async (q: string) =>
      (
        await h.call<{ loadbalancers: Obj[] }>('GET', `/load-balancer/v2.0/lbaas/loadbalancers?${q}`)
      ).body.loadbalancers
        .map((l) => `${String(l.name)}:${String(l.provisioning_status)}`)
        .sort();
    assert.deepEqual(await named('name=kubeapi'), ['kubeapi:ACTIVE']);
    assert.deepEqual(await named('name=kubeapi&name=other'), ['kubeapi:ACTIVE', 'other:PENDING_CREATE']);
    assert.deepEqual(await named('name=none-such'), []);
  } finally {
    await h.close();
  }
});

test('listener, pool and member changes put the load balancer in PENDING_UPDATE; it is immutable until ACTIVE', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 1000 });
  try {
    const sub = await subnet(h);
    const lb = (
      await h.call<{ loadbalancer: Obj }>('POST', lbPath('loadbalancers'), {
        body: { loadbalancer: { name: 'lb', vip_subnet_id: sub } },
      })
    ).body.loadbalancer;
    const early = await h.call('POST', lbPath('listeners'), {
      body: { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443 } },
    });
    assert.equal(early.status, 409);
    assert.deepEqual(early.body, {
      faultcode: 'Client',
      faultstring: `Load Balancer ${lb.id} is immutable and cannot be updated.`,
      debuginfo: null,
    });
    await clock.advance(1000);

    const listener = await h.call<{ listener: Obj }>('POST', lbPath('listeners'), {
      body: { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443, name: 'api' } },
    });
    assert.equal(listener.status, 201);
    assert.equal(listener.body.listener.provisioning_status, 'PENDING_CREATE');
    assert.equal(await lbStatus(h, lb.id), 'PENDING_UPDATE');
    await clock.advance(1000);
    assert.equal(await lbStatus(h, lb.id), 'ACTIVE');

    const dupListener = await h.call('POST', lbPath('listeners'), {
      body: { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443 } },
    });
    assert.equal(dupListener.status, 409);

    const pool = await h.call<{ pool: Obj }>('POST', lbPath('pools'), {
      body: {
        pool: { listener_id: listener.body.listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      },
    });
    assert.equal(pool.status, 201);
    await clock.advance(1000);
    const hm = await h.call('POST', lbPath('healthmonitors'), {
      body: {
        healthmonitor: { pool_id: pool.body.pool.id, type: 'TCP', delay: 10, timeout: 5, max_retries: 5 },
      },
    });
    assert.equal(hm.status, 201);
    await clock.advance(1000);
    const member = await h.call<{ member: Obj }>('POST', lbPath(`pools/${pool.body.pool.id}/members`), {
      body: { member: { address: '10.9.0.10', protocol_port: 6443, subnet_id: sub } },
    });
    assert.equal(member.status, 201);
    assert.equal(await lbStatus(h, lb.id), 'PENDING_UPDATE');
    const whilePending = await h.call('POST', lbPath(`pools/${pool.body.pool.id}/members`), {
      body: { member: { address: '10.9.0.11', protocol_port: 6443 } },
    });
    assert.equal(whilePending.status, 409);
    await clock.advance(1000);
    const m = await h.call<{ member: Obj }>(
      'GET',
      lbPath(`pools/${pool.body.pool.id}/members/${member.body.member.id}`),
    );
    assert.equal(m.body.member.provisioning_status, 'ACTIVE');
    assert.equal(m.body.member.operating_status, 'ONLINE');
    const showPool = await h.call<{ pool: Obj }>('GET', lbPath(`pools/${pool.body.pool.id}`));
    assert.deepEqual(showPool.body.pool.members, [{ id: member.body.member.id }]);
    assert.deepEqual(showPool.body.pool.listeners, [{ id: listener.body.listener.id }]);

    const status = await h.call<{
      statuses: { loadbalancer: { listeners: { pools: { members: unknown[] }[] }[] } };
    }>('GET', lbPath(`loadbalancers/${lb.id}/status`));
    assert.equal(status.body.statuses.loadbalancer.listeners[0]!.pools[0]!.members.length, 1);
  } finally {
    await h.close();
  }
});

test('a load balancer with children is deleted only with cascade, and its VIP port goes with it', async () => {
  const clock = new ManualClock();
  const h = await startCloud({ clock, latencyMs: 500 });
  try {
    const sub = await subnet(h);
    const lb = (
      await h.call<{ loadbalancer: Obj }>('POST', lbPath('loadbalancers'), {
        body: { loadbalancer: { name: 'lb', vip_subnet_id: sub } },
      })
    ).body.loadbalancer;
    await clock.advance(500);
    await h.call('POST', lbPath('listeners'), {
      body: { listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 80 } },
    });
    await clock.advance(500);
    const refused = await h.call('DELETE', lbPath(`loadbalancers/${lb.id}`));
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, {
      faultcode: 'Client',
      faultstring: `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`,
      debuginfo: null,
    });
    assert.equal((await h.call('DELETE', lbPath(`loadbalancers/${lb.id}?cascade=true`))).status, 204);
    assert.equal(await lbStatus(h, lb.id), 'PENDING_DELETE');
    const again = await h.call('DELETE', lbPath(`loadbalancers/${lb.id}?cascade=true`));
    assert.equal(again.status, 409);
    await clock.advance(500);
    assert.equal((await h.call('GET', lbPath(`loadbalancers/${lb.id}`))).status, 404);
    assert.equal((await h.call('GET', `/network/v2.0/ports/${String(lb.vip_port_id)}`)).status, 404);
    assert.deepEqual((await h.call<{ listeners: unknown[] }>('GET', lbPath('listeners'))).body.listeners, []);
  } finally {
    await h.close();
  }
});

test('the load balancer quota refuses with Octavia 403', async () => {
  const h = await startCloud();
  try {
    const sub = await subnet(h);
    assert.equal(
      (
        await h.call('PUT', lbPath(`quotas/${h.identity.projectA}`), {
          token: 'admin',
          body: { quota: { load_balancer: 1 } },
        })
      ).status,
      202,
    );
    assert.equal(
      (await h.call('POST', lbPath('loadbalancers'), { body: { loadbalancer: { vip_subnet_id: sub } } }))
        .status,
      201,
    );
    const over = await h.call('POST', lbPath('loadbalancers'), {
      body: { loadbalancer: { vip_subnet_id: sub } },
    });
    assert.equal(over.status, 403);
    assert.deepEqual(over.body, {
      faultcode: 'Client',
      faultstring: 'Quota has been met for resources: Load Balancer',
      debuginfo: null,
    });
    const noVip = await h.call<{ faultstring: string }>('POST', lbPath('loadbalancers'), {
      token: 'bob',
      body: { loadbalancer: { name: 'x' } },
    });
    assert.equal(noVip.status, 400);
    assert.equal(
      noVip.body.faultstring,
      'Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.',
    );
  } finally {
    await h.close();
  }
});
