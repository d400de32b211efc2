import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { emitList, emitObject, emitShow, type OutputOptions } from '../../src/cli/output.ts';
import { renderTable } from '../../src/cli/table.ts';
import { UsageError } from '../../src/cli/coe-errors.ts';

function capture(fn: (out: { write(s: string): void }) => void): string {
  let text = '';
  fn({ write: (s) => void (text += s) });
  return text;
}

const COLUMNS = ['uuid', 'name', 'node_count', 'health_status', 'labels', 'addr'];
const ROWS = [
  ['u1', 'a', 3, null, { k: 'v', x: 'y' }, ['1.2.3.4', '5.6.7.8']],
  ['u2', 'bbbbbbb', 12, 'HEALTHY', {}, []],
];

test('list tables look like the openstack client: grid, numbers right-aligned, Python values', () => {
  const text = capture((out) => emitList(out, COLUMNS, ROWS, {}));
  assert.equal(
    text,
    [
      '+------+---------+------------+---------------+----------------------+------------------------+',
      '| uuid | name    | node_count | health_status | labels               | addr                   |',
      '+------+---------+------------+---------------+----------------------+------------------------+',
      "| u1   | a       |          3 | None          | {'k': 'v', 'x': 'y'} | ['1.2.3.4', '5.6.7.8'] |",
      '| u2   | bbbbbbb |         12 | HEALTHY       | {}                   | []                     |',
      '+------+---------+------------+---------------+----------------------+------------------------+',
      '',
    ].join('\n'),
  );
});

test('show tables have Field/Value rows and split multi-line values', () => {
  const text = capture((out) =>
    emitShow(
      out,
      ['uuid', 'node_count', 'labels', 'status_reason', 'empty', 'flag'],
      ['u1', 3, { k: 'v' }, 'line1\nline2', '', true],
      {},
    ),
  );
  assert.equal(
    text,
    [
      '+---------------+------------+',
      '| Field         | Value      |',
      '+---------------+------------+',
      '| uuid          | u1         |',
      '| node_count    | 3          |',
      "| labels        | {'k': 'v'} |",
      '| status_reason | line1      |',
      '|               | line2      |',
      '| empty         |            |',
      '| flag          | True       |',
      '+---------------+------------+',
      '',
    ].join('\n'),
  );
});

test('an empty list prints nothing in table form and [] in JSON', () => {
  assert.equal(
    capture((out) => emitList(out, COLUMNS, [], {})),
    '',
  );
  assert.equal(
    capture((out) => emitList(out, COLUMNS, [], { format: 'json' })),
    '[]\n',
  );
});

test('-f json gives objects keyed by column with real JSON values', () => {
  const text = capture((out) => emitList(out, COLUMNS, ROWS, { format: 'json' }));
  assert.deepEqual(JSON.parse(text), [
    {
      uuid: 'u1',
      name: 'a',
      node_count: 3,
      health_status: null,
      labels: { k: 'v', x: 'y' },
      addr: ['1.2.3.4', '5.6.7.8'],
    },
    { uuid: 'u2', name: 'bbbbbbb', node_count: 12, health_status: 'HEALTHY', labels: {}, addr: [] },
  ]);
  assert.match(text, /^\[\n {2}\{/);
  assert.equal(
    capture((out) => emitList(out, ['a'], [[1]], { format: 'json', noindent: true })),
    '[{"a":1}]\n',
  );
});

test('-f yaml parses back to the same data', () => {
  const text = capture((out) =>
    emitShow(out, ['uuid', 'labels', 'none'], ['u1', { k: 'v' }, null], { format: 'yaml' }),
  );
  assert.deepEqual(parseYaml(text), { uuid: 'u1', labels: { k: 'v' }, none: null });
});

test('-f value prints bare values: one row per line for lists, one field per line for show', () => {
  assert.equal(
    capture((out) => emitList(out, COLUMNS, ROWS, { format: 'value', column: ['uuid', 'name'] })),
    'u1 a\nu2 bbbbbbb\n',
  );
  assert.equal(
    capture((out) => emitShow(out, ['a', 'b'], ['x', null], { format: 'value' })),
    'x\nNone\n',
  );
});

test("-c picks columns but keeps the command's order, like the openstack client", () => {
  const options: OutputOptions = { column: ['status', 'name'] };
  const text = capture((out) =>
    emitShow(out, ['name', 'uuid', 'status'], ['c1', 'u', 'CREATE_COMPLETE'], options),
  );
  assert.deepEqual(
    text
      .split('\n')
      .filter((l) => l.startsWith('| '))
      .map((l) => l.split('|')[1]!.trim()),
    ['Field', 'name', 'status'],
  );
});

test('-c with an unknown column is a usage error listing the columns', () => {
  assert.throws(
    () => emitList({ write: () => undefined }, ['uuid', 'name'], [], { column: ['nmae'] }),
    (err: unknown) => err instanceof UsageError && /nmae/.test(err.message) && /uuid, name/.test(err.message),
  );
});

test('templates print null as "-" in tables but null in JSON', () => {
  const style = { none: '-' };
  assert.match(
    capture((out) => emitShow(out, ['keypair_id'], [null], {}, style)),
    /\| keypair_id \| - +\|/,
  );
  assert.deepEqual(
    JSON.parse(capture((out) => emitShow(out, ['keypair_id'], [null], { format: 'json' }, style))),
    {
      keypair_id: null,
    },
  );
});

test('objects print every key as Property/Value rows', () => {
  const text = capture((out) =>
    emitObject(out, { clusters: 1, nodes: 4 }, {}, { none: '-', showHeaders: ['Property', 'Value'] }),
  );
  assert.equal(
    text,
    [
      '+----------+-------+',
      '| Property | Value |',
      '+----------+-------+',
      '| clusters | 1     |',
      '| nodes    | 4     |',
      '+----------+-------+',
      '',
    ].join('\n'),
  );
});

test('wide characters take two columns in the grid', () => {
  const text = renderTable(['name'], [['日本']]);
  assert.equal(text.split('\n')[0], '+------+');
  assert.equal(text.split('\n')[3], '| 日本 |');
});
