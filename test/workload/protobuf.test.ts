import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InputError } from '../../src/domain/index.ts';
import { decodeKubeProtobuf } from '../../src/workload/emulator/api/protobuf.ts';

// Request bodies exactly as kubectl 1.32 sent them (captured from `kubectl create ...`).
const kubectl = {
  namespace:
    '6b3873000a0f0a02763112094e616d657370616365121b0a130a03666f6f12001a0022002a0032003800420012001a020a001a002200',
  configmap:
    '6b3873000a0f0a0276311209436f6e6669674d6170121d0a130a02636d12001a017822002a0032003800420012060a01611201621a002200',
  secret:
    '6b3873000a0c0a0276311206536563726574121d0a110a017312001a0022002a0032003800420012060a01611201621a001a002200',
};

void test('kubectl create namespace, configmap and secret bodies read as the JSON objects kubectl apply would send', () => {
  assert.deepEqual(decodeKubeProtobuf(Buffer.from(kubectl.namespace, 'hex')), {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'foo' },
  });
  assert.deepEqual(decodeKubeProtobuf(Buffer.from(kubectl.configmap, 'hex')), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'x' },
    data: { a: 'b' },
  });
  // Secret data are bytes on the wire and base64 in JSON
  assert.deepEqual(decodeKubeProtobuf(Buffer.from(kubectl.secret, 'hex')), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data: { a: Buffer.from('b').toString('base64') },
  });
});

void test('bytes that are not the encoding are a 400, a kind the emulator does not read this way a 415', () => {
  const bad = (hex: string) => () => decodeKubeProtobuf(Buffer.from(hex, 'hex'));
  assert.throws(bad('7b7d'), (e: unknown) => e instanceof InputError && e.code === 'BadRequest');
  // truncated in the middle of the object
  assert.throws(
    bad(kubectl.namespace.slice(0, 60)),
    (e: unknown) => e instanceof InputError && e.status === 400,
  );
  // a Deployment (apps/v1) body
  const deployment = Buffer.concat([
    Buffer.from('6b387300', 'hex'),
    Buffer.from([
      0x0a,
      0x15,
      0x0a,
      0x07,
      ...Buffer.from('apps/v1'),
      0x12,
      0x0a,
      ...Buffer.from('Deployment'),
    ]),
  ]);
  assert.throws(
    () => decodeKubeProtobuf(deployment),
    (e: unknown) =>
      e instanceof InputError && e.code === 'UnsupportedMediaType' && /Deployment/.test(e.message),
  );
});
