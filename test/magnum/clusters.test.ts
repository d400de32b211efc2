import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MagnumTypes, type MagnumClusterObject, type NodeGroupObject } from '../../src/domain/index.ts';
import { Harness, magnumError } from './harness.ts';

let h: Harness;
before(async () => {
  h = await Harness.start();
});
after(async () => {
  await h.close();
});

const SHOW_COLUMNS = [
  'status',
  'health_status',
  'cluster_template_id',
  'node_addresses',
  'uuid',
  'status_reason',
  'created_at',
  'updated_at',
  'coe_version',
  'labels',
  'labels_overridden',
  'labels_skipped',
  'labels_added',
  'fixed_network',
  'fixed_subnet',
  'floating_ip_enabled',
  'keypair',
  'api_address',
  'master_addresses',
  'master_lb_enabled',
  'create_timeout',
  'node_count',
  'discovery_url',
  'docker_volume_size',
  'master_count',
  'container_version',
  'name',
  'master_flavor_id',
  'flavor_id',
  'health_status_reason',
  'project_id',
  'links',
];

async function stored(uuid: string) {
  return (await h.m.store.getByUid(MagnumTypes.Cluster, uuid)) as unknown as MagnumClusterObject;
}

void test('create answers 202 {uuid}; a read right after says CREATE_IN_PROGRESS with the full form', async () => {
  const r = await h.call('POST', '/v1/clusters', {
    body: {
      cluster_template_id: 'k8s-v1.32',
      create_timeout: 60,
      discovery_url: null,
      keypair: 'my-keypair',
      master_count: 3,
      name: 'production-kubernetes',
      node_count: 3,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
    },
  });
  assert.equal(r.status, 202);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  const { uuid } = r.body as { uuid: string };
  assert.deepEqual(Object.keys(r.body as object), ['uuid']);
  const show = await h.call('GET', `/v1/clusters/${uuid}`);
  assert.equal(show.status, 200);
  const c = show.body as Record<string, unknown>;
  for (const k of SHOW_COLUMNS) assert.ok(k in c, `missing ${k}`);
  assert.equal(c.status, 'CREATE_IN_PROGRESS');
  assert.equal(c.node_count, 3);
  assert.equal(c.master_count, 3);
  assert.equal(c.master_lb_enabled, true);
  assert.equal(c.keypair, 'my-keypair');
  const tpl = await h.template('k8s-v1.32');
  assert.equal(c.cluster_template_id, tpl.uuid);
  assert.deepEqual(c.labels, tpl.labels);
  assert.deepEqual(c.labels_added, {});
  assert.equal(c.project_id, h.projects.demo);
  assert.equal(c.user_id, h.users.sa);
  assert.equal(c.status_reason, null);
  assert.equal('faults' in c, false);
  // same by name
  assert.deepEqual((await h.call('GET', '/v1/clusters/production-kubernetes')).body, c);
  // the store holds the cluster and both default node groups, with the driver's finalizer
  const obj = await stored(uuid);
  assert.deepEqual(obj.metadata.finalizers, ['magnum.magnetar.io/driver']);
  const groups = (await h.m.store.list(MagnumTypes.NodeGroup, { namespace: h.projects.demo }))
    .items as unknown as NodeGroupObject[];
  const mine = groups.filter((g) => g.spec.clusterId === uuid);
  assert.deepEqual(mine.map((g) => [g.spec.name, g.spec.role, g.spec.nodeCount, g.spec.isDefault]).sort(), [
    ['default-master', 'master', 3, true],
    ['default-worker', 'worker', 3, true],
  ]);
});

void test('a personal account may not create clusters: 403 saying to use a service account', async () => {
  const r = await h.as('demo', 'POST', '/v1/clusters', {
    body: {
      name: 'personal',
      cluster_template_id: 'k8s-v1.32',
      master_count: 1,
      node_count: 1,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'k',
    },
  });
  assert.equal(r.status, 403);
  assert.match(magnumError(r).detail, /service account/);
  assert.equal(await h.m.store.get(MagnumTypes.Cluster, h.projects.demo, 'personal'), undefined);
});

