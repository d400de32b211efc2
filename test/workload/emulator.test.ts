import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import {
  CapiAnnotations,
  CapiTypes,
  ManualClock,
  NotAllowedError,
  silentLogger,
  type CapiClusterObject,
} from '../../src/domain/index.ts';
import { NodeSnapshots, nodeReadyCondition } from '../../src/controllers/common/node-snapshots.ts';
import { SqliteStore } from '../../src/store/index.ts';
import {
  StorePki,
  WorkloadAccess,
  WorkloadEmulator,
  WorkloadClient,
  type WorkloadEmulatorOptions,
} from '../../src/workload/index.ts';
import { createCapiCluster, createMachine, PROJECT, provision, setNodeRef, settle } from './fixtures.ts';

const CLUSTER = 'prod-1a2b3c4d';
const TOKEN = 'abcdef.0123456789abcdef';
const KEY = randomBytes(32);

let store: SqliteStore;
let clock: ManualClock;
let pki: StorePki;
let emulator: WorkloadEmulator;
let access: WorkloadAccess;

function newEmulator(): WorkloadEmulator {
  const options: WorkloadEmulatorOptions = {
    store,
    pki,
    clock,
    host: '127.0.0.1',
    log: silentLogger,
    timing: { nodeReadyMs: 3000, podStartMs: 1000 },
  };
  return new WorkloadEmulator(options);
}

async function capiCluster(name = CLUSTER): Promise<CapiClusterObject> {
  return (await store.get<CapiClusterObject>(CapiTypes.Cluster, PROJECT, name))!;
}

async function client(name = CLUSTER): Promise<WorkloadClient> {
  const c = await access.forCluster(await capiCluster(name));
  assert.ok(c, 'the cluster has an endpoint');
  return c;
}

const s = (ms = 0) => settle(clock, emulator, ms);

/** Wait (in real time: the sockets are real) until `cond` holds, two seconds at most. */
async function eventually(cond: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail('the condition did not come true within 2 s');
}

const pkiRef = (name: string) => ({ namespace: PROJECT, name, displayName: name });

/** Run `fn` with a new client of the cluster and the connections the emulated servers accept meanwhile. */
async function withAcceptedSockets(
  fn: (c: WorkloadClient, accepted: Socket[]) => Promise<void>,
): Promise<void> {
  const accepted: Socket[] = [];
  const onSocket = (m: unknown) => accepted.push((m as { socket: Socket }).socket);
  diagnostics.subscribe('net.server.socket', onSocket);
  try {
    const c = await new WorkloadAccess({ pki, clock }).forCluster(await capiCluster());
    assert.ok(c, 'the cluster has an endpoint');
    await fn(c, accepted);
  } finally {
    diagnostics.unsubscribe('net.server.socket', onSocket);
  }
}

before(async () => {
  store = new SqliteStore({ path: ':memory:' });
  clock = new ManualClock(Date.now());
  pki = new StorePki({ store, clock, encryptionKey: KEY });
  access = new WorkloadAccess({ pki, clock });
  emulator = newEmulator();
  await emulator.start();
  await createCapiCluster(store, CLUSTER, { displayName: 'prod' });
});

after(async () => {
  await emulator.stop();
  await store.close();
});

