import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CapiTypes,
  MagnumTypes,
  magnumStatus,
  type ApiObject,
  type MagnumClusterObject,
  type NodeGroupObject,
} from '../../src/domain/index.ts';
import {
  capi,
  createCluster,
  createKeypair,
  eventually,
  startHarness,
  waitForStatus,
  type Harness,
} from '../engine/harness.ts';

/**
 * What kubectl may do to the Cluster API objects of a Magnum-built cluster, over real HTTP
 * with the provisioning engine in virtual time: scaling is a Magnum resize within the
 * operator's rules, other spec edits and deletes are refused, a Machine may name its node
 * group's templates.
 */

let h: Harness;
type Scalable = ApiObject<{ replicas: number; template?: Record<string, unknown> }, Record<string, unknown>>;
let md: Scalable;
let kcp: Scalable;
let capiName = '';

const CORE = '/apis/cluster.x-k8s.io/v1beta2';
const CP = '/apis/controlplane.cluster.x-k8s.io/v1beta2';

interface Reply {
  status: number;
  body: {
    reason?: string;
    message?: string;
    details?: { causes?: { field: string; reason: string }[] };
    spec?: Record<string, unknown>;
    metadata?: { name: string; uid: string; resourceVersion: string };
  };
}

async function k8s(method: string, path: string, body?: unknown, contentType?: string): Promise<Reply> {
  const res = await fetch(`${h.m.url}/k8s${path}`, {
    method,
    headers: {
      authorization: `Bearer ${await h.user.token()}`,
      ...(body === undefined ? {} : { 'content-type': contentType ?? 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Reply['body'] };
}

const ns = () => `/namespaces/${h.projectId}`;
const mergePatch = 'application/merge-patch+json';

async function group(name: string): Promise<NodeGroupObject> {
  const mc = (await h.store.get<MagnumClusterObject>(MagnumTypes.Cluster, h.projectId, 'k'))!;
  return (await h.store.get<NodeGroupObject>(
    MagnumTypes.NodeGroup,
    h.projectId,
    `${mc.metadata.uid}.${name}`,
  ))!;
}

async function status(): Promise<string> {
  return magnumStatus((await h.store.get<MagnumClusterObject>(MagnumTypes.Cluster, h.projectId, 'k'))!);
}

void describe('kubectl on the objects of a Magnum-built cluster', { timeout: 5 * 60_000 }, () => {
  before(async () => {
    h = await startHarness();
    await createKeypair(h);
    await createCluster(h, 'k', { master_count: 1, node_count: 2, labels: { min_node_count: '2' } });
    const mid = await eventually(
      h,
      'the MachineDeployment',
      async () => (await capi(h, CapiTypes.MachineDeployment))[0],
    );
    // While the cluster is being created, a resize is refused as Magnum refuses it.
    const early = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${mid.metadata.name}/scale`,
      { spec: { replicas: 3 } },
      mergePatch,
    );
    assert.equal(early.status, 409, JSON.stringify(early.body));
    assert.match(early.body.message!, /CREATE_IN_PROGRESS; resize it once it reaches a \*_COMPLETE status/);
    await waitForStatus(h, 'k', 'CREATE_COMPLETE');
    md = (await capi<typeof md>(h, CapiTypes.MachineDeployment))[0]!;
    kcp = (await capi<typeof kcp>(h, CapiTypes.KubeadmControlPlane))[0]!;
    capiName = (await capi(h, CapiTypes.Cluster))[0]!.metadata.name;
  });
  after(async () => {
    await h?.close();
  });

  void test('scaling a node group above 10 or below its min_node_count is 422 on spec.replicas, and nothing changes', async () => {
    for (const replicas of [11, 1]) {
      const r = await k8s(
        'PATCH',
        `${CORE}${ns()}/machinedeployments/${md.metadata.name}/scale`,
        { spec: { replicas } },
        mergePatch,
      );
      assert.equal(r.status, 422);
      assert.equal(r.body.reason, 'Invalid');
      assert.equal(r.body.details?.causes?.[0]?.field, 'spec.replicas');
      assert.match(
        r.body.message!,
        replicas === 11 ? /exceeds the limit of 10 worker nodes/ : /min_node_count = 2/,
      );
    }
    const put = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}`,
      { spec: { replicas: 12 } },
      mergePatch,
    );
    assert.equal(put.status, 422);
    const even = await k8s(
      'PATCH',
      `${CP}${ns()}/kubeadmcontrolplanes/${kcp.metadata.name}/scale`,
      { spec: { replicas: 2 } },
      mergePatch,
    );
    assert.equal(even.status, 422);
    assert.match(even.body.message!, /even/);
    const now = (await h.store.get<typeof md>(CapiTypes.MachineDeployment, h.projectId, md.metadata.name))!;
    assert.equal(now.spec.replicas, 2);
    assert.equal((await group('default-worker')).spec.nodeCount, 2);
    assert.equal(await status(), 'CREATE_COMPLETE');
  });

  void test('other spec edits, the cluster labels and deletes are refused with the openstack coe command to use', async () => {
    const edit = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}`,
      { spec: { template: { spec: { version: 'v1.32.1' } } } },
      mergePatch,
    );
    assert.equal(edit.status, 422);
    assert.equal(edit.body.details?.causes?.[0]?.reason, 'FieldValueForbidden');
    assert.match(edit.body.message!, /spec: Forbidden: managed by Magnum .*openstack coe/);
    const relabel = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}`,
      { metadata: { labels: { 'magnum.magnetar.io/cluster-uuid': null } } },
      mergePatch,
    );
    assert.equal(relabel.status, 422);
    const label = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}`,
      { metadata: { labels: { team: 'blue' } } },
      mergePatch,
    );
    assert.equal(label.status, 200, 'other labels may change');
    const ms = (await capi(h, CapiTypes.MachineSet))[0]!;
    const msScale = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinesets/${ms.metadata.name}/scale`,
      { spec: { replicas: 3 } },
      mergePatch,
    );
    assert.equal(msScale.status, 422);
    assert.match(msScale.body.message!, /scale its MachineDeployment/);
    for (const [path, hint] of [
      [
        `${CORE}${ns()}/machinedeployments/${md.metadata.name}`,
        /openstack coe nodegroup delete k default-worker/,
      ],
      [`${CORE}${ns()}/clusters/${capiName}`, /openstack coe cluster delete k/],
      [`${CP}${ns()}/kubeadmcontrolplanes/${kcp.metadata.name}`, /deleted with its cluster/],
    ] as const) {
      const r = await k8s('DELETE', path);
      assert.equal(r.status, 403, path);
      assert.equal(r.body.reason, 'Forbidden');
      assert.match(r.body.message!, hint);
    }
    assert.equal(
      (await capi(h, CapiTypes.MachineDeployment)).filter((o) => o.metadata.deletionTimestamp).length,
      0,
    );
    const fake = await k8s('POST', `${CORE}${ns()}/machinedeployments`, {
      metadata: { name: 'fake', labels: { 'magnum.magnetar.io/cluster-uuid': 'x' } },
      spec: { ...md.spec, replicas: 1 },
    });
    assert.equal(fake.status, 422);
  });

  void test('a hand-made MachineDeployment holds at most 10 replicas too', async () => {
    const r = await k8s('POST', `${CORE}${ns()}/machinedeployments`, {
      metadata: { name: 'mine' },
      spec: {
        ...md.spec,
        replicas: 11,
        selector: { matchLabels: { pool: 'mine' } },
        template: {
          ...md.spec.template,
          metadata: { labels: { pool: 'mine' } },
        },
      },
    });
    assert.equal(r.status, 422);
    assert.match(r.body.message!, /exceeds the limit of 10/);
  });

  void test('a dry-run scale changes nothing; a scale within the rules is a Magnum resize that completes', async () => {
    const dry = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}/scale?dryRun=All`,
      { spec: { replicas: 3 } },
      mergePatch,
    );
    assert.equal(dry.status, 200);
    assert.equal((await group('default-worker')).spec.nodeCount, 2);
    const r = await k8s(
      'PATCH',
      `${CORE}${ns()}/machinedeployments/${md.metadata.name}/scale`,
      { spec: { replicas: 3 } },
      mergePatch,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.spec?.replicas, 3);
    assert.equal((await group('default-worker')).spec.nodeCount, 3);
    assert.equal(await status(), 'UPDATE_IN_PROGRESS');
    await waitForStatus(h, 'k', 'UPDATE_COMPLETE');
    const workers = (
      await capi<ApiObject<Record<string, unknown>, { phase?: string }>>(h, CapiTypes.Machine)
    ).filter((m) => m.metadata.labels['cluster.x-k8s.io/deployment-name'] === md.metadata.name);
    assert.equal(workers.length, 3);
  });

  void test('scaling the control plane to an odd count resizes the master node group', async () => {
    const r = await k8s(
      'PATCH',
      `${CP}${ns()}/kubeadmcontrolplanes/${kcp.metadata.name}/scale`,
      { spec: { replicas: 3 } },
      mergePatch,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await group('default-master')).spec.nodeCount, 3);
    await waitForStatus(h, 'k', 'UPDATE_COMPLETE');
    const masters = (await capi(h, CapiTypes.Machine)).filter(
      (m) => 'cluster.x-k8s.io/control-plane' in m.metadata.labels && !m.metadata.deletionTimestamp,
    );
    assert.equal(masters.length, 3);
  });

  void test('a Machine naming the node group templates gets its own KubeadmConfig and OpenStackMachine', async () => {
    const osmt = (await capi(h, CapiTypes.OpenStackMachineTemplate)).find((t) =>
      t.metadata.name.startsWith(md.metadata.name),
    )!;
    const spec = {
      clusterName: capiName,
      version: 'v1.31.9',
      bootstrap: {
        configRef: {
          apiGroup: 'bootstrap.cluster.x-k8s.io',
          kind: 'KubeadmConfigTemplate',
          name: md.metadata.name,
        },
      },
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'OpenStackMachineTemplate',
        name: osmt.metadata.name,
      },
    };
    const missing = await k8s('POST', `${CORE}${ns()}/machines`, {
      metadata: { name: 'nope' },
      spec: { ...spec, infrastructureRef: { ...spec.infrastructureRef, name: 'no-such-template' } },
    });
    assert.equal(missing.status, 422);
    assert.match(missing.body.message!, /no OpenStackMachineTemplate of that name/);
    assert.equal(
      (await capi(h, CapiTypes.KubeadmConfig)).filter((c) => c.metadata.name === 'nope').length,
      0,
    );

    const created = await k8s('POST', `${CORE}${ns()}/machines`, { metadata: { name: 'extra' }, spec });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const uid = created.body.metadata!.uid;
    const stored = created.body.spec as {
      bootstrap: { configRef: { kind: string } };
      infrastructureRef: { kind: string; name: string };
    };
    assert.equal(stored.bootstrap.configRef.kind, 'KubeadmConfig');
    assert.deepEqual(
      [stored.infrastructureRef.kind, stored.infrastructureRef.name],
      ['OpenStackMachine', 'extra'],
    );
    for (const type of [CapiTypes.KubeadmConfig, CapiTypes.OpenStackMachine]) {
      const o = (await h.store.get<ApiObject>(type, h.projectId, 'extra'))!;
      assert.ok(
        o.metadata.ownerReferences.some((ref) => ref.uid === uid && ref.kind === 'Machine'),
        type,
      );
      assert.ok(!('magnum.magnetar.io/cluster-uuid' in o.metadata.labels));
    }
    // kubectl apply of the same manifest sends the template references again: they stay.
    const again = await k8s('PATCH', `${CORE}${ns()}/machines/extra`, { spec }, mergePatch);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal((again.body.spec as typeof stored).infrastructureRef.kind, 'OpenStackMachine');
    await eventually(h, 'the extra machine Running', async () => {
      const m = await h.store.get<ApiObject<Record<string, unknown>, { phase?: string }>>(
        CapiTypes.Machine,
        h.projectId,
        'extra',
      );
      return m?.status.phase === 'Running';
    });
    assert.equal((await group('default-worker')).spec.nodeCount, 3, 'not part of the node group');
  });
});
