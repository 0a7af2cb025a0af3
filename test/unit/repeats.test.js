// What the journal keeps of each request's headers, user agent and services: one shared copy while they repeat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { journalHeaders } from '../../server/transport/receive.js';
import { keptList, keptText } from '../../server/store/repeats.js';

test('headers a request repeats are kept once, frozen, and headers that differ in any way are kept anew', () => {
  const first = journalHeaders({ 'user-agent': 'exporter/1.0', 'x-tenant': 'a', authorization: 'Bearer secret', absent: undefined });
  assert.deepEqual(first, { 'user-agent': 'exporter/1.0', 'x-tenant': 'a', authorization: '(redacted)' });
  assert.ok(Object.isFrozen(first));
  const again = journalHeaders({ 'user-agent': 'exporter/1.0', 'x-tenant': 'a', authorization: 'Bearer secret' });
  assert.equal(again, first, 'the same headers: the same object');
  // Content-Length is the entry's bytes: left out, so bodies of every size share their headers.
  assert.equal(journalHeaders({ 'user-agent': 'exporter/1.0', 'content-length': '512', 'x-tenant': 'a', authorization: 'Bearer secret' }), first);
  assert.equal(journalHeaders({ 'user-agent': 'exporter/1.0', 'x-tenant': 'a', authorization: 'Bearer secret', 'content-length': '77' }), first);

  const variants = [
    { 'user-agent': 'exporter/1.0', 'x-tenant': 'b', authorization: 'Bearer secret' },
    { 'user-agent': 'exporter/1.0', 'x-tenant': 'a' },
    { 'user-agent': 'exporter/1.0', 'x-tenant': 'a', authorization: 'Bearer secret', extra: '1' },
    { 'x-tenant': 'a', 'user-agent': 'exporter/1.0', authorization: 'Bearer secret' },
    { 'user-agent': 'exporter/1.0', 'x-tenant': ['a', 'b'], authorization: 'Bearer secret' },
  ];
  /** @type {object} */
  let last = first;
  for (const headers of variants) {
    const kept = journalHeaders(headers);
    assert.notEqual(kept, last, JSON.stringify(headers));
    assert.deepEqual(kept, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, k === 'authorization' ? '(redacted)' : Array.isArray(v) ? v.join(', ') : v])));
    last = kept;
  }
  // A header given twice (an array) is not compared next time: the same headers again are kept anew, alike.
  const repeatedArray = journalHeaders({ 'user-agent': 'exporter/1.0', 'x-tenant': ['a', 'b'], authorization: 'Bearer secret' });
  assert.deepEqual(repeatedArray, last);
  // Binary gRPC metadata is kept as base64.
  assert.deepEqual(journalHeaders({ 'trace-bin': Buffer.from([1, 2, 3]) }), { 'trace-bin': 'AQID' });
});

test('a text is kept as it came, and a list of services is shared while it repeats', () => {
  assert.equal(keptText('grpc-go/1.83.2'), 'grpc-go/1.83.2');
  const long = 'x'.repeat(1000);
  assert.equal(keptText(long), long);
  // More distinct texts than are kept at once: each still comes back equal to itself.
  for (let i = 0; i < 3000; i++) assert.equal(keptText(`agent/${i}`), `agent/${i}`);

  const services = keptList(['checkout', 'cart']);
  assert.deepEqual(services, ['checkout', 'cart']);
  assert.ok(Object.isFrozen(services));
  assert.equal(keptList(['checkout', 'cart']), services);
  assert.deepEqual(keptList(['checkout']), ['checkout']);
  assert.notEqual(keptList(['checkout', 'cart']), services, 'only the last list is shared');
  assert.deepEqual(keptList([]), []);
});
