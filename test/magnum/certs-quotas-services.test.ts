import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAGNUM_API_VERSION } from '../../src/domain/index.ts';
import { Harness, magnumError } from './harness.ts';

let h: Harness;
let cluster: string;
let work: string;
before(async () => {
  h = await Harness.start();
  cluster = await h.createCluster('certs');
  work = mkdtempSync(join(tmpdir(), 'magnetar-csr-'));
});
after(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});

/** A CSR as `openstack coe cluster config` makes it: RSA 2048, CN=admin, O=system:masters. */
function csr(): string {
  const key = join(work, 'key.pem');
  const out = join(work, 'csr.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-subj',
      '/CN=admin/O=system:masters',
      '-out',
      out,
    ],
    {
      stdio: 'ignore',
    },
  );
  return readFileSync(out, 'utf8');
}

void test('the cluster creator gets the CA and a signed client certificate that verifies against it', async () => {
  const ca = await h.call('GET', `/v1/certificates/${cluster}`);
  assert.equal(ca.status, 200, ca.text);
  const body = ca.body as { cluster_uuid: string; pem: string; links: unknown[] };
  assert.equal(body.cluster_uuid, cluster);
  assert.match(body.pem, /^-----BEGIN CERTIFICATE-----/);
  assert.equal(body.links.length, 2);
  const byName = (await h.call('GET', '/v1/certificates/certs')).body as { pem: string };
  assert.equal(byName.pem, body.pem);
  const request = csr();
  const signed = await h.call('POST', '/v1/certificates', { body: { cluster_uuid: cluster, csr: request } });
  assert.equal(signed.status, 201, signed.text);
  const s = signed.body as { cluster_uuid: string; csr: string; pem: string };
  assert.equal(s.csr, request);
  assert.match(s.pem, /^-----BEGIN CERTIFICATE-----[\s\S]*-----END CERTIFICATE-----$/);
  writeFileSync(join(work, 'ca.pem'), body.pem);
  writeFileSync(join(work, 'cert.pem'), s.pem + '\n');
  const verify = execFileSync(
    'openssl',
    ['verify', '-CAfile', join(work, 'ca.pem'), join(work, 'cert.pem')],
    { encoding: 'utf8' },
  );
  assert.match(verify, /OK/);
  const subject = execFileSync('openssl', ['x509', '-noout', '-subject', '-in', join(work, 'cert.pem')], {
    encoding: 'utf8',
  });
  assert.match(subject, /O ?= ?system:masters/);
});

void test('only the creator or an admin may fetch the CA or sign: another member and a reader get 403', async () => {
  for (const who of ['demo', 'reader'] as const) {
    const r = await h.as(who, 'GET', `/v1/certificates/${cluster}`);
    assert.equal(r.status, 403, who);
    assert.match(magnumError(r).detail, /only the user who created cluster certs/);
  }
  const sign = await h.as('demo', 'POST', '/v1/certificates', {
    body: { cluster_uuid: cluster, csr: csr() },
  });
  assert.equal(sign.status, 403);
  assert.equal((await h.as('otherSa', 'GET', `/v1/certificates/${cluster}`)).status, 404);
  // certificates have no all-projects rule: an admin of another project does not see the cluster
  assert.equal((await h.as('admin', 'GET', `/v1/certificates/${cluster}`)).status, 404);
});

void test('signing for an unknown cluster is 400, a bad CSR is 400, missing fields are 400', async () => {
  const unknown = await h.call('POST', '/v1/certificates', { body: { cluster_uuid: 'nope', csr: csr() } });
  assert.equal(unknown.status, 400);
  assert.match(magnumError(unknown).detail, /Cluster nope could not be found/);
  const bad = await h.call('POST', '/v1/certificates', {
    body: {
      cluster_uuid: cluster,
      csr: '-----BEGIN CERTIFICATE REQUEST-----\ngarbage\n-----END CERTIFICATE REQUEST-----',
    },
  });
  assert.equal(bad.status, 400);
  const missing = await h.call('POST', '/v1/certificates', { body: { cluster_uuid: cluster } });
  assert.equal(missing.status, 400);
  assert.match(magnumError(missing).detail, /csr/);
});

