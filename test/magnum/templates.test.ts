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

/** What `openstack coe cluster template create` sends (unset options as null). */
function clientBody(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    image_id: 'fedora-coreos-38',
    keypair_id: 'my-keypair',
    external_network_id: 'public',
    coe: 'kubernetes',
    fixed_network: null,
    fixed_subnet: null,
    network_driver: 'calico',
    volume_driver: null,
    dns_nameserver: '8.8.8.8',
    flavor_id: 'm1.medium',
    master_flavor_id: 'm1.medium',
    docker_volume_size: 10,
    docker_storage_driver: 'overlay2',
    http_proxy: null,
    https_proxy: null,
    no_proxy: null,
    labels: { kube_tag: 'v1.27.3', container_runtime: 'containerd' },
    tls_disabled: false,
    public: false,
    registry_enabled: false,
    server_type: 'vm',
    master_lb_enabled: true,
    floating_ip_enabled: false,
    ...extra,
  };
}

const FIELDS = [
  'insecure_registry',
  'labels',
  'updated_at',
  'floating_ip_enabled',
  'fixed_subnet',
  'master_flavor_id',
  'uuid',
  'no_proxy',
  'https_proxy',
  'tls_disabled',
  'keypair_id',
  'public',
  'http_proxy',
  'docker_volume_size',
  'server_type',
  'external_network_id',
  'cluster_distro',
  'image_id',
  'volume_driver',
  'registry_enabled',
  'docker_storage_driver',
  'apiserver_port',
  'name',
  'created_at',
  'network_driver',
  'fixed_network',
  'coe',
  'flavor_id',
  'master_lb_enabled',
  'dns_nameserver',
  'hidden',
  'tags',
  'links',
  'project_id',
  'user_id',
];

void test('the operator public templates are listed for a newcomer', async () => {
  const r = await h.call('GET', '/v1/clustertemplates');
  assert.equal(r.status, 200);
  const names = (r.body as { clustertemplates: { name: string }[] }).clustertemplates.map((t) => t.name);
  assert.deepEqual(names, ['k8s-v1.31', 'k8s-v1.32', 'k8s-v1.33']);
  const t = await h.template('k8s-v1.32');
  assert.equal(t.public, true);
  assert.equal(t.master_lb_enabled, true);
  assert.equal(t.network_driver, 'calico');
  assert.equal((t.labels as Record<string, string>).kube_tag, 'v1.32.5');
});

