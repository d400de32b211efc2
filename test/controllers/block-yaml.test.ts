import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { blockYaml } from '../../src/controllers/kubeadm-config/block-yaml.ts';

/** Strings a careless YAML writer turns into something else: booleans, numbers, comments, flows. */
const TRICKY = [
  '',
  ' ',
  'yes',
  'No',
  'on',
  'Y',
  'null',
  '~',
  '0640',
  '1e3',
  '0x1f',
  '2026-12-07',
  '.inf',
  '-x',
  '- x',
  'a: b',
  'a:',
  'a #b',
  '#c',
  '"q"',
  "'s'",
  'tab\there',
  'trail ',
  ' lead',
  '{{ ds.meta_data.uuid }}',
  '[list]',
  '&anchor',
  '*alias',
  '!tag',
  '%pct',
  '@at',
  'https://x/y',
  'C:\\path',
  '=',
  'uni ✓ é',
  'controls \u0007 \u007f \u0085 \u2028 \ufeff',
  'crlf\r\nline',
  'multi\nline',
  'multi\nline\n',
  'multi\nline\n\n\n',
  '\nstarts with a newline',
  '  indented\nsecond',
  'x\n  indented later\n',
];

void test('every string, key, number and boolean reads back as written', () => {
  const doc: Record<string, unknown> = {
    list: TRICKY,
    maps: TRICKY.map((s, i) => ({ [`k${i}`]: s, inner: [s, { s }] })),
    keys: { 'a b': 1, yes: 2, '0640': 3, 'x:y': 4, 'cloud-provider': 5 },
    empty: [],
    emptyMap: {},
    bools: [true, false],
    numbers: [0, 6443, -1, 1.5],
    nested: [[1, 2], [], [[3]]],
  };
  assert.deepEqual(parse(blockYaml(doc)), doc);
});

void test('certificates are literal blocks and file modes stay strings, as cloud-init reads them', () => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\nAAAA\n-----END CERTIFICATE-----\n';
  const out = blockYaml({
    write_files: [
      { path: '/etc/kubernetes/pki/ca.crt', owner: 'root:root', permissions: '0640', content: pem },
    ],
    runcmd: ['kubeadm init --config /run/kubeadm/kubeadm.yaml'],
  });
  assert.equal(
    out,
    [
      'write_files:',
      '  - path: /etc/kubernetes/pki/ca.crt',
      '    owner: root:root',
      '    permissions: "0640"',
      '    content: |',
      '      -----BEGIN CERTIFICATE-----',
      '      MIIB',
      '      AAAA',
      '      -----END CERTIFICATE-----',
      'runcmd:',
      '  - "kubeadm init --config /run/kubeadm/kubeadm.yaml"',
      '',
    ].join('\n'),
  );
});

void test('a literal block keeps the text’s trailing newlines: none, one or several', () => {
  assert.match(blockYaml({ a: 'x\ny' }), /^a: \|-\n {2}x\n {2}y\n$/);
  assert.match(blockYaml({ a: 'x\ny\n' }), /^a: \|\n {2}x\n {2}y\n$/);
  assert.match(blockYaml({ a: 'x\n\ny\n\n' }), /^a: \|\+\n {2}x\n\n {2}y\n\n$/);
  for (const a of ['x\ny', 'x\ny\n', 'x\n\ny\n\n'])
    assert.equal((parse(blockYaml({ a, b: 1 })) as { a: string }).a, a);
});

void test('values that are not plain data are refused, not written wrong', () => {
  assert.throws(() => blockYaml({ a: undefined, b: () => 1 }), /cannot write function/);
  assert.throws(() => blockYaml({ a: Number.NaN }), /cannot write number/);
  assert.equal(blockYaml({ a: undefined, b: 1 }), 'b: 1\n', 'an absent value is left out');
});
