import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { realSkipReason, realSleep, type RealTenant } from './real-openstack.ts';
import { startRealMagnetar, type RealMagnetar } from './real-magnetar.ts';

/**
 * Cloud faults on the real services: a Nova quota too small for the cluster and a missing
 * image end in CREATE_FAILED with the real service's own words, and deleting the failed
 * cluster leaves nothing behind.
 */
const skip = realSkipReason();
// CI (MAGNETAR_REQUIRE_REAL_OPENSTACK=1) fails instead of skipping.
const required = process.env.MAGNETAR_REQUIRE_REAL_OPENSTACK === '1';

void describe(
  'cloud faults on real OpenStack services',
  { skip: (!required && skip) || false, timeout: 15 * 60_000 },
  () => {
    let r: RealMagnetar;
    let t: RealTenant;
    const name = `fault-${randomBytes(2).toString('hex')}`;

    before(async () => {
      if (skip) assert.fail(`the real OpenStack services are required: ${skip}`);
      r = await startRealMagnetar();
      t = await r.newTenant('magnetar-fault');
      const key = await r.openstack(t, ['keypair', 'create', `${name}-key`]);
      assert.equal(key.code, 0, key.stderr);
    });
    after(async () => {
      await r?.close();
    });

    const template = async (image: string, suffix: string) => {
      const created = await r.openstack(t, [
        'coe',
        'cluster',
        'template',
        'create',
        '--coe',
        'kubernetes',
        '--image',
        image,
        '--external-network',
        r.shared.externalNetworkName,
        '--flavor',
        r.shared.flavorName,
        '--master-flavor',
        r.shared.flavorName,
        '--network-driver',
        'calico',
        '--master-lb-enabled',
        '--labels',
        'kube_tag=v1.32.5,master_lb_floating_ip_enabled=false',
        `${name}-${suffix}`,
      ]);
      return created;
    };
    const create = (tpl: string, cluster: string) =>
      r.openstack(t, [
        'coe',
        'cluster',
        'create',
        '--cluster-template',
        tpl,
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
        cluster,
      ]);
    const deleteAndCheck = async (cluster: string) => {
      const del = await r.openstack(t, ['coe', 'cluster', 'delete', cluster]);
      assert.equal(del.code, 0, del.stderr);
      const until = Date.now() + 5 * 60_000;
      while ((await r.openstack(t, ['coe', 'cluster', 'show', cluster])).code === 0) {
        assert.ok(Date.now() < until, `${cluster} not deleted`);
        await realSleep(3000);
      }
      const inv = await r.admin.inventory(t.projectId);
      assert.deepEqual(
        Object.fromEntries(Object.entries(inv).filter(([, v]) => v.length > 0)),
        {},
        'nothing is left in Nova, Neutron, Octavia or Cinder',
      );
    };

    void test("a Nova quota too small for the cluster ends CREATE_FAILED with Nova's reason, and delete leaves nothing", async () => {
      await r.admin.setQuotas(t.projectId, { compute: { instances: 2 } });
      const tpl = await template(r.shared.imageName, 'ok');
      assert.equal(tpl.code, 0, tpl.stderr);
      const c = await create(`${name}-ok`, `${name}-quota`);
      assert.equal(c.code, 0, c.stderr);
      const done = await r.settle(t, `${name}-quota`, 8 * 60_000);
      assert.equal(done.status, 'CREATE_FAILED');
      assert.match(String(done.status_reason), /[Qq]uota exceeded for instances/);
      await deleteAndCheck(`${name}-quota`);
      await r.admin.setQuotas(t.projectId, { compute: { instances: 10 } });
    });

    void test('a missing image is refused with its name, before anything is built', async () => {
      const missing = `no-such-image-${name}`;
      const tpl = await template(missing, 'noimage');
      if (tpl.code !== 0) {
        assert.match(tpl.stderr, new RegExp(missing));
        return;
      }
      const c = await create(`${name}-noimage`, `${name}-noimage`);
      if (c.code !== 0) {
        assert.match(c.stderr, new RegExp(missing));
        return;
      }
      const done = await r.settle(t, `${name}-noimage`, 5 * 60_000);
      assert.equal(done.status, 'CREATE_FAILED');
      assert.match(String(done.status_reason), new RegExp(missing));
      await deleteAndCheck(`${name}-noimage`);
    });
  },
);
