import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/controllers/common/hash.ts';
import { sameJson } from '../../src/domain/index.ts';

// Controllers skip a write (and so a watch event) when the status or spec they computed equals the
// stored one; a wrong "equal" loses a change, a wrong "different" keeps an idle region busy.
const cases: [string, unknown, unknown][] = [
  ['key order does not count', { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }],
  ['an undefined member is the same as a missing one', { a: 1, b: undefined }, { a: 1 }],
  ['a changed condition reason', { conditions: [{ reason: 'A' }] }, { conditions: [{ reason: 'B' }] }],
  ['array order counts', [1, 2], [2, 1]],
  ['a longer array', [1], [1, 1]],
  ['a new member', { a: 1 }, { a: 1, b: null }],
  ['null is not an empty object', null, {}],
  ['an array is not an object', [], {}],
  ['a number is not its string', { replicas: 3 }, { replicas: '3' }],
  ['nothing against nothing', undefined, undefined],
  ['nothing against an empty object', undefined, {}],
];

for (const [name, a, b] of cases) {
  void test(`change detection agrees with canonical JSON: ${name}`, () => {
    const expected = canonicalJson(a) === canonicalJson(b);
    assert.equal(sameJson(a, b), expected);
    assert.equal(sameJson(b, a), expected);
  });
}
