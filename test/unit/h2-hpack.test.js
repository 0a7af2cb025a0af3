import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionError, HpackDecoder, encodeHeaders } from '../../server/transport/h2/hpack.js';

const LIMIT = 64 * 1024;
/** @param {HpackDecoder} decoder @param {string} hex */
const decodeHex = (decoder, hex) => {
  const block = Buffer.from(hex.replace(/\s/g, ''), 'hex');
  return { ...decoder.decode(block, 0, block.length, LIMIT) };
};

test('the requests of RFC 7541 C.4 (Huffman-coded, indexed into the dynamic table) decode, and the table keeps what they add', () => {
  const decoder = new HpackDecoder(4096);
  assert.deepEqual(decodeHex(decoder, '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'), {
    ':method': 'GET',
    ':scheme': 'http',
    ':path': '/',
    ':authority': 'www.example.com',
  });
  assert.equal(decoder.size, 57);
  assert.deepEqual(decodeHex(decoder, '8286 84be 5886 a8eb 1064 9cbf'), {
    ':method': 'GET',
    ':scheme': 'http',
    ':path': '/',
    ':authority': 'www.example.com',
    'cache-control': 'no-cache',
  });
  assert.equal(decoder.size, 110);
  assert.deepEqual(decodeHex(decoder, '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'), {
    ':method': 'GET',
    ':scheme': 'https',
    ':path': '/index.html',
    ':authority': 'www.example.com',
    'custom-key': 'custom-value',
  });
  assert.equal(decoder.size, 164);
});

test('entries are evicted oldest first when the table is full, and a size update shrinks it', () => {
  const decoder = new HpackDecoder(4096);
  // Literal with incremental indexing, new name: 0x40, name, value.
  const add = (/** @type {string} */ name, /** @type {string} */ value) =>
    Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
  const value = 'v'.repeat(100);
  for (let i = 0; i < 40; i++) {
    const block = add(`name-${String(i).padStart(2, '0')}`, value);
    decoder.decode(block, 0, block.length, LIMIT);
  }
  // Each entry is 7 + 100 + 32 octets: 29 fit in 4096.
  assert.equal(decoder.entries.length, 29);
  assert.equal(decoder.entries[0][0], 'name-11');
  // Index 62 is the newest.
  assert.deepEqual({ ...decoder.decode(Buffer.from([0x80 | 62]), 0, 1, LIMIT) }, { 'name-39': value });
  const shrink = Buffer.from([0x3f, 0xe1, 0x01]); // size update to 256: 0x20 | 31, then 225 as 0xe1 0x01
  decoder.decode(shrink, 0, shrink.length, LIMIT);
  assert.equal(decoder.entries.length, 1);
  assert.throws(() => decoder.decode(Buffer.from([0x80 | 63]), 0, 1, LIMIT), CompressionError);
});

test('what encodeHeaders writes decodes to the same headers, a name given twice to a list', () => {
  const headers = { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-message': 'x'.repeat(300) };
  const block = encodeHeaders(headers);
  assert.deepEqual({ ...new HpackDecoder(4096).decode(block, 0, block.length, LIMIT) }, { ...headers, ':status': '200' });
  const twice = Buffer.concat([encodeHeaders({ a: '1' }), encodeHeaders({ a: '2' }), encodeHeaders({ a: '3' })]);
  assert.deepEqual({ ...new HpackDecoder(4096).decode(twice, 0, twice.length, LIMIT) }, { a: ['1', '2', '3'] });
});

test('malformed blocks are COMPRESSION errors, each saying what was wrong', () => {
  const cases = [
    ['an index in neither table', '80'],
    ['an index past the tables', 'ff 80 01'],
    ['an integer past 2^31', 'ff ff ff ff ff ff 0f'],
    ['an integer cut short', 'ff ff'],
    ['a string past the block', '40 05 61 62'],
    ['a size update after a field', '82 20'],
    ['a size update past the allowed', '3f e1 3f'],
    ['the end-of-string code inside a string', '40 01 61 84 ff ff ff ff'],
    ['padding that is not ones', '40 01 61 81 00'],
    ['padding of a whole octet', '40 01 61 82 1f ff'],
  ];
  for (const [what, hex] of cases) {
    assert.throws(() => decodeHex(new HpackDecoder(4096), hex), CompressionError, what);
  }
});

test('past the list limit, fields are decoded for the table but not kept, and the size says how large the list was', () => {
  const decoder = new HpackDecoder(4096);
  const block = Buffer.concat([encodeHeaders({ a: 'x'.repeat(100) }), encodeHeaders({ b: 'y'.repeat(100) })]);
  const headers = decoder.decode(block, 0, block.length, 150);
  assert.deepEqual(Object.keys(headers), ['a']);
  assert.equal(decoder.listSize, 2 * (1 + 100 + 32));
});