describe('an emulated workload cluster', () => {
  test('has no API before a control-plane server is provisioned', async () => {
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'prod-cp-a',
      controlPlane: true,
      zone: 'az-1',
      ip: '10.0.0.11',
      boot: { role: 'init' },
      provisioned: false,
    });
    await s();
    assert.equal((await capiCluster()).metadata.annotations[CapiAnnotations.workloadEndpoint], undefined);
    assert.equal(await access.forCluster({ ...(await capiCluster()), spec: {} }), undefined);
  });

  test('a provisioned control-plane machine runs "kubeadm init": the API is served and announced on the CAPI Cluster', async () => {
    await provision(store, 'prod-cp-a');
    await s();
    const endpoint = (await capiCluster()).metadata.annotations[CapiAnnotations.workloadEndpoint];
    assert.match(endpoint ?? '', /^https:\/\/127\.0\.0\.1:\d+$/);
    const c = await client();
    assert.equal(c.server, endpoint);
    const v = await c.version();
    assert.equal(v.gitVersion, 'v1.31.4');
    const nodes = await c.listNodes();
    assert.equal(nodes.length, 1);
    const n = nodes[0]!;
    assert.equal(n.metadata.name, 'prod-cp-a');
    assert.equal(n.metadata.labels?.['topology.kubernetes.io/zone'], 'az-1');
    assert.equal(n.metadata.labels?.['node-role.kubernetes.io/control-plane'], '');
    assert.equal(n.metadata.labels?.['kubernetes.io/hostname'], 'prod-cp-a');
    assert.equal(n.status.nodeInfo?.kubeletVersion, 'v1.31.4');
    assert.equal(n.status.nodeInfo?.osImage, 'Magnetar emulated node');
    const m = (await store.get<{ spec: { providerID: string } } & CapiClusterObject>(
      CapiTypes.Machine,
      PROJECT,
      'prod-cp-a',
    ))!;
    assert.equal(n.spec.providerID, m.spec.providerID);
    assert.deepEqual(
      n.status.addresses?.find((a) => a.type === 'InternalIP'),
      { type: 'InternalIP', address: '10.0.0.11' },
    );
    assert.equal(
      n.status.conditions?.find((x) => x.type === 'Ready')?.status,
      'False',
      'NotReady right after registering',
    );
  });

  test("the node turns Ready shortly after, and kubeadm's system pods run", async () => {
    await s(3000);
    const c = await client();
    const n = (await c.getNode('prod-cp-a'))!;
    assert.equal(n.status.conditions?.find((x) => x.type === 'Ready')?.status, 'True');
    await s(1000);
    const pods = await c.listPods({ namespace: 'kube-system' });
    const names = pods.map((p) => p.metadata.name).sort();
    for (const component of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
      assert.ok(names.includes(`${component}-prod-cp-a`), component);
    assert.equal(pods.filter((p) => p.metadata.name.startsWith('kube-proxy-')).length, 1);
    const dns = pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns');
    assert.equal(dns.length, 2);
    assert.ok(dns.every((p) => p.status.phase === 'Running' && p.spec.nodeName === 'prod-cp-a'));
  });

  test('a node list answers each change of the nodes, with the version of the change', async () => {
    const c = await client();
    const listed = async () => {
      // The list as it comes over the wire (listNodes keeps only the items).
      const http = (
        c as unknown as { http: { send(r: { method: string; path: string }): Promise<{ body: unknown }> } }
      ).http;
      const body = (await http.send({ method: 'GET', path: '/api/v1/nodes' })).body as {
        kind: string;
        metadata: { resourceVersion: string };
        items: { metadata: { name: string }; spec: { unschedulable?: boolean } }[];
      };
      assert.equal(body.kind, 'NodeList');
      return body;
    };
    const first = await listed();
    assert.equal((await listed()).metadata.resourceVersion, first.metadata.resourceVersion, 'unchanged');
    await c.cordon('prod-cp-a');
    const cordoned = await listed();
    assert.equal(cordoned.items[0]!.spec.unschedulable, true);
    assert.ok(Number(cordoned.metadata.resourceVersion) > Number(first.metadata.resourceVersion));
    await c.uncordon('prod-cp-a');
    const back = await listed();
    assert.equal(back.items[0]!.spec.unschedulable, undefined);
    assert.ok(Number(back.metadata.resourceVersion) > Number(cordoned.metadata.resourceVersion));
    const node = (await c.getNode('prod-cp-a'))!;
    assert.deepEqual(back.items[0], node, 'the listed node is the node as read alone');
  });

  test("a client's requests to a cluster share one kept-alive connection", () =>
    withAcceptedSockets(async (c, accepted) => {
      await c.version();
      await c.listNodes();
      await c.getNode('prod-cp-a');
      await c.listPods({ namespace: 'kube-system' });
      assert.equal(accepted.length, 1, 'four requests, one TLS connection');
    }));

  test('a burst of requests queues on two connections, which carry the next burst: no new handshake', () =>
    withAcceptedSockets(async (c, accepted) => {
      const burst = () =>
        Promise.all([
          c.listNodes(),
          c.getNode('prod-cp-a'),
          c.version(),
          c.listPods({ namespace: 'kube-system' }),
        ]);
      await burst();
      const opened = accepted.length;
      assert.ok(opened >= 1 && opened <= 2, `${opened} connections for four requests at once`);
      await burst();
      await burst();
      assert.equal(accepted.length, opened, 'the later bursts reuse them');
    }));

  test('a node watch has a connection of its own: requests go on while it is open', () =>
    withAcceptedSockets(async (c, accepted) => {
      const { resourceVersion } = await c.listNodesAt();
      const before = accepted.length;
      assert.equal(before, 1);
      const stop = new AbortController();
      const watching = c.watchNodes(resourceVersion, () => undefined, {
        timeoutSeconds: 60,
        signal: stop.signal,
      });
      try {
        // a new connection, though the list's connection is open and idle
        await eventually(() => accepted.length === 2);
        const answers = await Promise.all([
          c.listNodes(),
          c.getNode('prod-cp-a'),
          c.version(),
          c.listNodes(),
        ]);
        assert.equal(answers.length, 4);
        assert.ok(
          accepted.length <= 3,
          `${accepted.length} connections: the watch's and at most two for requests`,
        );
      } finally {
        stop.abort();
        await watching.catch(() => undefined);
      }
    }));

  test('a client stays, with its connection, when the PKI issues a new certificate under the same CA', async () => {
    // A PKI that keeps one cluster's client certificate at a time.
    const small = new StorePki({ store, clock, encryptionKey: KEY, cacheSize: 1 });
    const access = new WorkloadAccess({ pki: small, clock });
    const first = (await access.forCluster(await capiCluster()))!;
    const before = await small.clientTlsOptions(pkiRef(CLUSTER));
    await small.clientTlsOptions(pkiRef('another-cluster'));
    assert.notEqual((await small.clientTlsOptions(pkiRef(CLUSTER))).cert, before.cert, 'issued again');
    const again = (await access.forCluster(await capiCluster()))!;
    assert.equal(again, first);
    assert.equal((await again.listNodes()).length, 1);
  });

  test('a request on a kept-alive connection the server has just closed is sent again on a new one', () =>
    withAcceptedSockets(async (c, accepted) => {
      await c.listNodes();
      // The server drops the idle connection; the client has not seen it go when it sends.
      accepted[0]!.destroy();
      assert.equal((await c.listNodes()).length, 1);
      assert.equal(accepted.length, 2);
    }));

  test('a node watch streams the current nodes, then their changes', async () => {
    const c = await client();
    const w = await watch(c, '/api/v1/nodes?watch=true');
    try {
      const added = await w.next();
      assert.equal(added.type, 'ADDED');
      assert.equal(added.object.metadata.name, 'prod-cp-a');
      await c.cordon('prod-cp-a');
      const modified = await w.next();
      assert.equal(modified.type, 'MODIFIED');
      assert.equal(modified.object.spec?.unschedulable, true);
      await c.uncordon('prod-cp-a');
    } finally {
      w.close();
    }
  });

  test("the controllers follow a cluster's nodes with one list and a watch: reads between changes send nothing", async () => {
    const paths: string[] = [];
    const onRequest = (m: unknown) => paths.push((m as { request: IncomingMessage }).request.url ?? '');
    const servers: Socket[] = [];
    const onSocket = (m: unknown) => servers.push((m as { socket: Socket }).socket);
    diagnostics.subscribe('http.server.request.start', onRequest);
    diagnostics.subscribe('net.server.socket', onSocket);
    const c = (await new WorkloadAccess({ pki, clock }).forCluster(await capiCluster()))!;
    const nodes = new NodeSnapshots(async () => c, clock);
    // no list is fresh enough (the clock stands still): only the watch saves the call
    const read = async () => (await nodes.get(await capiCluster(), -1))!;
    try {
      assert.equal((await read()).byName.size, 1);
      for (let i = 0; i < 5; i++) assert.equal((await read()).byName.size, 1);
      await eventually(() => paths.length === 2);
      assert.equal(paths[0], '/api/v1/nodes');
      assert.match(paths[1]!, /^\/api\/v1\/nodes\?watch=true&resourceVersion=\d+&timeoutSeconds=\d+$/);
      assert.equal(nodes.watching, 1);

      await c.cordon('prod-cp-a');
      await eventually(async () => (await read()).byName.get('prod-cp-a')?.spec?.unschedulable === true);
      assert.deepEqual(
        paths.slice(2).map((p) => p.split('?')[0]),
        ['/api/v1/nodes/prod-cp-a'],
        'the change came over the watch: no list after the patch',
      );
      await c.uncordon('prod-cp-a');
      await eventually(async () => (await read()).byName.get('prod-cp-a')?.spec?.unschedulable !== true);

      // Invalidated (a node was deleted): the next read lists again; the watch goes on.
      const listed = () => paths.filter((p) => p === '/api/v1/nodes').length;
      const watches = () => paths.filter((p) => p.includes('watch=true')).length;
      nodes.invalidate(await capiCluster());
      assert.equal((await read()).byName.size, 1);
      assert.deepEqual([listed(), watches(), nodes.watching], [2, 1, 1]);

      // The connection goes: the watch ends, and the next read lists again and watches again.
      for (const socket of servers) socket.destroy();
      await eventually(() => nodes.watching === 0);
      assert.equal((await read()).byName.size, 1);
      assert.equal(listed(), 3);
      await eventually(() => nodes.watching === 1 && watches() === 2);
    } finally {
      nodes.close();
      diagnostics.unsubscribe('http.server.request.start', onRequest);
      diagnostics.unsubscribe('net.server.socket', onSocket);
    }
    assert.equal(nodes.watching, 0, 'closed: no watch left open');
  });

  test('a worker whose join token is not in the cluster does not join', async () => {
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'prod-md-x1',
      controlPlane: false,
      zone: 'az-2',
      ip: '10.0.0.21',
      boot: { role: 'join', token: TOKEN },
    });
    await s();
    assert.deepEqual(
      (await (await client()).listNodes()).map((n) => n.metadata.name),
      ['prod-cp-a'],
    );
  });

  test('a worker with a wrong token secret does not join; the right token lets it join', async () => {
    const c = await client();
    await c.createBootstrapToken({ id: 'abcdef', secret: 'ffffffffffffffff', ttlSeconds: 900 });
    await s();
    assert.equal((await c.listNodes()).length, 1, 'wrong secret: still one node');
    await c.createBootstrapToken({ id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 900 });
    await s();
    const worker = await c.getNode('prod-md-x1');
    assert.ok(worker, 'joined once the token matches');
    assert.equal(worker.metadata.labels?.['topology.kubernetes.io/zone'], 'az-2');
    assert.equal(worker.metadata.labels?.['node-role.kubernetes.io/control-plane'], undefined);
    const token = await c.getSecret('kube-system', 'bootstrap-token-abcdef');
    assert.equal(token?.type, 'bootstrap.kubernetes.io/token');
  });

  test('an expired token does not let a machine join', async () => {
    const c = await client();
    await c.createBootstrapToken({ id: 'zzzzzz', secret: 'aaaaaaaaaaaaaaaa', ttlSeconds: 10 });
    await s(20_000);
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'prod-md-late',
      controlPlane: false,
      boot: { role: 'join', token: 'zzzzzz.aaaaaaaaaaaaaaaa' },
    });
    await s();
    assert.equal(await c.getNode('prod-md-late'), undefined);
    await store.delete(CapiTypes.Machine, PROJECT, 'prod-md-late');
    await s();
  });

  test('draining respects the CoreDNS disruption budget until the replacement runs elsewhere', async () => {
    await s(3000); // worker Ready
    const c = await client();
    const first = await c.drain('prod-cp-a', { timeoutMs: 0 });
    assert.equal(first.done, false);
    assert.equal(first.remaining.length, 1, 'the second CoreDNS replica is held back by the budget');
    assert.match(first.remaining[0]!, /^kube-system\/coredns-/);
    const [ns, pod] = first.remaining[0]!.split('/') as [string, string];
    assert.equal(await c.evict(ns, pod), 'blocked-by-pdb');
    assert.equal((await c.getNode('prod-cp-a'))?.spec.unschedulable, true, 'cordoned');
    await s(1000); // the replacement on the worker starts
    const second = await c.drain('prod-cp-a', { timeoutMs: 0 });
    assert.deepEqual(second, { done: true, remaining: [] });
    const onCp = (await c.listPods({ nodeName: 'prod-cp-a' })).map((p) => p.metadata.name);
    assert.ok(
      onCp.some((n) => n.startsWith('kube-proxy-')),
      'DaemonSet pods stay',
    );
    assert.ok(onCp.includes('etcd-prod-cp-a'), 'static pods stay');
    const dns = (await c.listPods({ namespace: 'kube-system' })).filter(
      (p) => p.metadata.labels?.['k8s-app'] === 'kube-dns',
    );
    assert.ok(dns.every((p) => p.spec.nodeName === 'prod-md-x1'));
    assert.equal(await c.evict('kube-system', 'no-such-pod'), 'gone');
    await c.uncordon('prod-cp-a');
    assert.equal((await c.getNode('prod-cp-a'))?.spec.unschedulable, undefined);
  });

  test('a node goes away with its machine, with its pods', async () => {
    const c = await client();
    await c.drain('prod-md-x1', { timeoutMs: 0 });
    await store.delete(CapiTypes.Machine, PROJECT, 'prod-md-x1');
    await s();
    assert.equal(await c.getNode('prod-md-x1'), undefined);
    assert.equal((await c.listPods({ nodeName: 'prod-md-x1' })).length, 0);
  });

  test('a node deleted through the API while its machine is deleted stays gone', async () => {
    await createMachine(store, pki, {
      cluster: CLUSTER,
      name: 'prod-md-y1',
      controlPlane: false,
      boot: { role: 'join', token: TOKEN },
    });
    await s(3000);
    const c = await client();
    assert.ok(await c.getNode('prod-md-y1'));
    const m = (await store.get(CapiTypes.Machine, PROJECT, 'prod-md-y1'))!;
    await store.update({ ...m, metadata: { ...m.metadata, finalizers: ['machine.cluster.x-k8s.io'] } });
    await store.delete(CapiTypes.Machine, PROJECT, 'prod-md-y1');
    await c.deleteNode('prod-md-y1');
    await c.deleteNode('prod-md-y1'); // already gone: fine
    await s();
    assert.equal(await c.getNode('prod-md-y1'), undefined);
  });

  test('the node watch tells which node joined, changed readiness or left; a cordon is not news', async () => {
    const servers: Socket[] = [];
    const onSocket = (m: unknown) => servers.push((m as { socket: Socket }).socket);
    diagnostics.subscribe('net.server.socket', onSocket);
    const c = (await new WorkloadAccess({ pki, clock }).forCluster(await capiCluster()))!;
    const nodes = new NodeSnapshots(async () => c, clock);
    const told: string[] = [];
    const stopTelling = nodes.onNodeChange((cluster, node) =>
      told.push(`${cluster.name} ${node.metadata.name} ${nodeReadyCondition(node)?.status}`),
    );
    try {
      await nodes.get(await capiCluster(), -1);
      await eventually(() => nodes.watching === 1);
      assert.deepEqual(told, [], 'the first list is not news: its reader is looking already');

      await c.cordon('prod-cp-a');
      await c.uncordon('prod-cp-a');
      await createMachine(store, pki, {
        cluster: CLUSTER,
        name: 'prod-md-z1',
        controlPlane: false,
        boot: { role: 'join', token: TOKEN },
      });
      await s();
      await eventually(() => told.length === 1);
      await s(3000);
      await eventually(() => told.length === 2);
      assert.deepEqual(told, [`${CLUSTER} prod-md-z1 False`, `${CLUSTER} prod-md-z1 True`]);

      // Without a watch (the connection went), the next list tells what changed meanwhile.
      for (const socket of servers) socket.destroy();
      await eventually(() => nodes.watching === 0);
      await store.delete(CapiTypes.Machine, PROJECT, 'prod-md-z1');
      await s();
      assert.equal(await c.getNode('prod-md-z1'), undefined);
      assert.equal(told.length, 2);
      await nodes.get(await capiCluster(), -1);
      assert.deepEqual(told.slice(2), [`${CLUSTER} prod-md-z1 True`], 'gone, as last seen');

      stopTelling();
      await eventually(() => nodes.watching === 1);
      await createMachine(store, pki, {
        cluster: CLUSTER,
        name: 'prod-md-z2',
        controlPlane: false,
        boot: { role: 'join', token: TOKEN },
      });
      await s(3000);
      await eventually(async () => (await nodes.get(await capiCluster(), -1))!.byName.has('prod-md-z2'));
      await store.delete(CapiTypes.Machine, PROJECT, 'prod-md-z2');
      await s();
    } finally {
      nodes.close();
      diagnostics.unsubscribe('net.server.socket', onSocket);
    }
    assert.equal(told.length, 3, 'nothing told after unsubscribing');
  });

  test('a certificate without cluster-admin groups may read discovery but not nodes', async () => {
    const { generateKeyPairSync, createPrivateKey } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const x509 = await import('@peculiar/x509');
    const { webcrypto } = await import('node:crypto');
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const priv = await webcrypto.subtle.importKey(
      'pkcs8',
      createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' }),
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      ['sign'],
    );
    const pub = await webcrypto.subtle.importKey(
      'spki',
      (await import('node:crypto')).createPublicKey(privateKey).export({ type: 'spki', format: 'der' }),
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      ['verify'],
    );
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=bob, O=dev',
      keys: { privateKey: priv, publicKey: pub },
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    });
    const ref = { namespace: PROJECT, name: CLUSTER, displayName: 'prod' };
    const cert = await pki.signCsr(ref, csr.toString('pem'), { allowSystemMasters: false });
    const bob = new WorkloadClient({
      server: (await client()).server,
      tls: { ca: await pki.caPem(ref), cert, key: keyPem },
      clock,
    });
    assert.equal((await bob.version()).gitVersion, 'v1.31.4');
    await assert.rejects(
      bob.listNodes(),
      (e: unknown) =>
        e instanceof NotAllowedError && /User "bob" cannot list resource "nodes"/.test(e.message),
    );
  });

  test('Secrets and namespaces follow Kubernetes rules and errors', async () => {
    const c = await client();
    const raw = (method: string, path: string, body?: unknown) => call(c, method, path, body);
    const created = await raw('POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'db' },
      stringData: { password: 's3cret' },
    });
    assert.equal(created.status, 201);
    assert.deepEqual((created.body as { data: unknown }).data, {
      password: Buffer.from('s3cret').toString('base64'),
    });
    assert.equal((created.body as { type: string }).type, 'Opaque');
    const dup = await raw('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'db' } });
    assert.equal(dup.status, 409);
    assert.equal((dup.body as { reason: string }).reason, 'AlreadyExists');
    const bad = await raw('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'Not_Valid' } });
    assert.equal(bad.status, 422);
    assert.equal((bad.body as { kind: string; reason: string }).reason, 'Invalid');
    const nons = await raw('POST', '/api/v1/namespaces/nope/configmaps', { metadata: { name: 'x' } });
    assert.equal(nons.status, 404);
    assert.match((nons.body as { message: string }).message, /namespaces "nope" not found/);
    const missing = await raw('GET', '/api/v1/namespaces/default/secrets/none');
    assert.deepEqual([missing.status, (missing.body as { kind: string }).kind], [404, 'Status']);
    const pod = await raw('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'web' } });
    assert.equal(pod.status, 405, 'no workloads run in an emulated cluster');
    assert.equal((await raw('DELETE', '/api/v1/namespaces/kube-system')).status, 403);
    assert.equal((await raw('POST', '/api/v1/namespaces', { metadata: { name: 'scratch' } })).status, 201);
    assert.equal(
      (await raw('POST', '/api/v1/namespaces/scratch/secrets', { metadata: { name: 's' } })).status,
      201,
    );
    assert.equal((await raw('DELETE', '/api/v1/namespaces/scratch')).status, 200);
    assert.equal(
      (await raw('GET', '/api/v1/namespaces/scratch/secrets/s')).status,
      404,
      'a namespace takes its secrets with it',
    );
    assert.equal((await raw('DELETE', '/api/v1/namespaces/default/secrets/db')).status, 200);
    const root = await raw('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    assert.equal(
      (root.body as { data: Record<string, string> }).data['ca.crt']!.trim(),
      (await pki.caPem({ namespace: PROJECT, name: CLUSTER, displayName: 'prod' })).trim(),
    );
  });

  test('namespaces and secrets users create persist across a restart; nodes are re-derived from the machines', async () => {
    const c = await client();
    const endpoint = c.server;
    const raw = (method: string, path: string, body?: unknown) => call(c, method, path, body);
    assert.equal((await raw('POST', '/api/v1/namespaces', { metadata: { name: 'team-a' } })).status, 201);
    assert.equal(
      (
        await raw('POST', '/api/v1/namespaces/team-a/configmaps', {
          metadata: { name: 'settings' },
          data: { a: '1' },
        })
      ).status,
      201,
    );
    await setNodeRef(store, 'prod-cp-a');
    await emulator.stop();
    emulator = newEmulator();
    await emulator.start();
    await s();
    const again = await client();
    assert.equal(again.server, endpoint, 'same port after the restart');
    const node = await again.getNode('prod-cp-a');
    assert.equal(
      node?.status.conditions?.find((x) => x.type === 'Ready')?.status,
      'True',
      'a joined node is Ready at once after a restart',
    );
    const cm = await call(again, 'GET', '/api/v1/namespaces/team-a/configmaps/settings');
    assert.equal(cm.status, 200);
    assert.deepEqual((cm.body as { data: unknown }).data, { a: '1' });
    assert.ok(await again.getSecret('kube-system', 'bootstrap-token-abcdef'));
  });

  test('after a CA rotation the old client certificate is refused; a new one works', async () => {
    const old = await client();
    await old.listNodes();
    await pki.rotateCa({ namespace: PROJECT, name: CLUSTER, displayName: 'prod' });
    await s();
    await assert.rejects(old.listNodes(), /socket hang up|ECONNRESET|certificate|alert/i);
    const fresh = await client();
    assert.notEqual(fresh, old);
    assert.equal((await fresh.listNodes()).length, 1);
  });

  test('nothing keeps running while the cluster is idle', async () => {
    await s(10_000);
    assert.equal(clock.pendingTimers, 0);
  });

  test('deleting the CAPI cluster stops its API and removes what users stored in it', async () => {
    const c = await client();
    await store.delete(CapiTypes.Machine, PROJECT, 'prod-cp-a');
    await store.delete(CapiTypes.Cluster, PROJECT, CLUSTER);
    await s();
    await assert.rejects(c.version(), /ECONNREFUSED|Unreachable|socket/i);
    assert.equal(
      (await store.list('WorkloadNamespace.workload.magnetar.io', { namespace: PROJECT })).items.length,
      0,
    );
    assert.equal(
      (await store.list('WorkloadSecret.workload.magnetar.io', { namespace: PROJECT })).items.length,
      0,
    );
    assert.equal(emulator.servingCount, 0);
  });
});

