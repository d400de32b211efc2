import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  acceptsTable,
  apiResourceListDocument,
  buildTable,
  humanDuration,
  jsonMergePatch,
  jsonPatch,
  matchesFieldSelector,
  nodePrinter,
  nodeRoles,
  parseFieldSelector,
  patchTypeOf,
  podPrinter,
  strategicMergePatch,
  InputError,
  UnprocessableError,
  type KubeNode,
  type KubePod,
} from '../../src/domain/index.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('ages as kubectl prints them', () => {
  test("seconds, minutes, hours, days and years with kubectl's cut-offs", () => {
    assert.equal(humanDuration(-5 * S), '<invalid>');
    assert.equal(humanDuration(59 * S), '59s');
    assert.equal(humanDuration(119 * S), '119s');
    assert.equal(humanDuration(2 * M), '2m');
    assert.equal(humanDuration(5 * M + 7 * S), '5m7s');
    assert.equal(humanDuration(45 * M), '45m');
    assert.equal(humanDuration(3 * H + 30 * M), '3h30m');
    assert.equal(humanDuration(20 * H), '20h');
    assert.equal(humanDuration(3 * D + 4 * H), '3d4h');
    assert.equal(humanDuration(30 * D), '30d');
    assert.equal(humanDuration(800 * D), '2y70d');
    assert.equal(humanDuration(9 * 365 * D), '9y');
  });
});

describe('patches', () => {
  test('a merge patch sets, replaces and removes (null) fields', () => {
    assert.deepEqual(
      jsonMergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { b: { c: null, e: 4 }, l: [3] }),
      { a: 1, b: { d: 3, e: 4 }, l: [3] },
    );
  });

  test('cordon and uncordon patches as kubectl sends them', () => {
    const node = { spec: { providerID: 'p' } };
    const cordoned = strategicMergePatch(node, { spec: { unschedulable: true } }) as {
      spec: Record<string, unknown>;
    };
    assert.deepEqual(cordoned.spec, { providerID: 'p', unschedulable: true });
    assert.deepEqual(
      (strategicMergePatch(cordoned, { spec: { unschedulable: null } }) as { spec: unknown }).spec,
      { providerID: 'p' },
    );
  });

  test('a strategic merge patch merges keyed lists and honours $patch: delete', () => {
    const pod = {
      spec: {
        containers: [
          { name: 'a', image: 'x:1' },
          { name: 'b', image: 'y:1' },
        ],
      },
      metadata: { finalizers: ['f1'] },
    };
    const out = strategicMergePatch(pod, {
      spec: {
        containers: [
          { name: 'a', image: 'x:2' },
          { name: 'b', $patch: 'delete' },
          { name: 'c', image: 'z:1' },
        ],
      },
      metadata: { finalizers: ['f2'] },
    });
    assert.deepEqual(out, {
      spec: {
        containers: [
          { name: 'a', image: 'x:2' },
          { name: 'c', image: 'z:1' },
        ],
      },
      metadata: { finalizers: ['f1', 'f2'] },
    });
  });

  test('a JSON patch applies add, replace, remove and test', () => {
    const doc = { metadata: { labels: { a: '1' } }, spec: { taints: [{ key: 'k' }] } };
    const out = jsonPatch(doc, [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'replace', path: '/metadata/labels/a', value: 'x' },
      { op: 'remove', path: '/spec/taints/0' },
      { op: 'test', path: '/metadata/labels/b', value: '2' },
    ]);
    assert.deepEqual(out, { metadata: { labels: { a: 'x', b: '2' } }, spec: { taints: [] } });
    assert.deepEqual(doc.metadata.labels, { a: '1' }, 'the input is not modified');
    assert.throws(
      () => jsonPatch(doc, [{ op: 'test', path: '/metadata/labels/a', value: 'no' }]),
      UnprocessableError,
    );
    assert.throws(() => jsonPatch(doc, [{ op: 'remove', path: '/nope/x' }]), UnprocessableError);
    assert.throws(() => jsonPatch(doc, { op: 'add' }), InputError);
  });

  test('patch content types', () => {
    assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(patchTypeOf('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(patchTypeOf('application/json-patch+json'), 'json');
    assert.equal(patchTypeOf('application/json'), undefined);
  });
});