void test('CA rotation needs a complete cluster, then answers 202 and the CA changes', async () => {
  const early = await h.call('PATCH', `/v1/certificates/${cluster}`, {
    headers: { 'content-type': 'application/octet-stream', accept: '*/*' },
  });
  assert.equal(early.status, 400);
  assert.match(magnumError(early).detail, /CREATE_IN_PROGRESS/);
  await h.driverFinishes(cluster);
  const before = ((await h.call('GET', `/v1/certificates/${cluster}`)).body as { pem: string }).pem;
  const r = await h.call('PATCH', `/v1/certificates/${cluster}`, {
    headers: { 'content-type': 'application/octet-stream', accept: '*/*' },
  });
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { uuid: cluster });
  const afterPem = ((await h.call('GET', `/v1/certificates/${cluster}`)).body as { pem: string }).pem;
  assert.notEqual(afterPem, before);
  assert.equal(
    ((await h.call('GET', `/v1/clusters/${cluster}`)).body as { status: string }).status,
    'UPDATE_IN_PROGRESS',
  );
});

void test('quotas: admins create (201), update (202), list and delete (204); members read their own project', async () => {
  const list0 = await h.call('GET', '/v1/quotas');
  assert.equal(list0.status, 403);
  const own = await h.call('GET', `/v1/quotas/${h.projects.demo}/Cluster`);
  assert.equal(own.status, 200);
  assert.deepEqual(own.body, {
    project_id: h.projects.demo,
    resource: 'Cluster',
    hard_limit: 20,
    created_at: null,
    updated_at: null,
  });
  const foreign = await h.call('GET', `/v1/quotas/${h.projects.other}/Cluster`);
  assert.equal(foreign.status, 403);
  assert.equal(
    (
      await h.call('POST', '/v1/quotas', {
        body: { project_id: h.projects.demo, resource: 'Cluster', hard_limit: 5 },
      })
    ).status,
    403,
  );

  const c = await h.as('admin', 'POST', '/v1/quotas', {
    body: { project_id: h.projects.demo, resource: 'Cluster', hard_limit: 10 },
  });
  assert.equal(c.status, 201);
  const q = c.body as Record<string, unknown>;
  assert.deepEqual(Object.keys(q).sort(), [
    'created_at',
    'hard_limit',
    'id',
    'project_id',
    'resource',
    'updated_at',
  ]);
  assert.equal(q.hard_limit, 10);
  const dup = await h.as('admin', 'POST', '/v1/quotas', {
    body: { project_id: h.projects.demo, resource: 'Cluster', hard_limit: 10 },
  });
  assert.equal(dup.status, 409);
  assert.match(
    magnumError(dup).detail,
    new RegExp(`Quota for project ${h.projects.demo} already exists for resource Cluster`),
  );
  const defaulted = await h.as('admin', 'POST', '/v1/quotas', {
    body: { project_id: h.projects.other, resource: 'Cluster' },
  });
  assert.equal((defaulted.body as { hard_limit: number }).hard_limit, 1);
  assert.equal(
    (
      await h.as('admin', 'POST', '/v1/quotas', {
        body: { project_id: 'no-such-project', resource: 'Cluster', hard_limit: 1 },
      })
    ).status,
    404,
  );
  assert.equal(
    (
      await h.as('admin', 'POST', '/v1/quotas', {
        body: { project_id: h.projects.admin, resource: 'Volume', hard_limit: 1 },
      })
    ).status,
    400,
  );
  assert.equal(
    (
      await h.as('admin', 'POST', '/v1/quotas', {
        body: { project_id: h.projects.admin, resource: 'Cluster', hard_limit: -1 },
      })
    ).status,
    400,
  );
  assert.equal(
    (await h.as('admin', 'POST', '/v1/quotas', { body: { resource: 'Cluster', hard_limit: 1 } })).status,
    400,
  );

  const u = await h.as('admin', 'PATCH', `/v1/quotas/${h.projects.demo}/Cluster`, {
    body: { project_id: h.projects.demo, resource: 'Cluster', hard_limit: 20 },
  });
  assert.equal(u.status, 202);
  assert.equal((u.body as { hard_limit: number }).hard_limit, 20);
  assert.equal(
    ((await h.call('GET', `/v1/quotas/${h.projects.demo}/Cluster`)).body as { hard_limit: number })
      .hard_limit,
    20,
  );
  assert.equal(
    (await h.as('admin', 'PATCH', `/v1/quotas/${h.projects.admin}/Cluster`, { body: { hard_limit: 3 } }))
      .status,
    404,
  );

  const mine = (await h.as('admin', 'GET', '/v1/quotas')).body as { quotas: unknown[] };
  assert.equal(mine.quotas.length, 0);
  const all = (await h.as('admin', 'GET', '/v1/quotas?all_tenants=True')).body as {
    quotas: { project_id: string }[];
  };
  assert.deepEqual(all.quotas.map((x) => x.project_id).sort(), [h.projects.demo, h.projects.other].sort());
  const page = (await h.as('admin', 'GET', '/v1/quotas?all_tenants=True&limit=1')).body as {
    quotas: { id: number }[];
    next: string;
  };
  assert.equal(page.quotas.length, 1);
  assert.match(page.next, /all_tenants=True&limit=1&marker=\d+$/);

  assert.equal((await h.as('admin', 'DELETE', `/v1/quotas/${h.projects.other}/Cluster`)).status, 204);
  const gone = await h.as('admin', 'DELETE', `/v1/quotas/${h.projects.other}/Cluster`);
  assert.equal(gone.status, 404);
  assert.match(magnumError(gone).detail, /^Quota could not be found/);
});

