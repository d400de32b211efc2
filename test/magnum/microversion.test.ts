import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, magnumError } from './harness.ts';

let h: Harness;
before(async () => {
  h = await Harness.start();
});
after(async () => {
  await h.close();
});

void test('GET / is Magnum version document, public, with min 1.1 and max 1.14', async () => {
  const r = await h.call('GET', '/', { token: null, version: null });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  const doc = r.body as {
    versions: {
      id: string;
      status: string;
      min_version: string;
      max_version: string;
      links: { href: string }[];
    }[];
  };
  assert.equal(doc.versions[0]!.id, 'v1');
  assert.equal(doc.versions[0]!.status, 'CURRENT');
  assert.equal(doc.versions[0]!.min_version, '1.1');
  assert.equal(doc.versions[0]!.max_version, '1.14');
  assert.equal(doc.versions[0]!.links[0]!.href, `${h.url}/v1/`);
});

void test('a browser asking / for HTML is sent to the dashboard', async () => {
  const res = await fetch(`${h.url}/`, {
    headers: { accept: 'text/html,application/xhtml+xml' },
    redirect: 'manual',
  });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), '/dashboard/');
});

void test('GET /v1 is public and links every collection', async () => {
  for (const path of ['/v1', '/v1/']) {
    const r = await h.call('GET', path, { token: null });
    assert.equal(r.status, 200, path);
    const doc = r.body as Record<string, { href: string; rel: string }[]>;
    for (const c of ['clustertemplates', 'clusters', 'quotas', 'certificates', 'mservices', 'stats']) {
      assert.equal(doc[c]![0]!.href, `${h.url}/v1/${c}/`);
    }
    assert.equal(r.headers.get('openstack-api-version'), 'container-infrastructure-management 1.14');
  }
});

void test('every /v1 response carries Magnum microversion headers; latest resolves to 1.14', async () => {
  const r = await h.call('GET', '/v1/clusters');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('openstack-api-minimum-version'), 'container-infrastructure-management 1.1');
  assert.equal(r.headers.get('openstack-api-maximum-version'), 'container-infrastructure-management 1.14');
  assert.equal(r.headers.get('openstack-api-version'), 'container-infrastructure-management 1.14');
  assert.equal(r.headers.get('vary'), 'OpenStack-API-Version');
  assert.match(r.headers.get('x-openstack-request-id') ?? '', /^req-[0-9a-f-]{36}$/);
});

void test('a request without the version header runs at 1.1, and the other service names are accepted', async () => {
  const none = await h.call('GET', '/v1/clusters', { version: null });
  assert.equal(none.headers.get('openstack-api-version'), 'container-infrastructure-management 1.1');
  for (const svc of ['container-infra', 'container-infrastructure', 'container-infrastructure-management']) {
    const r = await h.call('GET', '/v1/clusters', { version: `${svc} 1.9` });
    assert.equal(r.status, 200, svc);
    assert.equal(r.headers.get('openstack-api-version'), 'container-infrastructure-management 1.9');
  }
  const shared = await h.call('GET', '/v1/clusters', { version: 'compute 2.1, container-infra 1.7' });
  assert.equal(shared.headers.get('openstack-api-version'), 'container-infrastructure-management 1.7');
});

void test('an out-of-range version is 406 with Magnum microversion-unsupported body and headers', async () => {
  for (const v of [
    'container-infra 9.9',
    'container-infra 1.15',
    'container-infra 1.0',
    'container-infra 2.1',
  ]) {
    const r = await h.call('GET', '/v1/clusters', { version: v });
    assert.equal(r.status, 406, v);
    const e = (r.body as { errors: Record<string, unknown>[] }).errors[0]!;
    assert.equal(e.code, 'magnum.microversion-unsupported');
    assert.equal(e.title, 'Requested microversion is unsupported');
    assert.equal(e.max_version, '1.14');
    assert.equal(e.min_version, '1.1');
    assert.match(String(e.detail), /The supported version range is: \[1\.1, 1\.14\]/);
    assert.equal(r.headers.get('openstack-api-maximum-version'), 'container-infrastructure-management 1.14');
  }
});

void test('a malformed version header or a wrong service name is 406 saying what is expected', async () => {
  for (const v of [
    'container-infra',
    'container-infra one.two',
    'compute 1.5',
    'container-infra 1.5 extra',
    'container-infra 1',
  ]) {
    const r = await h.call('GET', '/v1/clusters', { version: v });
    assert.equal(r.status, 406, v);
    assert.match(magnumError(r).detail, /OpenStack-API-Version header/);
  }
});

