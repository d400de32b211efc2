import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MagnumTypes, type MagnumClusterObject } from '../../src/domain/index.ts';
import { Harness, magnumError } from './harness.ts';

let h: Harness;
let ready: string;
before(async () => {
  h = await Harness.start();
  ready = await h.createCluster('production-kubernetes', {
    labels: { kube_tag: 'v1.32.5', zone: 'a' },
    merge_labels: true,
  });
  await h.driverFinishes(ready);
});
after(async () => {
  await h.close();
});

const NG_COLUMNS = [
  'uuid',
  'name',
  'cluster_id',
  'project_id',
  'docker_volume_size',
  'labels',
  'labels_overridden',
  'labels_skipped',
  'labels_added',
  'flavor_id',
  'image_id',
  'node_addresses',
  'node_count',
  'role',
  'max_node_count',
  'min_node_count',
  'is_default',
  'stack_id',
  'status',
  'status_reason',
  'id',
  'version',
  'merge_labels',
  'links',
  'created_at',
  'updated_at',
];

void test('nodegroup create is refused with 409 while the cluster has no API address, as Magnum does', async () => {
  const fresh = await h.createCluster('not-ready');
  const r = await h.call('POST', `/v1/clusters/${fresh}/nodegroups/`, {
    body: { name: 'worker-group2', node_count: 5, max_node_count: null, min_node_count: 0, role: 'worker' },
  });
  assert.equal(r.status, 409);
  assert.match(magnumError(r).detail, /no API address yet/);
});

void test('nodegroup create answers 202 with the full object; labels inherit, merge or replace the cluster labels', async () => {
  const r = await h.call('POST', '/v1/clusters/production-kubernetes/nodegroups/', {
    body: { name: 'worker-group2', node_count: 5, max_node_count: null, min_node_count: 0, role: 'worker' },
  });
  assert.equal(r.status, 202, r.text);
  const g = r.body as Record<string, unknown>;
  for (const k of NG_COLUMNS) assert.ok(k in g, `missing ${k}`);
  assert.equal(g.status, 'CREATE_IN_PROGRESS');
  assert.equal(g.is_default, false);
  assert.equal(g.cluster_id, ready);
  assert.equal(g.flavor_id, 'm1.medium');
  assert.equal(g.image_id, 'ubuntu-22.04-kube');
  const cluster = (await h.call('GET', `/v1/clusters/${ready}`)).body as {
    labels: Record<string, string>;
    status: string;
    node_count: number;
  };
  assert.deepEqual(g.labels, cluster.labels);
  assert.equal(cluster.status, 'UPDATE_IN_PROGRESS');
  assert.equal(cluster.node_count, 8);

  const az = await h.call('POST', `/v1/clusters/${ready}/nodegroups/`, {
    body: {
      name: 'worker-group-az2',
      node_count: 2,
      max_node_count: null,
      min_node_count: 0,
      role: 'worker',
      labels: { availability_zone: 'AZ-2' },
      flavor_id: 'm1.large',
    },
  });
  assert.equal(az.status, 202);
  const azg = az.body as Record<string, Record<string, string> | string>;
  assert.deepEqual(azg.labels, { availability_zone: 'AZ-2' });
  assert.equal(azg.flavor_id, 'm1.large');
  assert.deepEqual(azg.labels_added, { availability_zone: 'AZ-2' });
  assert.equal((azg.labels_skipped as Record<string, string>).kube_tag, 'v1.32.5');

  const merged = await h.call('POST', `/v1/clusters/${ready}/nodegroups/`, {
    body: {
      name: 'merged',
      node_count: 1,
      min_node_count: 0,
      max_node_count: null,
      role: 'worker',
      labels: { availability_zone: 'AZ-1' },
      merge_labels: true,
    },
  });
  assert.deepEqual((merged.body as { labels: Record<string, string> }).labels, {
    ...cluster.labels,
    availability_zone: 'AZ-1',
  });
});