void test('a create missing required options is accepted and already CREATE_FAILED, naming the options as typed', async () => {
  const r = await h.call('POST', '/v1/clusters', {
    body: {
      name: 'incomplete',
      cluster_template_id: 'k8s-v1.32',
      master_count: 1,
      node_count: 1,
      flavor_id: 'm1.medium',
      keypair: null,
      create_timeout: 60,
      discovery_url: null,
    },
  });
  assert.equal(r.status, 202);
  const c = (await h.call('GET', '/v1/clusters/incomplete')).body as Record<string, unknown>;
  assert.equal(c.status, 'CREATE_FAILED');
  assert.equal(c.status_reason, 'Missing required fields: --master-flavor, --keypair');
  assert.deepEqual(c.faults, {
    'default-master': 'Missing required fields: --master-flavor, --keypair',
    'default-worker': 'Missing required fields: --master-flavor, --keypair',
  });
  const obj = await stored(String(c.uuid));
  assert.deepEqual(obj.spec.missingRequiredFields, ['master_flavor_id', 'keypair']);
  assert.deepEqual(obj.status, {
    observedGeneration: 1,
    observedAction: 'CREATE',
    outcome: 'Failed',
    reason: 'Missing required fields: --master-flavor, --keypair',
  });
  // nothing was created in the cloud, so deleting it removes it at once
  assert.equal((await h.call('DELETE', '/v1/clusters/incomplete')).status, 204);
  assert.equal((await h.call('GET', '/v1/clusters/incomplete')).status, 404);
});

void test('even master counts are refused with 400', async () => {
  for (const n of [2, 4]) {
    const r = await h.call('POST', '/v1/clusters', {
      body: {
        name: `even-${n}`,
        cluster_template_id: 'k8s-v1.32',
        master_count: n,
        node_count: 1,
        master_flavor_id: 'm1.medium',
        flavor_id: 'm1.medium',
        keypair: 'k',
      },
    });
    assert.equal(r.status, 400);
    assert.match(magnumError(r).detail, /even number/);
  }
  const zero = await h.call('POST', '/v1/clusters', {
    body: { name: 'zero-masters', cluster_template_id: 'k8s-v1.32', master_count: 0 },
  });
  assert.equal(zero.status, 400);
});

void test('more than 10 workers in a node group is refused with a hint to add a node group', async () => {
  const r = await h.call('POST', '/v1/clusters', {
    body: {
      name: 'too-big',
      cluster_template_id: 'k8s-v1.32',
      master_count: 1,
      node_count: 11,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'k',
    },
  });
  assert.equal(r.status, 400);
  assert.match(magnumError(r).detail, /limit of 10 worker nodes per node group.*nodegroup create/);
  assert.equal(await h.m.store.get(MagnumTypes.Cluster, h.projects.demo, 'too-big'), undefined);
});

void test('an unknown template is 400 (not 404); a hidden one is 403 for non-admins', async () => {
  const r = await h.call('POST', '/v1/clusters', {
    body: { name: 'no-tpl', cluster_template_id: 'nope', master_count: 1, node_count: 1 },
  });
  assert.equal(r.status, 400);
  assert.match(magnumError(r).detail, /ClusterTemplate nope could not be found/);
  // an administrator hides a template of the demo project: its members see it but may not use it
  const own = await h.call('POST', '/v1/clustertemplates', {
    body: { name: 'soon-hidden', coe: 'kubernetes', image_id: 'ubuntu-22.04-kube' },
  });
  assert.equal(own.status, 201);
  const hide = await h.as('admin', 'PATCH', '/v1/clustertemplates/' + (own.body as { uuid: string }).uuid, {
    body: [{ op: 'replace', path: '/hidden', value: true }],
  });
  assert.equal(hide.status, 200);
  const r2 = await h.call('POST', '/v1/clusters', {
    body: { name: 'hid', cluster_template_id: 'soon-hidden', master_count: 1, node_count: 1 },
  });
  assert.equal(r2.status, 403);
  assert.match(magnumError(r2).detail, /hidden/);
});

