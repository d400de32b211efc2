import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { provisioningSuite } from '../cloud/provisioning-suite.ts';
import { RealCloudAdmin, realSkipReason, realSleep, SHARED, type RealTenant } from './real-openstack.ts';

/**
 * The same provisioning suite as test/cloud/against-embedded.test.ts, against real OpenStack
 * services (`MAGNETAR_REAL_OPENSTACK`, see docs/real-openstack.md): what a caller of the client
 * library observes must be the same on both clouds. The run works in a project of its own and
 * checks, through the services' own APIs, that it left nothing behind.
 */
const skip = realSkipReason();
const full = process.env.MAGNETAR_REAL_OPENSTACK_FULL === '1';

if (skip) {
  void describe('provisioning calls against real OpenStack services', () => {
    void test('runs only with a real cloud', (t) => {
      if (
        process.env.MAGNETAR_REQUIRE_REAL_CLIENTS === '1' &&
        process.env.MAGNETAR_REQUIRE_REAL_OPENSTACK === '1'
      )
        assert.fail(`the real OpenStack services are required: ${skip}`);
      t.skip(skip);
    });
  });
} else {
  let admin: RealCloudAdmin | undefined;
  let tenant: RealTenant | undefined;
  provisioningSuite(
    'provisioning calls against real OpenStack services (Keystone, Nova, Neutron, Octavia, Cinder, Glance)',
    async () => {
      admin = new RealCloudAdmin();
      const shared = await admin.ensureShared();
      tenant = await admin.createTenant('magnetar-conf');
      const zone = shared.zones[0];
      assert.ok(zone, 'the cloud has a compute availability zone with a host');
      let objectStore = true;
      try {
        await tenant.session.endpoint('object-store');
      } catch {
        objectStore = false;
      }
      return {
        session: tenant.session,
        externalNetwork: shared.externalNetworkName,
        availabilityZone: zone,
        volumeAvailabilityZone: 'nova',
        objectStore,
        // Octavia's no-op drivers answer a fixed VIP, Cinder's fake driver cannot copy an image to a
        // volume: set MAGNETAR_REAL_OPENSTACK_FULL=1 for a cloud with real drivers.
        lbVipInSubnet: full,
        bootFromVolume: full,
        flavor: SHARED.flavor,
        osDistro: SHARED.osDistro,
        volumeSizeOverQuotaGb: 5000,
        settle: (ms) => realSleep(Math.min(ms, 1000)),
        async close() {
          const a = admin!;
          const t = tenant!;
          const left = await a.inventory(t.projectId);
          const swept = await a.dropTenant(t);
          a.close();
          assert.deepEqual(
            Object.fromEntries(Object.entries(left).filter(([, v]) => v.length > 0)),
            {},
            `the suite left resources behind (swept: ${JSON.stringify(swept)})`,
          );
        },
      };
    },
  );
}
