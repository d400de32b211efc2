import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argsToPatch, parseLabels } from '../../src/cli/label-args.ts';
import { UsageError } from '../../src/cli/coe-errors.ts';
import { pyRepr } from '../../src/cli/py-repr.ts';

test('a single --labels is split on commas and semicolons', () => {
  assert.deepEqual(parseLabels(['kube_tag=v1.27.3,container_runtime=containerd;availability_zone=AZ-2']), {
    kube_tag: 'v1.27.3',
    container_runtime: 'containerd',
    availability_zone: 'AZ-2',
  });
});

test('several --labels are taken as they are, commas included', () => {
  assert.deepEqual(parseLabels(['a=1,b=2', 'c=3']), { a: '1,b=2', c: '3' });
});

test('a single label whose value holds a comma keeps it', () => {
  assert.deepEqual(parseLabels(['no_proxy=a,b']), { no_proxy: 'a,b' });
});

test('a repeated label key joins its values with a comma', () => {
  assert.deepEqual(parseLabels(['a=1', 'a=2']), { a: '1,2' });
  assert.deepEqual(parseLabels(['a=1;a=2']), { a: '1,2' });
});

test('a value may contain "="', () => {
  assert.deepEqual(parseLabels(['selector=x=y', 'k=v']), { selector: 'x=y', k: 'v' });
});

test('no --labels gives an empty map', () => {
  assert.deepEqual(parseLabels(undefined), {});
  assert.deepEqual(parseLabels([]), {});
});

test('a label without "=" is a usage error naming it', () => {
  assert.throws(
    () => parseLabels(['a=1,b=2,oops']),
    (err: unknown) => err instanceof UsageError && /not oops/.test(err.message),
  );
  assert.throws(() => parseLabels(['a=1', 'oops']), UsageError);
});

test('update values are JSON-decoded when they parse, strings otherwise', () => {
  assert.deepEqual(
    argsToPatch('replace', ['node_count=4', 'docker_volume_size=20', 'public=true', 'name=x', '/keypair=k2']),
    [
      { op: 'replace', path: '/node_count', value: 4 },
      { op: 'replace', path: '/docker_volume_size', value: 20 },
      { op: 'replace', path: '/public', value: true },
      { op: 'replace', path: '/name', value: 'x' },
      { op: 'replace', path: '/keypair', value: 'k2' },
    ],
  );
});

test('label updates are sent as a Python dict literal, as Magnum parses them', () => {
  assert.deepEqual(argsToPatch('replace', ['labels=kube_tag=v1.27.3,container_runtime=containerd']), [
    { op: 'replace', path: '/labels', value: "{'kube_tag': 'v1.27.3', 'container_runtime': 'containerd'}" },
  ]);
  assert.deepEqual(argsToPatch('add', ['health_status_reason=api=ok']), [
    { op: 'add', path: '/health_status_reason', value: "{'api': 'ok'}" },
  ]);
});

test('remove needs only the path', () => {
  assert.deepEqual(argsToPatch('remove', ['fixed_network', '/labels']), [
    { op: 'remove', path: '/fixed_network' },
    { op: 'remove', path: '/labels' },
  ]);
});

test('add or replace without "=" is a usage error', () => {
  assert.throws(() => argsToPatch('replace', ['node_count']), UsageError);
});

test('Python repr matches what the openstack client prints', () => {
  assert.equal(
    pyRepr({ a: "it's", b: 'say "hi"', c: 'both \' and "', d: 'tab\there' }),
    `{'a': "it's", 'b': 'say "hi"', 'c': 'both \\' and "', 'd': 'tab\\there'}`,
  );
  assert.equal(pyRepr([1, 2.5, null, true, false, 'x']), "[1, 2.5, None, True, False, 'x']");
  assert.equal(pyRepr({}), '{}');
  assert.equal(pyRepr('back\\slash'), "'back\\\\slash'");
});