void test('a second cluster with the same name in a project is a 409; other projects may reuse it', async () => {
  await h.createCluster('dup-name');
  const r = await h.call('POST', '/v1/clusters', {
    body: {
      name: 'dup-name',
      cluster_template_id: 'k8s-v1.32',
      master_count: 1,
      node_count: 1,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'k',
    },
  });
  assert.equal(r.status, 409);
  assert.match(magnumError(r).detail, /already exists/);
  await h.createCluster('dup-name', {}, 'otherSa');
  // admins see both: a name look-up across projects still finds the own-project one first,
  // and a name in two other projects is ambiguous
  await h.createCluster('shared-name', {}, 'otherSa');
  await h.createCluster('shared-name', {}, 'sa');
  const adminShow = await h.as('admin', 'GET', '/v1/clusters/shared-name');
  assert.equal(adminShow.status, 409);
  assert.match(
    magnumError(adminShow).detail,
    /Multiple clusters exist with same name shared-name: please use the cluster uuid instead/,
  );
});

void test('cluster names follow Magnum rules; a missing name is generated', async () => {
  for (const name of ['1abc', '-x', '.x', '_x', 'x'.repeat(243), 'has space']) {
    const r = await h.call('POST', '/v1/clusters', {
      body: { name, cluster_template_id: 'k8s-v1.32', master_count: 1, node_count: 1 },
    });
    assert.equal(r.status, 400, name);
    assert.match(magnumError(r).detail, /name/);
  }
  const uuid = await h.createCluster(undefined as unknown as string, { name: null });
  const c = (await h.call('GET', `/v1/clusters/${uuid}`)).body as { name: string };
  assert.match(c.name, /^[a-z]+-\d+-cluster$/);
});

void test('labels: template labels by default, only the given ones without merge_labels, merged with it; diffs against the template', async () => {
  const only = await h.createCluster('labels-only', { labels: { kube_tag: 'v1.32.6', extra: 'x' } });
  const c1 = (await h.call('GET', `/v1/clusters/${only}`)).body as Record<string, Record<string, string>>;
  assert.deepEqual(c1.labels, { kube_tag: 'v1.32.6', extra: 'x' });
  assert.deepEqual(c1.labels_overridden, { kube_tag: 'v1.32.5' });
  assert.deepEqual(c1.labels_added, { extra: 'x' });
  assert.deepEqual(c1.labels_skipped, { container_runtime: 'containerd', auto_healing_enabled: 'true' });
  const merged = await h.createCluster('labels-merged', {
    labels: { extra: 'y', flag: true },
    merge_labels: true,
  });
  const c2 = (await h.call('GET', `/v1/clusters/${merged}`)).body as Record<string, Record<string, string>>;
  assert.deepEqual(c2.labels, {
    kube_tag: 'v1.32.5',
    container_runtime: 'containerd',
    auto_healing_enabled: 'true',
    extra: 'y',
    flag: 'True',
  });
  assert.deepEqual(c2.labels_skipped, {});
});

void test('list: short form for members of the project, every project for admins, none of another project', async () => {
  const list = (await h.call('GET', '/v1/clusters')).body as { clusters: Record<string, unknown>[] };
  const one = list.clusters.find((c) => c.name === 'production-kubernetes')!;
  assert.deepEqual(Object.keys(one).sort(), [
    'cluster_id',
    'cluster_template_id',
    'create_timeout',
    'docker_volume_size',
    'flavor_id',
    'health_status',
    'keypair',
    'labels',
    'links',
    'master_count',
    'master_flavor_id',
    'name',
    'node_count',
    'status',
    'uuid',
  ]);
  const own = list.clusters.length;
  const reader = (await h.as('reader', 'GET', '/v1/clusters')).body as { clusters: unknown[] };
  assert.equal(reader.clusters.length, own);
  const other = (await h.as('otherSa', 'GET', '/v1/clusters')).body as { clusters: { name: string }[] };
  assert.deepEqual(other.clusters.map((c) => c.name).sort(), ['dup-name', 'shared-name']);
  const admin = (await h.as('admin', 'GET', '/v1/clusters')).body as { clusters: unknown[] };
  assert.equal(admin.clusters.length, own + 2);
  const prod = list.clusters.find((c) => c.name === 'production-kubernetes')!;
  assert.equal((await h.as('otherSa', 'GET', `/v1/clusters/${String(prod.uuid)}`)).status, 404);
  assert.equal((await h.as('otherSa', 'GET', '/v1/clusters/production-kubernetes')).status, 404);
  assert.equal((await h.as('admin', 'GET', `/v1/clusters/${String(prod.uuid)}`)).status, 200);
  assert.equal((await h.as('otherSa', 'DELETE', `/v1/clusters/${String(prod.uuid)}`)).status, 404);
  const detail = (await h.call('GET', '/v1/clusters/detail')).body as { clusters: Record<string, unknown>[] };
  assert.ok('labels_added' in detail.clusters[0]!);
});