void test('nodegroup create refuses duplicates, masters, bad counts, oversized groups and bad names', async () => {
  const base = { node_count: 1, min_node_count: 0, max_node_count: null, role: 'worker' };
  const cases: [Record<string, unknown>, number, RegExp][] = [
    [
      { ...base, name: 'worker-group2' },
      409,
      /A node group with name worker-group2 already exists in the cluster production-kubernetes/,
    ],
    [{ ...base, name: 'default-worker' }, 409, /already exists/],
    [
      { ...base, name: 'masters', role: 'master' },
      400,
      /Creating master nodegroups is currently not supported/,
    ],
    [
      { ...base, name: 'bounds', node_count: 5, max_node_count: 3 },
      409,
      /max_node_count for bounds is invalid \(node_count \(5\) should be less or equal to max_node_count \(3\)\)/,
    ],
    [
      { ...base, name: 'bounds', min_node_count: 4, max_node_count: 3, node_count: 3 },
      409,
      /min_node_count \(4\) should be less or equal to max_node_count \(3\)/,
    ],
    [
      { ...base, name: 'bounds', min_node_count: 2, node_count: 1 },
      409,
      /min_node_count \(2\) should be less or equal to node_count \(1\)/,
    ],
    [{ ...base, name: 'huge', node_count: 11 }, 400, /limit of 10 worker nodes per node group/],
    [
      { ...base, name: 'huge-max', node_count: 2, max_node_count: 20 },
      400,
      /max_node_count 20 .* exceeds the limit of 10/,
    ],
    [{ ...base, name: 'Bad_Name' }, 400, /Invalid node group name/],
    [{ ...base }, 400, /name/],
    [{ ...base, name: 'x', node_labels: { a: 'b' } }, 202, /.*/],
  ];
  for (const [body, status, re] of cases) {
    const r = await h.call('POST', `/v1/clusters/${ready}/nodegroups`, { body });
    assert.equal(r.status, status, JSON.stringify(body));
    if (status !== 202) assert.match(magnumError(r).detail, re, JSON.stringify(body));
  }
  const old = await h.call('POST', `/v1/clusters/${ready}/nodegroups`, {
    body: { ...base, name: 'y', node_labels: { a: 'b' } },
    version: 'container-infra 1.13',
  });
  assert.equal(old.status, 400);
});

void test('nodegroup list is the short form with a role filter; show by name or uuid is the full form', async () => {
  const all = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/`)).body as {
    nodegroups: Record<string, unknown>[];
  };
  assert.deepEqual(
    all.nodegroups.slice(0, 2).map((g) => g.name),
    ['default-master', 'default-worker'],
  );
  assert.deepEqual(Object.keys(all.nodegroups[0]!).sort(), [
    'flavor_id',
    'image_id',
    'is_default',
    'links',
    'name',
    'node_count',
    'role',
    'stack_id',
    'status',
    'uuid',
  ]);
  const workers = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/?role=worker`)).body as {
    nodegroups: { role: string }[];
  };
  assert.ok(workers.nodegroups.length >= 3 && workers.nodegroups.every((g) => g.role === 'worker'));
  const masters = (await h.call('GET', `/v1/clusters/production-kubernetes/nodegroups?role=master`)).body as {
    nodegroups: unknown[];
  };
  assert.equal(masters.nodegroups.length, 1);
  const page = (
    await h.call('GET', `/v1/clusters/${ready}/nodegroups/?limit=2&sort_key=name&sort_dir=asc&role=worker`)
  ).body as {
    nodegroups: { name: string }[];
    next: string;
  };
  assert.equal(page.nodegroups.length, 2);
  assert.match(
    page.next,
    new RegExp(`/v1/clusters/${ready}/nodegroups\\?sort_key=name&sort_dir=asc&role=worker&limit=2&marker=`),
  );
  const byName = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/worker-group2`)).body as Record<
    string,
    unknown
  >;
  const byUuid = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/${String(byName.uuid)}`))
    .body as Record<string, unknown>;
  assert.deepEqual(byName, byUuid);
  assert.equal(byName.node_count, 5);
  assert.deepEqual(byName.links, [
    { href: `${h.url}/v1/clusters/${ready}/nodegroups/${String(byName.uuid)}`, rel: 'self' },
    { href: `${h.url}/clusters/${ready}/nodegroups/${String(byName.uuid)}`, rel: 'bookmark' },
  ]);
  assert.equal((await h.call('GET', `/v1/clusters/${ready}/nodegroups/nope`)).status, 404);
  assert.equal((await h.as('otherSa', 'GET', `/v1/clusters/${ready}/nodegroups`)).status, 404);
  assert.equal((await h.as('admin', 'GET', `/v1/clusters/${ready}/nodegroups`)).status, 200);
  assert.equal((await h.as('reader', 'GET', `/v1/clusters/${ready}/nodegroups`)).status, 200);
  assert.equal(
    (await h.as('reader', 'POST', `/v1/clusters/${ready}/nodegroups`, { body: { name: 'r' } })).status,
    403,
  );
});