void test("stats count clusters and all nodes (masters included); other projects are the admin's business", async () => {
  const s = await h.call('GET', `/v1/stats?project_id=${h.projects.demo}`);
  assert.equal(s.status, 200);
  assert.deepEqual(s.body, { clusters: 1, nodes: 6 });
  assert.deepEqual((await h.call('GET', '/v1/stats')).body, { clusters: 1, nodes: 6 });
  assert.equal((await h.call('GET', `/v1/stats?project_id=${h.projects.other}`)).status, 403);
  assert.deepEqual((await h.as('admin', 'GET', `/v1/stats?project_id=${h.projects.other}`)).body, {
    clusters: 0,
    nodes: 0,
  });
  assert.deepEqual((await h.as('admin', 'GET', '/v1/stats')).body, { clusters: 1, nodes: 6 });
  assert.equal((await h.call('GET', '/v1/stats?type=pods')).status, 400);
});

void test('mservices lists heartbeats to admins, up when seen within 180 s', async () => {
  const now = Date.now();
  for (const [id, host, ageS] of [
    [1, 'ctrl-a', 10],
    [2, 'ctrl-b', 600],
  ] as const) {
    await h.m.store.create({
      apiVersion: MAGNUM_API_VERSION,
      kind: 'MService',
      metadata: { name: `${host}.magnum-conductor`, namespace: '' },
      spec: { id, host, binary: 'magnum-conductor', disabled: false, disabledReason: null },
      status: { reportCount: 7, lastSeen: new Date(now - ageS * 1000).toISOString() },
    });
  }
  assert.equal((await h.call('GET', '/v1/mservices')).status, 403);
  const r = await h.as('admin', 'GET', '/v1/mservices');
  assert.equal(r.status, 200);
  const list = (r.body as { mservices: Record<string, unknown>[] }).mservices;
  assert.deepEqual(
    list.map((s) => [s.id, s.host, s.binary, s.state, s.report_count, s.disabled, s.disabled_reason]),
    [
      [1, 'ctrl-a', 'magnum-conductor', 'up', 7, false, null],
      [2, 'ctrl-b', 'magnum-conductor', 'down', 7, false, null],
    ],
  );
});
