import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  OperatorPolicySchema,
  defaultPolicy,
  masterCountProblem,
  missingFieldsReason,
  missingRequiredFields,
  nodeGroupSizeProblem,
  parseKubeTag,
  upgradePathProblem,
} from '../../src/domain/index.ts';

void test('the default policy is the user guide', () => {
  assert.deepEqual(defaultPolicy, {
    serviceAccountRequired: true,
    requiredCreateFields: [
      'cluster_template_id',
      'master_count',
      'master_flavor_id',
      'node_count',
      'flavor_id',
      'keypair',
    ],
    oddMasterCountOnly: true,
    maxNodesPerNodeGroup: 10,
    requireMasterLoadBalancer: true,
    defaultClusterQuota: 20,
    createTimeoutMinutes: 60,
  });
});

void test('an operator can override the numbers; unknown or bad settings are refused', () => {
  const p = OperatorPolicySchema.parse({
    maxNodesPerNodeGroup: 25,
    requiredCreateFields: ['cluster_template_id'],
  });
  assert.equal(p.maxNodesPerNodeGroup, 25);
  assert.equal(p.serviceAccountRequired, true);
  assert.equal(OperatorPolicySchema.safeParse({ maxNodesPerNodeGroup: 0 }).success, false);
  assert.equal(OperatorPolicySchema.safeParse({ requiredCreateFields: ['colour'] }).success, false);
  assert.equal(OperatorPolicySchema.safeParse({ unknownSetting: true }).success, false);
  assert.equal(
    nodeGroupSizeProblem(OperatorPolicySchema.parse({ maxNodesPerNodeGroup: null }), 500, 'x'),
    undefined,
  );
});

void test('required fields: null, absent and empty count as missing; the reason names the CLI options', () => {
  const missing = missingRequiredFields(defaultPolicy, {
    cluster_template_id: 't',
    master_count: 1,
    node_count: 1,
    keypair: null,
    flavor_id: '',
  });
  assert.deepEqual(missing, ['master_flavor_id', 'flavor_id', 'keypair']);
  assert.equal(missingFieldsReason(missing), 'Missing required fields: --master-flavor, --flavor, --keypair');
  assert.deepEqual(
    missingRequiredFields(defaultPolicy, {
      cluster_template_id: 't',
      master_count: 3,
      node_count: 0,
      master_flavor_id: 'm',
      flavor_id: 'f',
      keypair: 'k',
    }),
    [],
  );
});

void test('master counts must be odd and at least one', () => {
  assert.equal(masterCountProblem(defaultPolicy, 1), undefined);
  assert.equal(masterCountProblem(defaultPolicy, 3), undefined);
  assert.match(masterCountProblem(defaultPolicy, 2)!, /even number/);
  assert.match(masterCountProblem(defaultPolicy, 0)!, /at least 1/);
  assert.equal(masterCountProblem({ ...defaultPolicy, oddMasterCountOnly: false }, 2), undefined);
});

void test('Kubernetes tags parse with or without v, patch and suffix', () => {
  assert.deepEqual(parseKubeTag('v1.32.5'), { major: 1, minor: 32, patch: 5 });
  assert.deepEqual(parseKubeTag('1.31'), { major: 1, minor: 31, patch: 0 });
  assert.deepEqual(parseKubeTag('v1.33.0-rc.1'), { major: 1, minor: 33, patch: 0 });
  assert.equal(parseKubeTag('latest'), undefined);
  assert.equal(parseKubeTag(undefined), undefined);
});

void test('upgrades go one minor at a time and never backwards', () => {
  const table: [string | undefined, string | undefined, RegExp | undefined][] = [
    ['v1.31.9', 'v1.32.5', undefined],
    ['v1.32.5', 'v1.32.6', undefined],
    ['v1.32.5', 'v1.32.5', undefined],
    [undefined, 'v1.33.1', undefined],
    ['v1.31.9', 'v1.33.1', /skips a minor version.*next: v1\.32\.x/],
    ['v1.32.5', 'v1.31.9', /backwards/],
    ['v1.32.5', 'v1.32.4', /backwards/],
    ['v1.32.5', 'v2.0.0', /skips a minor/],
    ['v1.32.5', undefined, /no usable kube_tag/],
    ['v1.32.5', 'banana', /no usable kube_tag/],
  ];
  for (const [from, to, problem] of table) {
    const got = upgradePathProblem(from, to);
    if (problem) assert.match(got ?? '', problem, `${from} -> ${to}`);
    else assert.equal(got, undefined, `${from} -> ${to}`);
  }
});