void test('create answers 201 with Location and every field the client prints, links included', async () => {
  const r = await h.call('POST', '/v1/clustertemplates', { body: clientBody('k8s-template') });
  assert.equal(r.status, 201);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  const t = r.body as Record<string, unknown>;
  for (const f of FIELDS) assert.ok(f in t, `missing ${f}`);
  assert.equal(r.headers.get('location'), `${h.url}/v1/clustertemplates/${String(t.uuid)}`);
  assert.deepEqual(t.links, [
    { href: `${h.url}/v1/clustertemplates/${String(t.uuid)}`, rel: 'self' },
    { href: `${h.url}/clustertemplates/${String(t.uuid)}`, rel: 'bookmark' },
  ]);
  assert.equal(t.project_id, h.projects.demo);
  assert.equal(t.cluster_distro, 'fedora-coreos');
  assert.match(String(t.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  // GET by name and by uuid give the same object
  const byName = await h.call('GET', '/v1/clustertemplates/k8s-template');
  const byUuid = await h.call('GET', `/v1/clustertemplates/${String(t.uuid)}`);
  assert.deepEqual(byName.body, t);
  assert.deepEqual(byUuid.body, t);
});

void test('a template without a name gets a generated one; without coe or image it is a 400 naming the field', async () => {
  const unnamed = await h.call('POST', '/v1/clustertemplates', {
    body: { coe: 'kubernetes', image_id: 'fedora-coreos-38' },
  });
  assert.equal(unnamed.status, 201);
  assert.match(String((unnamed.body as { name: string }).name), /^[a-z]+-\d+-template$/);
  const noImage = await h.call('POST', '/v1/clustertemplates', { body: { name: 'x', coe: 'kubernetes' } });
  assert.equal(noImage.status, 400);
  assert.match(magnumError(noImage).detail, /image_id/);
  const badCoe = await h.call('POST', '/v1/clustertemplates', {
    body: clientBody('bad-coe', { coe: 'swarm' }),
  });
  assert.equal(badCoe.status, 400);
  assert.match(magnumError(badCoe).detail, /coe/);
  const badNet = await h.call('POST', '/v1/clustertemplates', {
    body: clientBody('bad-net', { network_driver: 'weave' }),
  });
  assert.equal(badNet.status, 400);
  assert.match(magnumError(badNet).detail, /Network driver type weave is not supported/);
  const badPort = await h.call('POST', '/v1/clustertemplates', {
    body: clientBody('bad-port', { apiserver_port: 80 }),
  });
  assert.equal(badPort.status, 400);
  assert.match(magnumError(badPort).detail, /apiserver_port/);
  const badDns = await h.call('POST', '/v1/clustertemplates', {
    body: clientBody('bad-dns', { dns_nameserver: 'not-an-ip' }),
  });
  assert.equal(badDns.status, 400);
  const dm = await h.call('POST', '/v1/clustertemplates', {
    body: clientBody('dm', { docker_storage_driver: 'devicemapper', docker_volume_size: 2 }),
  });
  assert.equal(dm.status, 400);
  assert.match(magnumError(dm).detail, /minimum value 3GB for devicemapper/);
});

void test('publishing (public or hidden) needs admin: 403 for members, 201 for admins', async () => {
  const pub = await h.call('POST', '/v1/clustertemplates', { body: clientBody('pub', { public: true }) });
  assert.equal(pub.status, 403);
  assert.match(magnumError(pub).detail, /public or hidden/);
  const hid = await h.call('POST', '/v1/clustertemplates', { body: clientBody('hid', { hidden: true }) });
  assert.equal(hid.status, 403);
  const ok = await h.as('admin', 'POST', '/v1/clustertemplates', {
    body: clientBody('admin-pub', { public: true }),
  });
  assert.equal(ok.status, 201);
  const patch = await h.call('PATCH', '/v1/clustertemplates/k8s-template', {
    body: [{ op: 'replace', path: '/public', value: true }],
  });
  assert.equal(patch.status, 403);
});

void test('visibility: own project and public templates; hidden ones only for admins; other projects are 404', async () => {
  const hidden = await h.as('admin', 'POST', '/v1/clustertemplates', {
    body: clientBody('hidden-one', { public: true, hidden: true }),
  });
  assert.equal(hidden.status, 201);
  const uuid = (hidden.body as { uuid: string }).uuid;
  assert.equal((await h.call('GET', `/v1/clustertemplates/${uuid}`)).status, 404);
  assert.equal((await h.as('admin', 'GET', `/v1/clustertemplates/${uuid}`)).status, 200);
  const own = (await h.call('POST', '/v1/clustertemplates', { body: clientBody('demo-private') })).body as {
    uuid: string;
  };
  assert.equal((await h.as('otherSa', 'GET', `/v1/clustertemplates/${own.uuid}`)).status, 404);
  assert.equal((await h.as('otherSa', 'GET', '/v1/clustertemplates/demo-private')).status, 404);
  const otherList = (await h.as('otherSa', 'GET', '/v1/clustertemplates')).body as {
    clustertemplates: { name: string }[];
  };
  assert.ok(!otherList.clustertemplates.some((t) => t.name === 'demo-private' || t.name === 'hidden-one'));
  assert.ok(otherList.clustertemplates.some((t) => t.name === 'k8s-v1.31'));
  const adminList = (await h.as('admin', 'GET', '/v1/clustertemplates')).body as {
    clustertemplates: { name: string }[];
  };
  assert.ok(adminList.clustertemplates.some((t) => t.name === 'demo-private'));
  assert.ok(adminList.clustertemplates.some((t) => t.name === 'hidden-one'));
  // a reader may read, not write
  assert.equal((await h.as('reader', 'GET', '/v1/clustertemplates/demo-private')).status, 200);
  const w = await h.as('reader', 'POST', '/v1/clustertemplates', { body: clientBody('by-reader') });
  assert.equal(w.status, 403);
  assert.match(magnumError(w).detail, /Policy doesn't allow clustertemplate:create/);
  // another project may not change a public template it sees
  const foreign = await h.as('otherSa', 'PATCH', '/v1/clustertemplates/k8s-v1.31', {
    body: [{ op: 'replace', path: '/tags', value: 'x' }],
  });
  assert.equal(foreign.status, 403);
  assert.equal((await h.as('otherSa', 'DELETE', '/v1/clustertemplates/k8s-v1.31')).status, 403);
});

void test('a name shared by two visible templates is a 409 asking for the uuid', async () => {
  assert.equal((await h.call('POST', '/v1/clustertemplates', { body: clientBody('twin') })).status, 201);
  assert.equal((await h.call('POST', '/v1/clustertemplates', { body: clientBody('twin') })).status, 201);
  const r = await h.call('GET', '/v1/clustertemplates/twin');
  assert.equal(r.status, 409);
  assert.match(
    magnumError(r).detail,
    /Multiple cluster templates exist with same name twin: please use the cluster template uuid instead/,
  );
  assert.equal((await h.call('DELETE', '/v1/clustertemplates/twin')).status, 409);
});

void test('PATCH applies the Python dict the client sends for labels and plain JSON values, 200 with the object', async () => {
  const r = await h.call('PATCH', '/v1/clustertemplates/k8s-template', {
    body: [
      {
        op: 'replace',
        path: '/labels',
        value: "{'kube_tag': 'v1.27.4', 'container_runtime': 'containerd', \"it's\": 'ok'}",
      },
      { op: 'replace', path: '/docker_volume_size', value: 20 },
      { op: 'remove', path: '/keypair_id' },
      { op: 'add', path: '/http_proxy', value: 'http://proxy:3128' },
      { op: 'replace', path: '/name', value: 'k8s-template-2' },
    ],
  });
  assert.equal(r.status, 200, r.text);
  const t = r.body as Record<string, unknown>;
  assert.deepEqual(t.labels, { kube_tag: 'v1.27.4', container_runtime: 'containerd', "it's": 'ok' });
  assert.equal(t.docker_volume_size, 20);
  assert.equal(t.keypair_id, null);
  assert.equal(t.http_proxy, 'http://proxy:3128');
  assert.equal(t.name, 'k8s-template-2');
  assert.ok(t.links);
  assert.match(String(t.updated_at), /\+00:00$/);
  const nested = await h.call('PATCH', '/v1/clustertemplates/k8s-template-2', {
    body: [{ op: 'add', path: '/labels/extra', value: 'yes' }],
  });
  assert.equal((nested.body as { labels: Record<string, string> }).labels.extra, 'yes');
});

void test('PATCH refuses what Magnum refuses, with its messages', async () => {
  const cases: [unknown, number, RegExp][] = [
    [
      [{ op: 'replace', path: '/uuid', value: 'x' }],
      400,
      /'\/uuid' is an internal attribute and can not be updated/,
    ],
    [[{ op: 'replace', path: '/project_id', value: 'x' }], 400, /internal attribute/],
    [[{ op: 'remove', path: '/coe' }], 400, /'\/coe' is a mandatory attribute and can not be removed/],
    [[{ op: 'remove', path: '/image_id' }], 400, /mandatory attribute/],
    [[{ op: 'remove', path: '/network_driver' }], 400, /mandatory attribute/],
    [
      [{ op: 'add', path: '/flavor_id', value: 'm1.large' }],
      400,
      /The attribute \/flavor_id has existed, please use 'replace' operation instead/,
    ],
    [
      [{ op: 'add', path: '/foo', value: 'bar' }],
      400,
      /Adding a new attribute \/foo to the root of the resource is not allowed/,
    ],
    [[{ op: 'replace', path: '/foo', value: 'bar' }], 400, /does not exist/],
    [[{ op: 'test', path: '/name', value: 'x' }], 400, /op/],
    [[{ op: 'replace', path: 'name', value: 'x' }], 400, /path/],
    [[{ op: 'replace', path: '/name' }], 400, /needs value/],
    [[{ op: 'replace', path: '/labels', value: "{'a': 1" }], 400, /not a valid dictionary literal/],
    [[{ op: 'replace', path: '/labels', value: '[1, 2]' }], 400, /labels/],
    [[{ op: 'replace', path: '/docker_volume_size', value: 'big' }], 400, /docker_volume_size/],
    [[{ op: 'replace', path: '/server_type', value: 'vax' }], 400, /server_type/],
    [{ op: 'replace', path: '/name', value: 'x' }, 400, /JSON-Patch list/],
    [[], 400, /.+/],
  ];
  for (const [body, status, message] of cases) {
    const r = await h.call('PATCH', '/v1/clustertemplates/k8s-template-2', { body });
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(magnumError(r).detail, message, JSON.stringify(body));
  }
  const unchanged = (await h.call('GET', '/v1/clustertemplates/k8s-template-2')).body as {
    docker_volume_size: number;
  };
  assert.equal(unchanged.docker_volume_size, 20);
});

void test('a template used by a cluster only accepts name/public/hidden/tags changes and cannot be deleted', async () => {
  const t = (
    await h.call('POST', '/v1/clustertemplates', {
      body: clientBody('in-use', { labels: { kube_tag: 'v1.32.1' } }),
    })
  ).body as { uuid: string };
  await h.createCluster('uses-template', { cluster_template_id: t.uuid });
  const flavor = await h.call('PATCH', `/v1/clustertemplates/${t.uuid}`, {
    body: [{ op: 'replace', path: '/flavor_id', value: 'm1.large' }],
  });
  assert.equal(flavor.status, 400);
  assert.match(
    magnumError(flavor).detail,
    new RegExp(`ClusterTemplate ${t.uuid} is referenced by one or multiple clusters`),
  );
  const tags = await h.call('PATCH', `/v1/clustertemplates/${t.uuid}`, {
    body: [{ op: 'replace', path: '/tags', value: 'prod' }],
  });
  assert.equal(tags.status, 200);
  const del = await h.call('DELETE', `/v1/clustertemplates/${t.uuid}`);
  assert.equal(del.status, 400);
  assert.match(magnumError(del).detail, /is referenced by one or multiple clusters/);
});

void test('delete answers 204 with no body and the template is gone', async () => {
  const t = (await h.call('POST', '/v1/clustertemplates', { body: clientBody('to-delete') })).body as {
    uuid: string;
  };
  const r = await h.call('DELETE', `/v1/clustertemplates/to-delete`, {
    headers: { 'content-type': 'application/octet-stream', accept: '*/*' },
  });
  assert.equal(r.status, 204);
  assert.equal(r.text, '');
  assert.equal((await h.call('GET', `/v1/clustertemplates/${t.uuid}`)).status, 404);
  const again = await h.call('DELETE', `/v1/clustertemplates/${t.uuid}`);
  assert.equal(again.status, 404);
  assert.match(magnumError(again).detail, /ClusterTemplate .* could not be found/);
});

void test('lists page with limit and marker, sort by a key and direction, and give a next link when full', async () => {
  const all = (
    (await h.call('GET', '/v1/clustertemplates')).body as {
      clustertemplates: { uuid: string; name: string }[];
    }
  ).clustertemplates;
  assert.ok(all.length >= 5);
  const p1 = (await h.call('GET', '/v1/clustertemplates/?limit=2')).body as {
    clustertemplates: { uuid: string }[];
    next: string;
  };
  assert.deepEqual(
    p1.clustertemplates.map((t) => t.uuid),
    all.slice(0, 2).map((t) => t.uuid),
  );
  assert.equal(
    p1.next,
    `${h.url}/v1/clustertemplates?sort_key=id&sort_dir=asc&limit=2&marker=${all[1]!.uuid}`,
  );
  const p2 = (await h.call('GET', p1.next.replace(h.url, ''))).body as {
    clustertemplates: { uuid: string }[];
  };
  assert.deepEqual(
    p2.clustertemplates.map((t) => t.uuid),
    all.slice(2, 4).map((t) => t.uuid),
  );
  const byName = (await h.call('GET', '/v1/clustertemplates?sort_key=name&sort_dir=desc')).body as {
    clustertemplates: { name: string }[];
  };
  const names = byName.clustertemplates.map((t) => t.name);
  assert.deepEqual(names, [...names].sort().reverse());
  assert.equal('next' in ((await h.call('GET', '/v1/clustertemplates')).body as object), false);
  for (const [q, re] of [
    ['limit=0', /Limit must be positive/],
    ['limit=-1', /Limit must be positive/],
    ['limit=abc', /limit/],
    ['sort_dir=up', /Invalid sort direction: up/],
    ['sort_key=bogus', /sort_key value "bogus" is an invalid field/],
    ['marker=not-a-uuid', /marker/],
  ] as const) {
    const r = await h.call('GET', `/v1/clustertemplates?${q}`);
    assert.equal(r.status, 400, q);
    assert.match(magnumError(r).detail, re, q);
  }
  const bigLimit = await h.call('GET', '/v1/clustertemplates?limit=5000');
  assert.equal(bigLimit.status, 200);
  const detail = await h.call('GET', '/v1/clustertemplates/detail');
  assert.equal(detail.status, 200);
});
