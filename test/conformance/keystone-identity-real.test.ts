import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { KeystoneIdentity } from '../../src/identity/index.ts';
import { RealCloudAdmin, realSkipReason, type RealTenant } from './real-openstack.ts';

/**
 * Magnetar's external-identity mode against the real Keystone: tokens of real users are
 * validated (project, roles, the service-account flag), bad tokens are refused, the service
 * user acts in a tenant's project through an inherited role, and the catalog registration is
 * idempotent.
 */
const skip = realSkipReason();
// CI (MAGNETAR_REQUIRE_REAL_OPENSTACK=1) fails instead of skipping.
const required = process.env.MAGNETAR_REQUIRE_REAL_OPENSTACK === '1';

void describe('external identity against the real Keystone', { skip: (!required && skip) || false }, () => {
  let admin: RealCloudAdmin;
  let tenant: RealTenant;
  let svc: { userId: string; username: string; password: string };
  let identity: KeystoneIdentity;
  let restore: () => Promise<void>;
  const type = `magnetar-conf-${randomBytes(2).toString('hex')}`;

  before(async () => {
    if (skip) assert.fail(`the real OpenStack services are required: ${skip}`);
    admin = new RealCloudAdmin();
    restore = await admin.snapshotCatalog(type);
    svc = await admin.createServiceUser('magnetar-svc');
    tenant = await admin.createTenant('magnetar-ident', ['member'], { service_account: true });
    identity = new KeystoneIdentity({
      keystoneUrl: admin.authUrl,
      service: { method: 'password', username: svc.username, password: svc.password, projectName: 'service' },
      baseUrl: () => 'http://127.0.0.1:9511',
    });
  });
  after(async () => {
    await identity?.close();
    await restore?.();
    if (tenant) await admin.dropTenant(tenant);
    if (svc) await admin.deleteUser(svc.userId);
    admin?.close();
  });

  void test("a tenant's token is validated with its project, roles and service-account flag", async () => {
    const token = await tenant.session.token();
    const ctx = await identity.validate(token);
    assert.equal(ctx.projectId, tenant.projectId);
    assert.equal(ctx.userName, tenant.username);
    assert.ok(ctx.roles.includes('member'), ctx.roles.join(','));
    assert.equal(ctx.isServiceAccount, true);
    assert.equal(ctx.isAdmin, false);
    await assert.rejects(identity.validate(`${token.slice(0, -4)}AAAA`), { name: 'AuthenticationError' });
  });

  void test("the service user gets a token in a tenant's project through its inherited role", async () => {
    const t = await identity.issueServiceToken(tenant.projectId);
    const ctx = await identity.validate(t.token);
    assert.equal(ctx.projectId, tenant.projectId);
    assert.equal(ctx.userName, svc.username);
    assert.ok((await identity.getProject(tenant.projectId))?.name === tenant.projectName);
  });

  void test('catalog registration creates the service once, then changes only what differs', async () => {
    let url = 'http://127.0.0.1:19511/v1';
    identity.registerService({ type, name: 'magnetar-conformance', urlForProject: () => url });
    const first = await identity.publishCatalog('RegionOne', [type]);
    assert.deepEqual(first[0]?.endpoints, { public: 'created', internal: 'created', admin: 'created' });
    const again = await identity.publishCatalog('RegionOne', [type]);
    assert.equal(again[0]?.serviceId, first[0]?.serviceId);
    assert.deepEqual(again[0]?.endpoints, { public: 'unchanged', internal: 'unchanged', admin: 'unchanged' });
    url = 'http://127.0.0.1:29511/v1';
    const moved = await identity.publishCatalog('RegionOne', [type]);
    assert.deepEqual(moved[0]?.endpoints, { public: 'updated', internal: 'updated', admin: 'updated' });
    const eps = await admin.get<{ endpoints: { url: string }[] }>('identity', '/endpoints', {
      service_id: first[0].serviceId,
    });
    assert.deepEqual(
      eps.endpoints.map((e) => e.url),
      [url, url, url],
    );
  });
});
