import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeHarness, machine, machineDeployment, MACHINES } from './harness.ts';

/** The kube façade over real HTTP: discovery, verbs, conflicts, finalizers, tables, errors. */

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

void describe('kube façade', () => {
  let h: KubeHarness;
  before(async () => {
    h = await KubeHarness.start();
  });
  after(async () => {
    await h?.close();
  });

  void test('discovery lists the four Cluster API groups and their resources with short names, scale and status', async () => {
    const groups = await h.call('GET', '/apis', { who: null });
    assert.equal(groups.status, 200);
    const names = (groups.body.groups as { name: string }[]).map((g) => g.name).sort();
    assert.deepEqual(names, [
      'bootstrap.cluster.x-k8s.io',
      'cluster.x-k8s.io',
      'controlplane.cluster.x-k8s.io',
      'infrastructure.cluster.x-k8s.io',
    ]);
    const core = await h.call('GET', MACHINES);
    assert.equal(core.body.kind, 'APIResourceList');
    const rs = core.body.resources as {
      name: string;
      shortNames?: string[];
      categories?: string[];
      group?: string;
      kind: string;
    }[];
    const ma = rs.find((r) => r.name === 'machines')!;
    assert.deepEqual(ma.shortNames, ['ma']);
    assert.deepEqual(ma.categories, ['cluster-api']);
    assert.ok(rs.some((r) => r.name === 'machines/status'));
    const scale = rs.find((r) => r.name === 'machinedeployments/scale')!;
    assert.equal(scale.group, 'autoscaling');
    assert.equal(scale.kind, 'Scale');
    const infra = await h.call('GET', '/apis/infrastructure.cluster.x-k8s.io/v1beta1');
    assert.ok((infra.body.resources as { name: string }[]).some((r) => r.name === 'openstackmachines'));
    const version = await h.call('GET', '/version');
    assert.equal(version.body.major, '1');
  });

  void test('unknown groups, versions and resources answer a 404 Status', async () => {
    for (const path of ['/apis/nope.io/v1', `${MACHINES}x`, h.ns('pods')]) {
      const r = await h.call('GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(r.body.kind, 'Status');
      assert.equal(r.body.reason, 'NotFound');
    }
  });

  void test('create returns 201 with uid and resourceVersion; a second create is 409 AlreadyExists', async () => {
    const r = await h.call('POST', h.ns('machines'), { body: machine('m-create') });
    assert.equal(r.status, 201, r.text);
    const meta = r.body.metadata as { uid: string; resourceVersion: string; namespace: string };
    assert.ok(meta.uid);
    assert.match(meta.resourceVersion, /^\d+$/);
    assert.equal(meta.namespace, h.projects.demo);
    const again = await h.call('POST', h.ns('machines'), { body: machine('m-create') });
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
    assert.deepEqual(again.body.details, { name: 'm-create', group: 'cluster.x-k8s.io', kind: 'machines' });
  });

  void test('an invalid object is 422 Invalid with the field in its causes; a wrong kind is 400', async () => {
    const bad = machineDeployment('md-bad', 1);
    (bad.spec as Record<string, unknown>).replicas = -2;
    const r = await h.call('POST', h.ns('machinedeployments'), { body: bad });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.reason, 'Invalid');
    const causes = (r.body.details as { causes: { field: string }[] }).causes;
    assert.ok(
      causes.some((c) => c.field === 'spec.replicas'),
      JSON.stringify(causes),
    );
    const badName = await h.call('POST', h.ns('machines'), { body: machine('Bad_Name') });
    assert.equal(badName.status, 422);
    const wrongKind = await h.call('POST', h.ns('machines'), {
      body: { ...machine('m-kind'), kind: 'Cluster' },
    });
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.body.reason, 'BadRequest');
    const malformed = await h.call('POST', h.ns('machines'), { raw: '{"kind":' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.kind, 'Status');
  });

  void test('get of a missing object is 404 naming the resource', async () => {
    const r = await h.call('GET', `${h.ns('machines')}/ghost`);
    assert.equal(r.status, 404);
    assert.equal(r.body.message, 'machines.cluster.x-k8s.io "ghost" not found');
    assert.deepEqual(r.body.details, { name: 'ghost', group: 'cluster.x-k8s.io', kind: 'machines' });
  });

  void test('list filters by label and field selectors and pages with limit/continue; bad selectors are 400', async () => {
    for (const n of ['m-l1', 'm-l2', 'm-l3']) {
      await h.call('POST', h.ns('machines'), {
        body: machine(n, 'c-list', { labels: { tier: n === 'm-l3' ? 'b' : 'a' } }),
      });
    }
    const byLabel = await h.call(
      'GET',
      `${h.ns('machines')}?labelSelector=${encodeURIComponent('cluster.x-k8s.io/cluster-name=c-list,tier=a')}`,
    );
    assert.equal(byLabel.body.kind, 'MachineList');
    assert.deepEqual(
      (byLabel.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ['m-l1', 'm-l2'],
    );
    const byField = await h.call('GET', `${h.ns('machines')}?fieldSelector=metadata.name%3Dm-l3`);
    assert.deepEqual(
      (byField.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ['m-l3'],
    );
    const sel = encodeURIComponent('cluster.x-k8s.io/cluster-name=c-list');
    const page1 = await h.call('GET', `${h.ns('machines')}?labelSelector=${sel}&limit=2`);
    assert.equal((page1.body.items as unknown[]).length, 2);
    const cont = (page1.body.metadata as { continue?: string }).continue;
    assert.ok(cont);
    const page2 = await h.call(
      'GET',
      `${h.ns('machines')}?labelSelector=${sel}&limit=2&continue=${encodeURIComponent(cont)}`,
    );
    assert.deepEqual(
      (page2.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ['m-l3'],
    );
    for (const q of [
      'labelSelector=a%20in%20(b',
      'fieldSelector=spec.nope%3Dx',
      'limit=abc',
      'continue=garbage',
    ]) {
      const r = await h.call('GET', `${h.ns('machines')}?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.body.kind, 'Status');
    }
  });

  void test('kubectl get asks for a Table: machines show the CRD columns', async () => {
    const r = await h.call('GET', `${h.ns('machines')}?fieldSelector=metadata.name%3Dm-l1`, {
      accept: TABLE,
    });
    assert.equal(r.body.kind, 'Table');
    const cols = (r.body.columnDefinitions as { name: string }[]).map((c) => c.name);
    assert.deepEqual(cols, ['Name', 'Cluster', 'NodeName', 'ProviderID', 'Phase', 'Age', 'Version']);
    const row = (r.body.rows as { cells: unknown[]; object: { kind: string } }[])[0]!;
    assert.equal(row.cells[0], 'm-l1');
    assert.equal(row.cells[1], 'c-list');
    assert.equal(row.cells[6], 'v1.31.4');
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    const md = await h.call('GET', h.ns('machinedeployments'), { accept: TABLE });
    assert.deepEqual(
      (md.body.columnDefinitions as { name: string }[]).map((c) => c.name),
      ['Name', 'Cluster', 'Replicas', 'Ready', 'Updated', 'Unavailable', 'Phase', 'Age', 'Version'],
    );
  });

  void test('update needs the current resourceVersion: a stale one is 409 Conflict', async () => {
    const created = (await h.call('POST', h.ns('machines'), { body: machine('m-upd') })).body;
    const meta = created.metadata as { resourceVersion: string };
    const first = await h.call('PUT', `${h.ns('machines')}/m-upd`, {
      body: {
        ...created,
        metadata: { ...meta, labels: { ...(created.metadata as { labels: object }).labels, x: '1' } },
      },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal((first.body.metadata as { labels: Record<string, string> }).labels.x, '1');
    const stale = await h.call('PUT', `${h.ns('machines')}/m-upd`, { body: created });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.match(String(stale.body.message), /the object has been modified/);
    const noRv = await h.call('PUT', `${h.ns('machines')}/m-upd`, { body: machine('m-upd') });
    assert.equal(noRv.status, 422);
  });

  void test('merge and JSON patches change the object; malformed patches and unknown patch types are refused', async () => {
    await h.call('POST', h.ns('machinedeployments'), { body: machineDeployment('md-patch', 1) });
    const path = `${h.ns('machinedeployments')}/md-patch`;
    const merge = await h.call('PATCH', path, {
      body: { metadata: { labels: { a: 'b' } }, spec: { replicas: 4 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(merge.status, 200, merge.text);
    assert.equal((merge.body.spec as { replicas: number }).replicas, 4);
    const json = await h.call('PATCH', path, {
      body: [{ op: 'replace', path: '/spec/replicas', value: 2 }],
      contentType: 'application/json-patch+json',
    });
    assert.equal((json.body.spec as { replicas: number }).replicas, 2);
    const missing = await h.call('PATCH', path, {
      body: [{ op: 'remove', path: '/spec/nope/x' }],
      contentType: 'application/json-patch+json',
    });
    assert.equal(missing.status, 422);
    const notArray = await h.call('PATCH', path, {
      body: { op: 'add' },
      contentType: 'application/json-patch+json',
    });
    assert.equal(notArray.status, 400);
    const garbage = await h.call('PATCH', path, {
      raw: '{not json',
      contentType: 'application/merge-patch+json',
    });
    assert.equal(garbage.status, 400);
    const unknown = await h.call('PATCH', path, { raw: 'x', contentType: 'text/plain' });
    assert.equal(unknown.status, 415);
    assert.equal(unknown.body.reason, 'UnsupportedMediaType');
    const invalid = await h.call('PATCH', path, {
      body: { spec: { replicas: 'many' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(invalid.status, 422);
    const stale = await h.call('PATCH', path, {
      body: { metadata: { resourceVersion: '1' }, spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(stale.status, 409);
  });

  void test('server-side apply creates, then merges into, the object', async () => {
    const path = `${h.ns('machines')}/m-ssa?fieldManager=test`;
    const doc = `apiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata:\n  name: m-ssa\nspec:\n  clusterName: c1\n  bootstrap: {dataSecretName: s}\n  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackMachine, name: m-ssa}\n`;
    const created = await h.call('PATCH', path, { raw: doc, contentType: 'application/apply-patch+yaml' });
    assert.equal(created.status, 201, created.text);
    const again = await h.call('PATCH', path, {
      raw: doc.replace('name: m-ssa\n', 'name: m-ssa\n  labels: {x: y}\n'),
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(again.status, 200, again.text);
    assert.equal((again.body.metadata as { labels: Record<string, string> }).labels.x, 'y');
  });

  void test('delete with a finalizer keeps the object marked; removing the finalizer lets it go', async () => {
    await h.call('POST', h.ns('machines'), {
      body: machine('m-fin', 'c1', { finalizers: ['test.magnetar.io/hold'] }),
    });
    const path = `${h.ns('machines')}/m-fin`;
    const del = await h.call('DELETE', path);
    assert.equal(del.status, 200, del.text);
    assert.ok((del.body.metadata as { deletionTimestamp?: string }).deletionTimestamp);
    const still = await h.call('GET', path);
    assert.equal(still.status, 200);
    const release = await h.call('PATCH', path, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    assert.ok(release.status === 200, release.text);
    assert.equal((await h.call('GET', path)).status, 404);
    await h.call('POST', h.ns('machines'), { body: machine('m-plain') });
    const plain = await h.call('DELETE', `${h.ns('machines')}/m-plain`);
    assert.equal(plain.body.kind, 'Status');
    assert.equal(plain.body.status, 'Success');
    const gone = await h.call('DELETE', `${h.ns('machines')}/m-plain`);
    assert.equal(gone.status, 404);
  });

  void test('a delete precondition on a stale resourceVersion is 409', async () => {
    const created = (await h.call('POST', h.ns('machines'), { body: machine('m-pre') })).body;
    const r = await h.call('DELETE', `${h.ns('machines')}/m-pre`, {
      body: { preconditions: { resourceVersion: '1' } },
    });
    assert.equal(r.status, 409);
    const ok = await h.call('DELETE', `${h.ns('machines')}/m-pre`, {
      body: { preconditions: { uid: (created.metadata as { uid: string }).uid } },
    });
    assert.equal(ok.status, 200);
  });

  void test('the scale subresource reads and writes spec.replicas of a MachineDeployment', async () => {
    await h.call('POST', h.ns('machinedeployments'), { body: machineDeployment('md-scale', 1) });
    const path = `${h.ns('machinedeployments')}/md-scale/scale`;
    const s = await h.call('GET', path);
    assert.equal(s.body.kind, 'Scale');
    assert.equal(s.body.apiVersion, 'autoscaling/v1');
    assert.deepEqual(s.body.spec, { replicas: 1 });
    assert.equal((s.body.status as { selector: string }).selector, 'pool=md-scale');
    const p = await h.call('PATCH', path, {
      body: { spec: { replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    assert.deepEqual(p.body.spec, { replicas: 3 });
    const md = await h.call('GET', `${h.ns('machinedeployments')}/md-scale`);
    assert.equal((md.body.spec as { replicas: number }).replicas, 3);
    const neg = await h.call('PUT', path, { body: { ...s.body, spec: { replicas: -1 } } });
    assert.equal(neg.status, 422);
    const stale = await h.call('PUT', path, { body: { ...s.body, spec: { replicas: 2 } } });
    assert.equal(stale.status, 409);
    const noScale = await h.call('GET', `${h.ns('machines')}/m-create/scale`);
    assert.equal(noScale.status, 404);
    const status = await h.call('GET', `${h.ns('machines')}/m-create/status`);
    assert.equal(status.body.kind, 'Machine');
  });
});