interface WatchEvent {
  type: string;
  object: { metadata: { name: string }; spec?: { unschedulable?: boolean } };
}

/** Follow a watch: `next()` resolves with each event as it arrives. */
function watch(c: WorkloadClient, path: string): Promise<{ next(): Promise<WatchEvent>; close(): void }> {
  const tls = (c as unknown as { http: { tls: { ca: string; cert: string; key: string } } }).http.tls;
  const url = new URL(c.server);
  const queue: WatchEvent[] = [];
  const waiters: ((e: WatchEvent) => void)[] = [];
  const push = (e: WatchEvent) => {
    const w = waiters.shift();
    if (w) w(e);
    else queue.push(e);
  };
  return new Promise((resolve, reject) => {
    const r = request(
      { host: url.hostname, port: Number(url.port), method: 'GET', path, ...tls, agent: false },
      (res) => {
        let buf = '';
        res.on('data', (d: Buffer) => {
          buf += d.toString();
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            push(JSON.parse(buf.slice(0, nl)) as WatchEvent);
            buf = buf.slice(nl + 1);
          }
        });
        res.on('error', () => undefined);
        resolve({
          next: () => {
            const e = queue.shift();
            return e ? Promise.resolve(e) : new Promise<WatchEvent>((ok) => waiters.push(ok));
          },
          close: () => r.destroy(),
        });
      },
    );
    r.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
    r.end();
  });
}

/** A raw request with the client's credentials (for resources the client has no method for). */
function call(
  c: WorkloadClient,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const tls = (c as unknown as { http: { tls: { ca: string; cert: string; key: string } } }).http.tls;
  const url = new URL(c.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: url.hostname,
        port: Number(url.port),
        method,
        path,
        ...tls,
        agent: false,
        headers: payload ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined }),
        );
      },
    );
    r.on('error', reject);
    r.end(payload);
  });
}
