import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { realSkipReason } from './real-openstack.ts';
import { startRealMagnetar, type RealMagnetar } from './real-magnetar.ts';
import type { RealTenant } from './real-openstack.ts';

/**
 * A cluster's life on real OpenStack services, driven by the real `openstack coe` client through
 * Magnetar (found in the real Keystone's catalog): create with three masters over three
 * availability zones and one worker, resize, delete — and the real services are left as they
 * were, checked through their own APIs. The fake hypervisor runs no guest, so the workload side
 * is emulated (docs/workload-emulation.md).
 */
const skip = realSkipReason();
const required = process.env.MAGNETAR_REQUIRE_REAL_OPENSTACK === '1';
const full = process.env.MAGNETAR_REAL_OPENSTACK_FULL === '1';

void describe('a cluster on real OpenStack services through openstack coe', { timeout: 20 * 60_000 }, () => {
  let r: RealMagnetar;
  let t: RealTenant;
  const name = `real-${randomBytes(2).toString('hex')}`;
  const template = `${name}-template`;

  before(async () => {
    if (skip) return;
    r = await startRealMagnetar();
    t = await r.newTenant('magnetar-cluster');
  });
  after(async () => {
    await r?.close();
  });

  void test('the real services are configured', (c) => {
    if (skip && required) assert.fail(`the real OpenStack services are required: ${skip}`);
    if (skip) c.skip(skip);
  });

  void test('openstack coe finds Magnetar in the real Keystone catalog and creates a template there', async (c) => {
    if (skip) return c.skip(skip);
    const keypair = await r.openstack(t, ['keypair', 'create', `${name}-key`]);
    assert.equal(keypair.code, 0, keypair.stderr);
    const created = await r.json<{ uuid: string }>(t, [
      'coe',
      'cluster',
      'template',
      'create',
      '--coe',
      'kubernetes',
      '--image',
      r.shared.imageName,
      '--external-network',
      r.shared.externalNetworkName,
      '--flavor',
      r.shared.flavorName,
      '--master-flavor',
      r.shared.flavorName,
      '--network-driver',
      'calico',
      '--master-lb-enabled',
      '--dns-nameserver',
      '8.8.8.8',
      '--labels',
      // Octavia's no-op network driver answers a VIP port Neutron does not have, so no floating
      // IP can be associated with it; a cloud with real drivers keeps the API floating IP.
      full ? 'kube_tag=v1.32.5' : 'kube_tag=v1.32.5,master_lb_floating_ip_enabled=false',
      template,
    ]);
    assert.match(created.uuid, /^[0-9a-f-]{36}$/);
    const list = await r.json<{ name: string }[]>(t, ['coe', 'cluster', 'template', 'list']);
    assert.ok(
      list.some((x) => x.name === template),
      JSON.stringify(list),
    );
  });

  void test('cluster create builds network, router, security groups, load balancer, floating IP and servers, masters over three zones', async (c) => {
    if (skip) return c.skip(skip);
    const r1 = await r.openstack(t, [
      'coe',
      'cluster',
      'create',
      '--cluster-template',
      template,
      '--master-count',
      '3',
      '--master-flavor',
      r.shared.flavorName,
      '--node-count',
      '1',
      '--flavor',
      r.shared.flavorName,
      '--keypair',
      `${name}-key`,
      name,
    ]);
    assert.equal(r1.code, 0, r1.stderr);
    const done = await r.settle(t, name, 10 * 60_000);
    assert.equal(done.status, 'CREATE_COMPLETE', String(done.status_reason));

    const inv = await r.admin.inventory(t.projectId);
    assert.equal(inv.servers!.length, 4, JSON.stringify(inv));
    assert.equal(inv.loadbalancers!.length, 1);
    assert.equal(inv.floatingips!.length, full ? 1 : 0);
    assert.equal(inv.routers!.length, 1);
    assert.ok(inv.networks!.length >= 1);
    assert.ok(inv.security_groups!.length >= 2, 'control-plane and worker security groups');
    const servers = await r.admin.get<{
      servers: { name: string; status: string; 'OS-EXT-AZ:availability_zone': string }[];
    }>('compute', '/servers/detail', { all_tenants: '1', project_id: t.projectId });
    assert.ok(servers.servers.every((s) => s.status === 'ACTIVE'));
    const masterZones = servers.servers
      .filter((s) => /master|control/.test(s.name))
      .map((s) => s['OS-EXT-AZ:availability_zone'])
      .sort();
    assert.equal(masterZones.length, 3, JSON.stringify(servers.servers.map((s) => s.name)));
    if (r.shared.zones.length >= 3)
      assert.equal(new Set(masterZones).size, 3, `masters in ${masterZones.join(', ')}`);
  });

  void test('cluster resize adds a worker server on the real Nova', async (c) => {
    if (skip) return c.skip(skip);
    const r1 = await r.openstack(t, ['coe', 'cluster', 'resize', name, '2']);
    assert.equal(r1.code, 0, r1.stderr);
    const done = await r.settle(t, name, 6 * 60_000);
    assert.equal(done.status, 'UPDATE_COMPLETE', String(done.status_reason));
    assert.equal(done.node_count, 2);
    assert.equal((await r.admin.inventory(t.projectId)).servers!.length, 5);
  });

  void test('cluster delete leaves every real service as it was', async (c) => {
    if (skip) return c.skip(skip);
    const r1 = await r.openstack(t, ['coe', 'cluster', 'delete', name]);
    assert.equal(r1.code, 0, r1.stderr);
    const until = Date.now() + 6 * 60_000;
    for (;;) {
      const show = await r.openstack(t, ['coe', 'cluster', 'show', name, '-f', 'json']);
      if (show.code !== 0) {
        assert.match(show.stderr, /not found|could not be found/i);
        break;
      }
      const st = JSON.parse(show.stdout) as { status: string; status_reason: string };
      assert.notEqual(st.status, 'DELETE_FAILED', st.status_reason);
      assert.ok(Date.now() < until, `still ${st.status}`);
      await new Promise((res) => setTimeout(res, 3000));
    }
    const inv = await r.admin.inventory(t.projectId);
    assert.deepEqual(
      Object.fromEntries(Object.entries(inv).filter(([, v]) => v.length > 0)),
      {},
      'nothing of the cluster is left in Nova, Neutron, Octavia or Cinder',
    );
  });
});