void test('nodegroup PATCH changes min/max only; other paths are internal; 202 with the object', async () => {
  await h.driverFinishes(ready);
  const r = await h.call('PATCH', `/v1/clusters/${ready}/nodegroups/worker-group2`, {
    body: [{ op: 'replace', path: '/max_node_count', value: 10 }],
  });
  assert.equal(r.status, 202, r.text);
  assert.equal((r.body as { max_node_count: number }).max_node_count, 10);
  assert.equal((r.body as { status: string }).status, 'UPDATE_IN_PROGRESS');
  for (const [body, status, re] of [
    [[{ op: 'replace', path: '/node_count', value: 3 }], 400, /'\/node_count' is an internal attribute/],
    [[{ op: 'replace', path: '/labels', value: "{'a': 'b'}" }], 400, /internal attribute/],
    [[{ op: 'replace', path: '/flavor_id', value: 'm1.large' }], 400, /internal attribute/],
    [
      [{ op: 'replace', path: '/min_node_count', value: 6 }],
      409,
      /min_node_count \(6\) should be less or equal to node_count \(5\)/,
    ],
    [[{ op: 'replace', path: '/max_node_count', value: 11 }], 400, /exceeds the limit of 10/],
    [[{ op: 'replace', path: '/max_node_count', value: 'x' }], 400, /max_node_count/],
  ] as [unknown, number, RegExp][]) {
    const x = await h.call('PATCH', `/v1/clusters/${ready}/nodegroups/worker-group2`, { body });
    assert.equal(x.status, status, JSON.stringify(body));
    assert.match(magnumError(x).detail, re);
  }
  const taints = await h.call('PATCH', `/v1/clusters/${ready}/nodegroups/worker-group2`, {
    body: [
      { op: 'replace', path: '/node_taints', value: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] },
    ],
  });
  assert.equal(taints.status, 202, taints.text);
  assert.deepEqual((taints.body as { node_taints: unknown }).node_taints, [
    { key: 'gpu', value: 'true', effect: 'NoSchedule' },
  ]);
});

void test('resize targets default-worker or the named group, and both read UPDATE_IN_PROGRESS right after the 202', async () => {
  await h.driverFinishes(ready);
  const r = await h.call('POST', `/v1/clusters/${ready}/actions/resize`, {
    body: { node_count: 7, nodegroup: 'worker-group2' },
  });
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { uuid: ready });
  const g = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/worker-group2`)).body as {
    node_count: number;
    status: string;
  };
  assert.deepEqual([g.node_count, g.status], [7, 'UPDATE_IN_PROGRESS']);
  assert.equal(
    ((await h.call('GET', `/v1/clusters/${ready}`)).body as { status: string }).status,
    'UPDATE_IN_PROGRESS',
  );
  // resize is also accepted while an update is in progress (Magnum allows it for the autoscaler)
  const r2 = await h.call('POST', `/v1/clusters/${ready}/actions/resize`, {
    body: { node_count: 2, nodes_to_remove: ['srv-1', 'srv-2'] },
  });
  assert.equal(r2.status, 202);
  const w = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/default-worker`)).body as {
    node_count: number;
    uuid: string;
  };
  assert.equal(w.node_count, 2);
  const obj = (await h.m.store.getByUid(MagnumTypes.Cluster, ready)) as unknown as MagnumClusterObject;
  assert.deepEqual(obj.spec.nodesToRemove, { [w.uuid]: ['srv-1', 'srv-2'] });
  assert.equal(obj.spec.action, 'UPDATE');
});

void test('resize refuses out-of-range, oversized, even-master and unknown targets', async () => {
  for (const [body, status, re] of [
    [
      { node_count: 11, nodegroup: 'worker-group2' },
      400,
      /Resizing worker-group2 outside the allowed range: min_node_count = 0, max_node_count = 10/,
    ],
    [{ node_count: 12 }, 400, /limit of 10 worker nodes per node group/],
    [{ node_count: 2, nodegroup: 'default-master' }, 400, /even number/],
    [{ node_count: 2, nodegroup: 'nope' }, 404, /Nodegroup nope could not be found/],
    [{ nodegroup: 'default-worker' }, 400, /node_count/],
    [{ node_count: -1 }, 400, /node_count/],
  ] as [Record<string, unknown>, number, RegExp][]) {
    const r = await h.call('POST', `/v1/clusters/${ready}/actions/resize`, { body });
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(magnumError(r).detail, re);
  }
  const fresh = await h.createCluster('resize-early');
  const early = await h.call('POST', `/v1/clusters/${fresh}/actions/resize`, { body: { node_count: 2 } });
  assert.equal(early.status, 400);
  assert.match(magnumError(early).detail, /CREATE_IN_PROGRESS/);
  // admins have no all-projects rule for resize
  assert.equal(
    (await h.as('admin', 'POST', `/v1/clusters/${ready}/actions/resize`, { body: { node_count: 2 } })).status,
    404,
  );
});

void test('master resize to another odd count is accepted', async () => {
  await h.driverFinishes(ready);
  const r = await h.call('POST', `/v1/clusters/${ready}/actions/resize`, {
    body: { node_count: 5, nodegroup: 'default-master' },
  });
  assert.equal(r.status, 202);
  assert.equal(
    ((await h.call('GET', `/v1/clusters/${ready}`)).body as { master_count: number }).master_count,
    5,
  );
});

