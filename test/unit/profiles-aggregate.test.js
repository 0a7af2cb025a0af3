// What query/profiles.js makes of a sample's stack: frames from the dictionary (inlined functions, locations
// without lines) and the merged tree and function table of GET /api/profiles/aggregate, with recursion counted
// once per sample in a function's total.
import test from 'node:test';
import assert from 'node:assert/strict';
import { aggregateOf, framesOf } from '../../server/query/profiles.js';

/** A dictionary of functions a, b, c; location 1 is a, 2 is b, 3 inlines c into a, 4 has no lines. */
const dictionary = {
  stringTable: ['', 'a', 'b', 'c', 'a.go', '/bin/app'],
  functionTable: [{}, { nameStrindex: 1, filenameStrindex: 4 }, { nameStrindex: 2 }, { nameStrindex: 3 }],
  mappingTable: [{}, { filenameStrindex: 5 }],
  locationTable: [
    {},
    { mappingIndex: 0, address: '4096', lines: [{ functionIndex: 1, line: '3' }] },
    { mappingIndex: 0, address: '8192', lines: [{ functionIndex: 2, line: '7' }] },
    {
      mappingIndex: 0,
      address: '12288',
      lines: [
        { functionIndex: 3, line: '1' },
        { functionIndex: 1, line: '9' },
      ],
    },
    { mappingIndex: 1, address: '255', lines: [] },
  ],
  stackTable: [{ locationIndices: [] }, { locationIndices: [1, 2, 1] }, { locationIndices: [3, 2] }, { locationIndices: [4] }, { locationIndices: [2] }],
  attributeTable: [{}],
  linkTable: [{}],
};
const profile = { dictionary };
/** @param {number} stackIndex @param {string[]} values */
const sample = (stackIndex, values) => /** @type {any} */ ({ item: { stackIndex, values, attributeIndices: [], linkIndex: 0 }, ctx: { profile } });

test('frames are leaf first, inlined functions innermost first, a location without lines named by its mapping and address', () => {
  assert.deepEqual(
    framesOf(dictionary, 2).map((f) => `${f.name}:${f.line}`),
    ['c:1', 'a:9', 'b:7'],
  );
  assert.deepEqual(
    framesOf(dictionary, 3).map((f) => f.name),
    ['/bin/app 0xff'],
  );
  assert.deepEqual(framesOf(dictionary, 0), []);
  assert.equal(framesOf(dictionary, 1), framesOf(dictionary, 1), 'a stack is resolved once per dictionary');
});

test('the tree merges stacks from the roots; a function recurring in a stack counts once in its total', async () => {
  const { samples, total, tree, functions } = await aggregateOf([sample(1, ['5']), sample(2, ['2', '1']), sample(4, ['4'])]);
  assert.equal(samples, 3);
  assert.equal(total, 12);
  /** @param {any} n @returns {any} */
  const shape = (n) => [n.name, n.self, n.total, ...n.children.map(shape)];
  // Root first: a > b > a, b > a > c and b alone; heaviest first.
  assert.deepEqual(shape(tree), ['all', 0, 12, ['b', 4, 7, ['a', 0, 3, ['c', 3, 3]]], ['a', 0, 5, ['b', 0, 5, ['a', 5, 5]]]]);
  assert.deepEqual(
    functions.map((f) => [f.name, f.self, f.total, f.samples]),
    [
      ['a', 5, 8, 2],
      ['b', 4, 12, 3],
      ['c', 3, 3, 1],
    ],
  );
});