describe('field selectors', () => {
  test("kubectl drain's spec.nodeName selector and != requirements", () => {
    const sel = parseFieldSelector('spec.nodeName=n1,status.phase!=Succeeded', [
      'spec.nodeName',
      'status.phase',
    ]);
    assert.ok(matchesFieldSelector({ spec: { nodeName: 'n1' }, status: { phase: 'Running' } }, sel));
    assert.ok(!matchesFieldSelector({ spec: { nodeName: 'n1' }, status: { phase: 'Succeeded' } }, sel));
    assert.ok(!matchesFieldSelector({ spec: { nodeName: 'n2' }, status: { phase: 'Running' } }, sel));
    assert.ok(matchesFieldSelector({ metadata: { name: 'x' } }, parseFieldSelector('metadata.name==x')));
    assert.ok(
      matchesFieldSelector(
        { spec: {} },
        parseFieldSelector('spec.unschedulable!=true', ['spec.unschedulable']),
      ),
    );
  });

  test('an unsupported field is refused as Kubernetes does', () => {
    assert.throws(
      () => parseFieldSelector('spec.foo=bar', ['spec.nodeName']),
      (e: unknown) => e instanceof InputError && /field label not supported: spec.foo/.test(e.message),
    );
    assert.throws(() => parseFieldSelector('garbage'), InputError);
  });
});

describe('tables for kubectl get', () => {
  const node: KubeNode = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'n1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'master' },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      nodeInfo: { kubeletVersion: 'v1.31.4', osImage: 'Magnetar emulated node' },
    },
  };

  test('the Accept header kubectl sends asks for a Table', () => {
    assert.ok(
      acceptsTable(
        'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      ),
    );
    assert.ok(!acceptsTable('application/json'));
    assert.ok(!acceptsTable(undefined));
  });

  test('nodes print NAME STATUS ROLES AGE VERSION, then the wide columns', () => {
    const t = buildTable(nodePrinter, [node], {
      resourceVersion: '7',
      nowMs: Date.parse('2026-01-01T00:05:00Z'),
    });
    assert.deepEqual(
      t.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name),
      ['Name', 'Status', 'Roles', 'Age', 'Version'],
    );
    assert.deepEqual(t.rows[0]!.cells.slice(0, 8), [
      'n1',
      'Ready,SchedulingDisabled',
      'control-plane,master',
      '5m',
      'v1.31.4',
      '10.0.0.1',
      '<none>',
      'Magnetar emulated node',
    ]);
    assert.deepEqual(t.rows[0]!.object, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: node.metadata,
    });
    assert.equal(t.metadata.resourceVersion, '7');
    assert.deepEqual(nodeRoles({}), []);
  });

  test('pods print READY, STATUS and RESTARTS from their container statuses', () => {
    const pod: KubePod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'kube-system', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'i' }] },
      status: {
        phase: 'Pending',
        containerStatuses: [
          { name: 'a', ready: false, restartCount: 2, state: { waiting: { reason: 'ContainerCreating' } } },
        ],
      },
    };
    const t = buildTable(podPrinter, [pod], {
      resourceVersion: '1',
      nowMs: Date.parse('2026-01-01T00:00:30Z'),
      includeObject: 'None',
    });
    assert.deepEqual(t.rows[0]!.cells.slice(0, 5), ['p', '0/1', 'ContainerCreating', '2', '30s']);
    assert.equal(t.rows[0]!.object, undefined);
  });
});

describe('discovery', () => {
  test('pods/eviction is listed with the policy group version kubectl drain looks for', () => {
    const doc = apiResourceListDocument('v1', [
      {
        name: 'pods/eviction',
        singularName: '',
        namespaced: true,
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      },
    ]);
    assert.equal(doc.kind, 'APIResourceList');
    assert.equal(doc.groupVersion, 'v1');
    assert.deepEqual(doc.resources[0], {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
  });
});