void test('upgrade refuses skipping a minor, going backwards, a busy cluster and a foreign template for a non-default group', async () => {
  await h.driverFinishes(ready);
  const t = (
    await h.call('POST', '/v1/clustertemplates', {
      body: {
        name: 'k8s-v1.34',
        coe: 'kubernetes',
        image_id: 'ubuntu-22.04-kube',
        labels: { kube_tag: 'v1.34.0' },
      },
    })
  ).body as { uuid: string };
  const skip = await h.call('POST', `/v1/clusters/${ready}/actions/upgrade`, {
    body: { cluster_template: t.uuid, max_batch_size: 1 },
  });
  assert.equal(skip.status, 400);
  assert.match(
    magnumError(skip).detail,
    /skips a minor version; upgrade one minor version at a time \(next: v1\.33\.x\)/,
  );
  const back = await h.call('POST', `/v1/clusters/${ready}/actions/upgrade`, {
    body: { cluster_template: 'k8s-v1.31', max_batch_size: 1 },
  });
  assert.equal(back.status, 400);
  assert.match(magnumError(back).detail, /backwards/);
  const noTag = await h.call('POST', '/v1/clustertemplates', {
    body: { name: 'no-tag', coe: 'kubernetes', image_id: 'ubuntu-22.04-kube' },
  });
  assert.equal(noTag.status, 201);
  const r3 = await h.call('POST', `/v1/clusters/${ready}/actions/upgrade`, {
    body: { cluster_template: 'no-tag' },
  });
  assert.equal(r3.status, 400);
  assert.match(magnumError(r3).detail, /no usable kube_tag/);
  const foreign = await h.call('POST', `/v1/clusters/${ready}/actions/upgrade`, {
    body: { cluster_template: 'k8s-v1.33', nodegroup: 'worker-group2' },
  });
  assert.equal(foreign.status, 409);
  assert.match(magnumError(foreign).detail, /Cluster Template is not valid for upgrade/);
  assert.equal(
    (await h.call('POST', `/v1/clusters/${ready}/actions/upgrade`, { body: { cluster_template: 'nope' } }))
      .status,
    404,
  );
  const busy = await h.createCluster('busy');
  const b = await h.call('POST', `/v1/clusters/${busy}/actions/upgrade`, {
    body: { cluster_template: 'k8s-v1.33' },
  });
  assert.equal(b.status, 400);
  assert.match(
    magnumError(b).detail,
    /Upgrading a cluster when status is "CREATE_IN_PROGRESS" is not supported/,
  );
});

void test('upgrade to the next minor moves the cluster and every group to the template and its kube_tag', async () => {
  const r = await h.call('POST', `/v1/clusters/production-kubernetes/actions/upgrade`, {
    body: { cluster_template: 'k8s-v1.33', max_batch_size: 1 },
  });
  assert.equal(r.status, 202, r.text);
  const tpl = await h.template('k8s-v1.33');
  const c = (await h.call('GET', `/v1/clusters/${ready}`)).body as {
    cluster_template_id: string;
    labels: Record<string, string>;
    status: string;
  };
  assert.equal(c.cluster_template_id, tpl.uuid);
  assert.equal(c.labels.kube_tag, 'v1.33.1');
  assert.equal(c.labels.zone, 'a');
  assert.equal(c.status, 'UPDATE_IN_PROGRESS');
  const ngs = (await h.call('GET', `/v1/clusters/${ready}/nodegroups`)).body as {
    nodegroups: { name: string; status: string }[];
  };
  assert.ok(ngs.nodegroups.every((g) => g.status === 'UPDATE_IN_PROGRESS'));
  const g = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/worker-group2`)).body as {
    labels: Record<string, string>;
  };
  assert.equal(g.labels.kube_tag, 'v1.33.1');
});

void test('nodegroup delete: default groups are refused, others answer 204 and read DELETE_IN_PROGRESS', async () => {
  await h.driverFinishes(ready);
  const d = await h.call('DELETE', `/v1/clusters/${ready}/nodegroups/default-worker`);
  assert.equal(d.status, 400);
  assert.match(magnumError(d).detail, /Deleting a default nodegroup is not supported/);
  const r = await h.call('DELETE', `/v1/clusters/${ready}/nodegroups/worker-group-az2`, {
    headers: { 'content-type': 'application/octet-stream', accept: '*/*' },
  });
  assert.equal(r.status, 204);
  const g = (await h.call('GET', `/v1/clusters/${ready}/nodegroups/worker-group-az2`)).body as {
    status: string;
  };
  assert.equal(g.status, 'DELETE_IN_PROGRESS');
  assert.equal(
    ((await h.call('GET', `/v1/clusters/${ready}`)).body as { status: string }).status,
    'UPDATE_IN_PROGRESS',
  );
});
