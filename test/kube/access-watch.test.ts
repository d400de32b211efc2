import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { KubeHarness, machine, MACHINES } from './harness.ts';

/** Project isolation, authentication, the kubeconfig endpoint and watches of the kube façade. */

/** Open a watch and collect its events until `until` says stop (or the deadline passes). */
async function watch(
  h: KubeHarness,
  path: string,
  until: (events: { type: string; object: Record<string, unknown> }[]) => boolean,
  act?: () => Promise<void>,
): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  const res = await fetch(`${h.m.url}/k8s${path}`, {
    headers: { authorization: `Bearer ${h.tokens.demo}` },
    signal: ac.signal,
  });
  assert.equal(res.status, 200);
  const events: { type: string; object: Record<string, unknown> }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const acting = act?.();
  try {
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, i)) as { type: string; object: Record<string, unknown> });
        buf = buf.slice(i + 1);
      }
    }
  } finally {
    clearTimeout(timer);
    await acting;
    ac.abort();
  }
  return events;
}

void describe('kube façade: access and watch', () => {
  let h: KubeHarness;
  before(async () => {
    h = await KubeHarness.start();
    await h.call('POST', h.ns('machines', h.projects.admin), { who: 'admin', body: machine('admin-m') });
    await h.call('POST', h.ns('machines'), { body: machine('demo-m') });
  });
  after(async () => {
    await h?.close();
  });

  void test('without a token every object path is 401 Unauthorized; discovery stays open', async () => {
    const r = await h.call('GET', h.ns('machines'), { who: null });
    assert.equal(r.status, 401);
    assert.equal(r.body.reason, 'Unauthorized');
    const bad = await fetch(`${h.m.url}/k8s${h.ns('machines')}`, {
      headers: { authorization: 'Bearer nonsense' },
    });
    assert.equal(bad.status, 401);
    const viaHeader = await fetch(`${h.m.url}/k8s${h.ns('machines')}`, {
      headers: { 'x-auth-token': h.tokens.demo },
    });
    assert.equal(viaHeader.status, 200);
    assert.equal((await h.call('GET', '/api', { who: null })).status, 200);
  });

  void test("a project member cannot read or write another project's namespace (403)", async () => {
    const r = await h.call('GET', h.ns('machines', h.projects.admin));
    assert.equal(r.status, 403);
    assert.equal(r.body.reason, 'Forbidden');
    assert.match(String(r.body.message), /cannot list resource "machines" in API group "cluster.x-k8s.io"/);
    const w = await h.call('POST', h.ns('machines', h.projects.admin), { body: machine('intruder') });
    assert.equal(w.status, 403);
    const d = await h.call('DELETE', `${h.ns('machines', h.projects.admin)}/admin-m`);
    assert.equal(d.status, 403);
  });

  void test('listing across namespaces shows a member only their project; an admin sees all (-A)', async () => {
    const mine = await h.call('GET', `${MACHINES}/machines`);
    assert.deepEqual(
      (mine.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ['demo-m'],
    );
    const all = await h.call('GET', `${MACHINES}/machines`, { who: 'admin' });
    assert.deepEqual(
      (all.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort(),
      ['admin-m', 'demo-m'],
    );
  });

  void test('namespaces are the projects the caller can see', async () => {
    const mine = await h.call('GET', '/api/v1/namespaces');
    assert.deepEqual(
      (mine.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      [h.projects.demo],
    );
    const all = await h.call('GET', '/api/v1/namespaces', { who: 'admin' });
    const names = (all.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    assert.ok(names.includes(h.projects.admin) && names.includes(h.projects.demo));
    assert.equal((await h.call('GET', `/api/v1/namespaces/${h.projects.admin}`)).status, 403);
  });

  void test('the kubeconfig endpoint points kubectl at the TLS front with the project as namespace', async () => {
    const r = await h.call('GET', '/management/kubeconfig');
    assert.equal(r.status, 200);
    const kc = parseYaml(r.text) as {
      clusters: { cluster: { server: string; 'certificate-authority-data'?: string } }[];
      contexts: { context: { namespace: string } }[];
      users: { user: { exec: { command: string; args: string[] } } }[];
    };
    assert.match(kc.clusters[0]!.cluster.server, /^https:\/\/127\.0\.0\.1:\d+\/k8s$/);
    assert.ok(kc.clusters[0]!.cluster['certificate-authority-data']);
    assert.equal(kc.contexts[0]!.context.namespace, h.projects.demo);
    assert.deepEqual(kc.users[0]!.user.exec.args, ['management', 'token']);
    const version = await fetch(
      `${kc.clusters[0]!.cluster.server.replace('https:', 'http:').replace(/:\d+\//, `:${new URL(h.m.url).port}/`)}/version`,
    );
    assert.equal(version.status, 200);
  });

  void test('a watch from a list resourceVersion streams later changes, filtered by namespace', async () => {
    const list = await h.call('GET', h.ns('machines'));
    const rv = (list.body.metadata as { resourceVersion: string }).resourceVersion;
    const events = await watch(
      h,
      `${h.ns('machines')}?watch=1&resourceVersion=${rv}`,
      (es) => es.some((e) => e.type === 'DELETED'),
      async () => {
        await h.call('POST', h.ns('machines', h.projects.admin), { who: 'admin', body: machine('admin-w') });
        await h.call('POST', h.ns('machines'), { body: machine('w1') });
        await h.call('PATCH', `${h.ns('machines')}/w1`, {
          body: { metadata: { labels: { x: 'y' } } },
          contentType: 'application/merge-patch+json',
        });
        await h.call('DELETE', `${h.ns('machines')}/w1`);
      },
    );
    assert.deepEqual(
      events.map((e) => `${e.type} ${(e.object.metadata as { name: string }).name}`),
      ['ADDED w1', 'MODIFIED w1', 'DELETED w1'],
    );
  });

  void test('a watch without resourceVersion starts with the current objects; a Table watch carries rows', async () => {
    const events = await watch(h, `${h.ns('machines')}?watch=true`, (es) => es.length >= 1);
    assert.equal(events[0]!.type, 'ADDED');
    const ac = new AbortController();
    const res = await fetch(`${h.m.url}/k8s${h.ns('machines')}?watch=1`, {
      headers: {
        authorization: `Bearer ${h.tokens.demo}`,
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      },
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    ac.abort();
    const first = JSON.parse(new TextDecoder().decode(value).split('\n')[0]!) as {
      object: { kind: string; rows: unknown[] };
    };
    assert.equal(first.object.kind, 'Table');
    assert.equal(first.object.rows.length, 1);
  });

  void test('a watch from a compacted resourceVersion ends with a 410 Expired error event', async () => {
    await h.call('POST', h.ns('machines'), { body: machine('w-old') });
    const now = await h.m.store.currentRevision();
    await h.m.store.compact(now);
    const events = await watch(h, `${h.ns('machines')}?watch=1&resourceVersion=1`, (es) => es.length >= 1);
    assert.equal(events[0]!.type, 'ERROR');
    assert.equal(events[0]!.object.code, 410);
    assert.equal(events[0]!.object.reason, 'Expired');
    const bad = await h.call('GET', `${h.ns('machines')}?watch=1&resourceVersion=abc`);
    assert.equal(bad.status, 400);
  });
});
