import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parsePythonLiteral,
  pyToJson,
  toStringDict,
  PyLiteralError,
} from '../../src/api/magnum/python-literal.ts';

const ok: [string, unknown][] = [
  // what `openstack coe cluster template update ... labels=...` sends: str(dict)
  [
    "{'kube_tag': 'v1.27.3', 'container_runtime': 'containerd'}",
    { kube_tag: 'v1.27.3', container_runtime: 'containerd' },
  ],
  ['{"it\'s": "a \\"quoted\\" value"}', { "it's": 'a "quoted" value' }],
  ["{'a': 'it\\'s'}", { a: "it's" }],
  ['{}', {}],
  [
    "{'a': 1, 'b': -2, 'c': 1.5, 'd': True, 'e': False, 'f': None,}",
    { a: 1, b: -2, c: 1.5, d: true, e: false, f: null },
  ],
  ["{'nested': {'x': [1, 2, (3, 4)]}}", { nested: { x: [1, 2, [3, 4]] } }],
  ["{'a': 1, 'a': 2}", { a: 2 }],
  ["'tab\\tnew\\nline\\\\slash'", 'tab\tnew\nline\\slash'],
  ["'\\x41\\u00e9\\U0001F600\\101'", 'Aé😀A'],
  ["'unknown \\d escape'", 'unknown \\d escape'],
  ["u'unicode prefix'", 'unicode prefix'],
  ["r'raw \\n'", 'raw \\n'],
  ["'ad' 'jacent' \"strings\"", 'adjacentstrings'],
  ["'''triple ' quoted'''", "triple ' quoted"],
  ['  [ 1 , 2 , ]  ', [1, 2]],
  ['()', []],
  ['(5)', 5],
  ['(5,)', [5]],
  ['0x1F', 31],
  ['0o17', 15],
  ['0b101', 5],
  ['1_000', 1000],
  ['.5', 0.5],
  ['1e3', 1000],
  ['-1.5e-1', -0.15],
  ['+7', 7],
  ['0', 0],
  ["'é ünïcödé'", 'é ünïcödé'],
];

for (const [input, expected] of ok) {
  void test(`parses the Python literal ${input}`, () => {
    assert.deepEqual(pyToJson(parsePythonLiteral(input)), expected);
  });
}

const bad: [string, RegExp][] = [
  ["{'a': 1", /expected "," or "}"/],
  ["{'a' 1}", /expected ":"/],
  ["{'a', 'b'}", /sets are not supported/],
  ["'unterminated", /unterminated string/],
  ['os.system("x")', /not a literal/],
  ['__import__', /not a literal/],
  ["{'a': 1} trailing", /unexpected "t" after the value/],
  ['1j', /complex numbers/],
  ['012', /leading zeros/],
  ["'\\x4'", /truncated \\x escape/],
  ["'\\N{DASH}'", /not supported/],
  ['', /unexpected end of input/],
  ['-"x"', /sign must be followed by a number/],
  ["{['a']: 1}", /dict key must be/],
  ["'line\nbreak'", /newline inside a string/],
];

for (const [input, message] of bad) {
  void test(`refuses the malformed literal ${JSON.stringify(input)} with a 400 that says why`, () => {
    assert.throws(
      () => parsePythonLiteral(input),
      (err: unknown) =>
        err instanceof PyLiteralError &&
        err.status === 400 &&
        message.test(err.message) &&
        /position \d+/.test(err.message),
    );
  });
}

void test('label dictionaries keep values as Python prints them', () => {
  assert.deepEqual(toStringDict(parsePythonLiteral("{'a': True, 'b': 3, 'c': 'x', 'd': 2.5}"), 'labels'), {
    a: 'True',
    b: '3',
    c: 'x',
    d: '2.5',
  });
  assert.deepEqual(toStringDict({ a: false, b: 'y' }, 'labels'), { a: 'False', b: 'y' });
});

void test('label dictionaries refuse non-string keys, nested values and non-dicts', () => {
  assert.throws(() => toStringDict(parsePythonLiteral('{1: 2}'), 'labels'), /labels keys must be strings/);
  assert.throws(() => toStringDict(parsePythonLiteral("{'a': [1]}"), 'labels'), /"a" is not/);
  assert.throws(() => toStringDict(parsePythonLiteral('[1]'), 'labels'), /must be a dictionary/);
  assert.throws(() => toStringDict('x', 'labels'), /must be a dictionary/);
});