void test('features are gated by microversion as in Magnum', async () => {
  const uuid = await h.createCluster('gated');
  const ng = await h.call('GET', `/v1/clusters/${uuid}/nodegroups`, { version: 'container-infra 1.8' });
  assert.equal(ng.status, 406);
  assert.match(
    magnumError(ng).detail,
    /Version 1\.8 was requested but the requested API .*nodegroups.* is not supported for this version/,
  );
  assert.equal(
    (await h.call('GET', `/v1/clusters/${uuid}/nodegroups`, { version: 'container-infra 1.9' })).status,
    200,
  );

  const resize = await h.call('POST', `/v1/clusters/${uuid}/actions/resize`, {
    version: 'container-infra 1.6',
    body: { node_count: 2 },
  });
  assert.equal(resize.status, 406);
  const upgrade17 = await h.call('POST', `/v1/clusters/${uuid}/actions/upgrade`, {
    version: 'container-infra 1.7',
    body: { cluster_template: 'k8s-v1.33' },
  });
  assert.equal(upgrade17.status, 400);
  assert.match(magnumError(upgrade17).detail, /needs 1\.8/);
  assert.equal(
    (await h.call('GET', `/v1/stats?project_id=${h.projects.demo}`, { version: 'container-infra 1.3' }))
      .status,
    406,
  );
  assert.equal((await h.as('admin', 'GET', '/v1/quotas', { version: 'container-infra 1.5' })).status, 406);
  assert.equal(
    (await h.call('PATCH', `/v1/certificates/${uuid}`, { version: 'container-infra 1.4' })).status,
    406,
  );
});

void test('zero nodes need 1.10: refused at 1.9, accepted at 1.10', async () => {
  const body = {
    cluster_template_id: 'k8s-v1.32',
    master_count: 1,
    node_count: 0,
    master_flavor_id: 'm1.medium',
    flavor_id: 'm1.medium',
    keypair: 'kp',
  };
  const r19 = await h.call('POST', '/v1/clusters', {
    version: 'container-infra 1.9',
    body: { ...body, name: 'zero-a' },
  });
  assert.equal(r19.status, 400);
  assert.match(magnumError(r19).detail, /1\.10/);
  const r110 = await h.call('POST', '/v1/clusters', {
    version: 'container-infra 1.10',
    body: { ...body, name: 'zero-b' },
  });
  assert.equal(r110.status, 202);
});

void test('stack_id is the Cluster API cluster name below 1.13, and becomes cluster_id from 1.13 on', async () => {
  const uuid = await h.createCluster('Stack.Name_1');
  const old = (await h.call('GET', `/v1/clusters/${uuid}`, { version: 'container-infra 1.12' }))
    .body as Record<string, unknown>;
  const expected = `stack-name-1-${uuid.replace(/-/g, '').slice(0, 8)}`;
  assert.equal(old.stack_id, expected);
  assert.equal('cluster_id' in old, false);
  const neu = (await h.call('GET', `/v1/clusters/${uuid}`, { version: 'container-infra 1.13' }))
    .body as Record<string, unknown>;
  assert.equal(neu.cluster_id, expected);
  assert.equal('stack_id' in neu, false);
  const list = (await h.call('GET', '/v1/clusters', { version: 'container-infra 1.12' })).body as {
    clusters: Record<string, unknown>[];
  };
  assert.equal(list.clusters.find((c) => c.uuid === uuid)!.stack_id, expected);
});

void test('missing or bad tokens get keystonemiddleware 401 so clients re-authenticate', async () => {
  for (const token of [null, 'not-a-token']) {
    const r = await h.call('GET', '/v1/clusters', { token });
    assert.equal(r.status, 401);
    assert.deepEqual((r.body as { error: { code: number; title: string } }).error.code, 401);
    assert.equal((r.body as { error: { title: string } }).error.title, 'Unauthorized');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Keystone uri=/);
  }
});

void test('unknown /v1 paths are Magnum-shaped 404s; trailing slashes are accepted', async () => {
  const r = await h.call('GET', '/v1/bays');
  assert.equal(r.status, 404);
  assert.equal(magnumError(r).status, 404);
  assert.equal((await h.call('GET', '/v1/clusters/?limit=1')).status, 200);
  assert.equal((await h.call('GET', '/v1/clustertemplates/?limit=1')).status, 200);
});