void test('list pages with limit/marker and next, sorts by key, and refuses bad parameters', async () => {
  const all = ((await h.call('GET', '/v1/clusters')).body as { clusters: { uuid: string; name: string }[] })
    .clusters;
  assert.ok(all.length >= 4);
  const p1 = (await h.call('GET', '/v1/clusters/?limit=3')).body as {
    clusters: { uuid: string }[];
    next: string;
  };
  assert.deepEqual(
    p1.clusters.map((c) => c.uuid),
    all.slice(0, 3).map((c) => c.uuid),
  );
  assert.equal(p1.next, `${h.url}/v1/clusters?sort_key=id&sort_dir=asc&limit=3&marker=${all[2]!.uuid}`);
  const p2 = (await h.call('GET', p1.next.slice(h.url.length))).body as { clusters: { uuid: string }[] };
  assert.deepEqual(
    p2.clusters.map((c) => c.uuid),
    all.slice(3, 6).map((c) => c.uuid),
  );
  const desc = (await h.call('GET', '/v1/clusters?sort_dir=desc')).body as { clusters: { uuid: string }[] };
  assert.deepEqual(
    desc.clusters.map((c) => c.uuid),
    all.map((c) => c.uuid).reverse(),
  );
  const byName = (await h.call('GET', '/v1/clusters?sort_key=name&limit=2')).body as {
    clusters: { name: string }[];
    next: string;
  };
  const sortedNames = all.map((c) => c.name).sort();
  assert.deepEqual(
    byName.clusters.map((c) => c.name),
    sortedNames.slice(0, 2),
  );
  assert.match(byName.next, /sort_key=name&sort_dir=asc&limit=2&marker=/);
  const unknownMarker = await h.call('GET', '/v1/clusters?marker=00000000-0000-4000-8000-000000000000');
  assert.equal(unknownMarker.status, 404);
  assert.equal((await h.call('GET', '/v1/clusters?marker=abc')).status, 400);
  assert.equal((await h.call('GET', '/v1/clusters?limit=0')).status, 400);
  assert.equal((await h.call('GET', '/v1/clusters?sort_key=nope')).status, 400);
});

void test('PATCH node_count needs a complete cluster; then it resizes default-worker and reads UPDATE_IN_PROGRESS at once', async () => {
  const uuid = await h.createCluster('patch-me');
  const early = await h.call('PATCH', `/v1/clusters/${uuid}`, {
    body: [{ op: 'replace', path: '/node_count', value: 4 }],
  });
  assert.equal(early.status, 400);
  assert.match(magnumError(early).detail, /status is "CREATE_IN_PROGRESS" is not supported/);
  await h.driverFinishes(uuid);
  assert.equal(
    ((await h.call('GET', `/v1/clusters/${uuid}`)).body as { status: string }).status,
    'CREATE_COMPLETE',
  );
  const r = await h.call('PATCH', `/v1/clusters/patch-me`, {
    body: [{ op: 'replace', path: '/node_count', value: 4 }],
  });
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { uuid });
  const c = (await h.call('GET', `/v1/clusters/${uuid}`)).body as {
    status: string;
    node_count: number;
    updated_at: string;
  };
  assert.equal(c.status, 'UPDATE_IN_PROGRESS');
  assert.equal(c.node_count, 4);
  assert.match(c.updated_at, /\+00:00$/);
  const ng = (await h.call('GET', `/v1/clusters/${uuid}/nodegroups/default-worker`)).body as {
    status: string;
    node_count: number;
  };
  assert.equal(ng.status, 'UPDATE_IN_PROGRESS');
  assert.equal(ng.node_count, 4);
  const tooMany = await h.call('PATCH', `/v1/clusters/${uuid}`, {
    body: [{ op: 'replace', path: '/node_count', value: 12 }],
  });
  assert.equal(tooMany.status, 400);
});

