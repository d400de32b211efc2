import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, magnumError, type CallOptions } from './harness.ts';

let h: Harness;
let cluster: string;
before(async () => {
  h = await Harness.start();
  cluster = await h.createCluster('target');
  await h.driverFinishes(cluster);
});
after(async () => {
  await h.close();
});

/** Everything the store holds, to prove a refused request wrote nothing. */
async function revision(): Promise<number> {
  return h.m.store.currentRevision();
}

const GOOD_CLUSTER = {
  name: 'c',
  cluster_template_id: 'k8s-v1.32',
  master_count: 1,
  node_count: 1,
  master_flavor_id: 'm1.medium',
  flavor_id: 'm1.medium',
  keypair: 'k',
};

const cases: [string, string, string, CallOptions, number, RegExp][] = [
  [
    'malformed JSON on cluster create',
    'POST',
    '/v1/clusters',
    { raw: '{"name": "x",' },
    400,
    /not valid JSON/,
  ],
  [
    'malformed JSON on template create',
    'POST',
    '/v1/clustertemplates',
    { raw: '{oops}' },
    400,
    /not valid JSON/,
  ],
  ['malformed JSON on a PATCH', 'PATCH', '/v1/clusters/target', { raw: '[{"op":' }, 400, /not valid JSON/],
  ['an empty body on create', 'POST', '/v1/clusters', { raw: '' }, 400, /body is missing/],
  ['a JSON array as cluster', 'POST', '/v1/clusters', { body: [1, 2] }, 400, /cluster/],
  [
    'a non-JSON content type',
    'POST',
    '/v1/clusters',
    { raw: 'name=x', headers: { 'content-type': 'text/plain' } },
    400,
    /JSON/,
  ],
  [
    'an unknown attribute',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'u', colour: 'blue' } },
    400,
    /Unknown attribute for argument cluster: colour/,
  ],
  [
    'a read-only attribute',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'ro', status: 'CREATE_COMPLETE' } },
    400,
    /Unknown attribute.*status/,
  ],
  [
    'a string node count',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'sn', node_count: 'three' } },
    400,
    /Invalid input for field\/attribute node_count: .*got 'three'/,
  ],
  [
    'a fractional master count',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'fm', master_count: 1.5 } },
    400,
    /master_count/,
  ],
  [
    'a negative node count',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'neg', node_count: -1 } },
    400,
    /node_count/,
  ],
  [
    'a negative timeout',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'to', create_timeout: -5 } },
    400,
    /create_timeout/,
  ],
  [
    'labels that are not a dict',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'lb', labels: ['a'] } },
    400,
    /labels/,
  ],
  [
    'nested label values',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'lv', labels: { a: { b: 1 } } } },
    400,
    /labels/,
  ],
  [
    'a non-boolean flag',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'fb', merge_labels: 'perhaps' } },
    400,
    /merge_labels/,
  ],
  [
    'a docker volume of 0',
    'POST',
    '/v1/clusters',
    { body: { ...GOOD_CLUSTER, name: 'dv', docker_volume_size: 0 } },
    400,
    /docker_volume_size/,
  ],
  [
    'a bad resize body',
    'POST',
    '/v1/clusters/target/actions/resize',
    { body: { node_count: '2' } },
    400,
    /node_count/,
  ],
  [
    'an unknown resize attribute',
    'POST',
    '/v1/clusters/target/actions/resize',
    { body: { node_count: 2, force: true } },
    400,
    /Unknown attribute.*force/,
  ],
  [
    'an upgrade without template',
    'POST',
    '/v1/clusters/target/actions/upgrade',
    { body: { max_batch_size: 1 } },
    400,
    /cluster_template/,
  ],
  [
    'a zero max_batch_size',
    'POST',
    '/v1/clusters/target/actions/upgrade',
    { body: { cluster_template: 'k8s-v1.33', max_batch_size: 0 } },
    400,
    /max_batch_size/,
  ],
  ['a bad marker uuid', 'GET', '/v1/clusters?marker=123', {}, 400, /marker/],
  ['a bad nodegroup marker', 'GET', '/v1/clusters/target/nodegroups?marker=zz', {}, 400, /marker/],
  ['a bad quota marker', 'GET', '/v1/quotas?marker=abc', { token: 'admin' }, 400, /marker/],
  ['a non-numeric limit', 'GET', '/v1/clusters?limit=ten', {}, 400, /limit/],
  [
    'an unknown uuid',
    'GET',
    '/v1/clusters/8d3c8a7c-0c7a-4d6b-9d0c-0e5f4c1f2a11',
    {},
    404,
    /could not be found/,
  ],
  ['an unknown ca_cert_type', 'GET', '/v1/certificates/target?ca_cert_type=x', {}, 400, /ca_cert_type/],
  ['a non-list PATCH', 'PATCH', '/v1/clusters/target', { body: { node_count: 3 } }, 400, /JSON-Patch list/],
  [
    'a quota patch with a string limit',
    'PATCH',
    '/v1/quotas/x/Cluster',
    { token: 'admin', body: { hard_limit: 'lots' } },
    400,
    /hard_limit/,
  ],
];

for (const [name, method, path, options, status, re] of cases) {
  void test(`${name} is a ${status} in Magnum's shape and writes nothing`, async () => {
    const rev = await revision();
    const opts = options.token === 'admin' ? { ...options, token: h.tokens.admin } : options;
    const r = await h.call(method, path, opts);
    assert.equal(r.status, status, r.text);
    const e = magnumError(r);
    assert.equal(e.status, status);
    assert.match(e.detail, re);
    assert.ok(e.title.length > 0 && e.detail.startsWith(e.title), e.title);
    assert.equal(await revision(), rev);
  });
}

void test('an oversized body is a 413 in Magnum shape and writes nothing', async () => {
  const rev = await revision();
  const r = await h.call('POST', '/v1/clustertemplates', {
    raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), coe: 'kubernetes', image_id: 'i' }),
  });
  assert.equal(r.status, 413);
  assert.equal(magnumError(r).status, 413);
  assert.equal(await revision(), rev);
});

void test('hostile path identifiers are plain 404s, never 500s', async () => {
  for (const ident of [
    '%00',
    '..%2F..%2Fetc',
    "'%20OR%201=1",
    'x'.repeat(400),
    '%F0%9F%98%80',
    '00000000-0000-0000-0000-000000000000',
  ]) {
    for (const path of [
      `/v1/clusters/${ident}`,
      `/v1/clustertemplates/${ident}`,
      `/v1/clusters/target/nodegroups/${ident}`,
      `/v1/certificates/${ident}`,
    ]) {
      const r = await h.call('GET', path);
      assert.ok(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
      assert.ok(r.status < 500);
    }
  }
});
