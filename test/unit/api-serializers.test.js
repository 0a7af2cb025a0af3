// The admin API's reply writers (server/api/schemas.js serializerFactory): each route's is built from the shared
// schemas its response reaches, through every reference, and from no other.
import test from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { addSchemas, ref, serializerFactory } from '../../server/api/schemas.js';

test('a writer follows references through shared schemas, and is built without the shared schemas it does not reach', () => {
  const shared = {
    Outer: { type: 'object', properties: { inner: ref('Inner'), list: { type: 'array', items: ref('Leaf') } }, additionalProperties: false },
    Inner: { type: 'object', properties: { leaf: ref('Leaf'), n: { type: 'integer' } }, additionalProperties: false },
    Leaf: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
    // A build that was handed this one would throw: it is no JSON Schema.
    Unreached: { type: 'not a type' },
  };
  const write = serializerFactory(shared)({ schema: ref('Outer') });
  const written = write({ inner: { leaf: { name: 'a', extra: 1 }, n: '7', dropped: true }, list: [{ name: 'b' }], dropped: 2 });
  assert.deepEqual(JSON.parse(written), { inner: { leaf: { name: 'a' }, n: 7 }, list: [{ name: 'b' }] });
});

test('every shared schema of the admin API builds a writer from what it reaches alone', async () => {
  const app = Fastify();
  addSchemas(app);
  const shared = app.getSchemas();
  for (const id of Object.keys(shared)) assert.equal(typeof serializerFactory(shared)({ schema: ref(id) }), 'function', id);
  await app.close();
});

test('a writer is built once for the same schemas, and again when a schema it reaches differs', () => {
  const leaf = { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false };
  const route = { schema: { type: 'object', properties: { leaf: ref('Leaf') }, additionalProperties: false } };
  const first = serializerFactory({ Leaf: leaf })(route);
  assert.equal(serializerFactory({ Leaf: structuredClone(leaf) })({ schema: structuredClone(route.schema) }), first);
  const wider = { ...leaf, properties: { ...leaf.properties, n: { type: 'integer' } } };
  const other = serializerFactory({ Leaf: wider })(route);
  assert.notEqual(other, first);
  assert.deepEqual(JSON.parse(other({ leaf: { name: 'a', n: 2 } })), { leaf: { name: 'a', n: 2 } });
  assert.deepEqual(JSON.parse(first({ leaf: { name: 'a', n: 2 } })), { leaf: { name: 'a' } });
});