void test('PATCH refuses other properties and internal attributes', async () => {
  const uuid = await h.createCluster('patch-refusals');
  const cases: [unknown, RegExp][] = [
    [[{ op: 'replace', path: '/name', value: 'x' }], /cannot change cluster property\(ies\) name/],
    [
      [{ op: 'replace', path: '/labels', value: "{'a': 'b'}" }],
      /cannot change cluster property\(ies\) labels/,
    ],
    [
      [{ op: 'replace', path: '/cluster_template_id', value: 'k8s-v1.33' }],
      /cannot change cluster property\(ies\) cluster_template_id/,
    ],
    [[{ op: 'remove', path: '/cluster_template_id' }], /mandatory attribute/],
    [[{ op: 'replace', path: '/api_address', value: 'x' }], /internal attribute/],
    [[{ op: 'replace', path: '/stack_id', value: 'x' }], /internal attribute/],
    [[{ op: 'replace', path: '/node_addresses', value: 'x' }], /internal attribute/],
    [[{ op: 'replace', path: '/health_status', value: 'SICK' }], /health_status/],
    [[{ op: 'replace', path: '/node_count', value: -1 }], /node_count/],
  ];
  for (const [body, re] of cases) {
    const r = await h.call('PATCH', `/v1/clusters/${uuid}`, { body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(magnumError(r).detail, re);
  }
  assert.equal(
    (
      await h.as('reader', 'PATCH', `/v1/clusters/${uuid}`, {
        body: [{ op: 'replace', path: '/node_count', value: 2 }],
      })
    ).status,
    403,
  );
});

void test('PATCH health_status writes the healer override without moving the status', async () => {
  const uuid = await h.createCluster('healthy');
  await h.driverFinishes(uuid);
  const r = await h.call('PATCH', `/v1/clusters/${uuid}`, {
    body: [
      { op: 'replace', path: '/health_status', value: 'UNHEALTHY' },
      { op: 'replace', path: '/health_status_reason', value: "{'api': 'ok', 'node-0.Ready': 'False'}" },
    ],
  });
  assert.equal(r.status, 202);
  const c = (await h.call('GET', `/v1/clusters/${uuid}`)).body as Record<string, unknown>;
  assert.equal(c.status, 'CREATE_COMPLETE');
  assert.equal(c.health_status, 'UNHEALTHY');
  assert.deepEqual(c.health_status_reason, { api: 'ok', 'node-0.Ready': 'False' });
  const obj = await stored(uuid);
  assert.equal(obj.spec.healthStatusOverride, 'UNHEALTHY');
  const list = (await h.call('GET', '/v1/clusters')).body as {
    clusters: { uuid: string; health_status: string }[];
  };
  assert.equal(list.clusters.find((x) => x.uuid === uuid)!.health_status, 'UNHEALTHY');
});

void test('quota: the default limit of 20 and a project quota row refuse creates with 403', async () => {
  const q = await h.as('admin', 'POST', '/v1/quotas', {
    body: { project_id: h.projects.other, resource: 'Cluster', hard_limit: 2 },
  });
  assert.equal(q.status, 201);
  // other already has dup-name and shared-name
  const r = await h.as('otherSa', 'POST', '/v1/clusters', {
    body: {
      name: 'third',
      cluster_template_id: 'k8s-v1.32',
      master_count: 1,
      node_count: 1,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'k',
    },
  });
  assert.equal(r.status, 403);
  assert.match(
    magnumError(r).detail,
    /Resource limit exceeded: You have reached the maximum clusters per project, 2/,
  );
});

void test('delete answers 204; the cluster then reads DELETE_IN_PROGRESS with its node groups until the driver is done', async () => {
  const uuid = await h.createCluster('delete-me');
  const r = await h.call('DELETE', '/v1/clusters/delete-me', {
    headers: { 'content-type': 'application/octet-stream', accept: '*/*' },
  });
  assert.equal(r.status, 204);
  assert.equal(r.text, '');
  const c = (await h.call('GET', `/v1/clusters/${uuid}`)).body as { status: string };
  assert.equal(c.status, 'DELETE_IN_PROGRESS');
  const ngs = (await h.call('GET', `/v1/clusters/${uuid}/nodegroups`)).body as {
    nodegroups: { status: string }[];
  };
  assert.deepEqual(
    ngs.nodegroups.map((g) => g.status),
    ['DELETE_IN_PROGRESS', 'DELETE_IN_PROGRESS'],
  );
  assert.equal((await h.call('DELETE', `/v1/clusters/${uuid}`)).status, 204);
  assert.equal((await h.as('reader', 'DELETE', `/v1/clusters/${uuid}`)).status, 403);
  assert.equal((await h.call('DELETE', '/v1/clusters/never-existed')).status, 404);
});

void test('a control-plane load balancer is always created: master_lb_enabled false is stored as true, and 3 masters are accepted', async () => {
  const uuid = await h.createCluster('lb-forced', { master_lb_enabled: false, master_count: 3 });
  const c = (await h.call('GET', `/v1/clusters/${uuid}`)).body as {
    master_lb_enabled: boolean;
    master_count: number;
  };
  assert.equal(c.master_lb_enabled, true);
  assert.equal(c.master_count, 3);
  const t = await h.call('POST', '/v1/clustertemplates', {
    body: { name: 'no-lb', coe: 'kubernetes', image_id: 'ubuntu-22.04-kube', master_lb_enabled: false },
  });
  assert.equal((t.body as { master_lb_enabled: boolean }).master_lb_enabled, true);
});

void test('a devicemapper template needs a docker volume of at least 3 GB on the cluster too', async () => {
  const t = await h.call('POST', '/v1/clustertemplates', {
    body: {
      name: 'dm',
      coe: 'kubernetes',
      image_id: 'ubuntu-22.04-kube',
      docker_storage_driver: 'devicemapper',
      docker_volume_size: 5,
      labels: { kube_tag: 'v1.32.5' },
    },
  });
  assert.equal(t.status, 201);
  const r = await h.call('POST', '/v1/clusters', {
    body: {
      name: 'dm-small',
      cluster_template_id: 'dm',
      master_count: 1,
      node_count: 1,
      master_flavor_id: 'm1.medium',
      flavor_id: 'm1.medium',
      keypair: 'k',
      docker_volume_size: 2,
    },
  });
  assert.equal(r.status, 400);
  assert.match(magnumError(r).detail, /minimum value 3GB for devicemapper/);
  assert.equal(
    (
      await h.call('POST', '/v1/clusters', {
        body: {
          name: 'dm-ok',
          cluster_template_id: 'dm',
          master_count: 1,
          node_count: 1,
          master_flavor_id: 'm1.medium',
          flavor_id: 'm1.medium',
          keypair: 'k',
        },
      })
    ).status,
    202,
  );
});

void test("admins read other projects' clusters and node groups but change node groups only in their own project", async () => {
  const uuid = await h.createCluster('admin-reads');
  assert.equal((await h.as('admin', 'GET', `/v1/clusters/${uuid}/nodegroups/default-worker`)).status, 200);
  assert.equal((await h.as('admin', 'DELETE', `/v1/clusters/${uuid}/nodegroups/default-worker`)).status, 404);
  assert.equal(
    (
      await h.as('admin', 'PATCH', `/v1/clusters/${uuid}`, {
        body: [{ op: 'replace', path: '/health_status', value: 'HEALTHY' }],
      })
    ).status,
    202,
  );
  assert.equal((await h.as('admin', 'DELETE', `/v1/clusters/${uuid}`)).status, 204);
});
