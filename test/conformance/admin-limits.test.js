// No admin request holds the event loop: patterns run on a linear-time engine (or are refused saying why),
// verify has limits it names, a page that would pass the byte cap holds fewer items and a cursor to the
// rest, and waiters answer as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { MAX_EXPECTATIONS } from '../../server/verify/verify.js';
import { MAX_PATTERN_CHARS } from '../../server/query/pattern.js';
import { MAX_PAGE_BYTES } from '../../server/query/respond.js';
import { MAX_WAITING_VERIFIES, MAX_VERIFY_BYTES } from '../../server/api/verify.js';
import { MAX_SNAPSHOT_DEPTH, MAX_SNAPSHOT_ITEMS } from '../../server/verify/snapshot.js';

/** @type {import('../helpers/collector.js').TestCollector} */
let c;
/** A value on which a backtracking engine takes minutes to answer `(a+)+$`: each "a" doubles its time. */
const EVIL = `${'a'.repeat(30)}!`;

before(async () => {
  c = await startTestCollector({ print: 'none' });
  await post(spansOf('evil', [{ name: 'evil', attributes: { k: EVIL, [EVIL]: 'v', plain: 'aaa' } }]));
});
after(() => c.stop());

/** @param {string} service @param {{ name: string, attributes?: Record<string, string>, traceId?: string, spanId?: string }[]} spans */
function spansOf(service, spans) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            spans: spans.map((s, i) => ({
              traceId: s.traceId ?? `${String(i + 1).padStart(8, '0')}${'ab'.repeat(12)}`,
              spanId: s.spanId ?? `${String(i + 1).padStart(8, '0')}cdcdcdcd`,
              name: s.name,
              kind: 1,
              startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)),
              endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) + 1000n),
              attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({ key, value: { stringValue: v } })),
            })),
          },
        ],
      },
    ],
  };
}

/** @param {any} body */
async function post(body) {
  const res = await postOtlp(c.urls.http, '/v1/traces', JSON.stringify(body), 'application/json');
  assert.equal(res.status, 200);
}

/** @param {any} body @returns {Promise<{ status: number, body: any, ms: number }>} */
async function verify(body) {
  const started = performance.now();
  const res = await fetch(`${c.urls.ui}/api/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json(), ms: performance.now() - started };
}

/** @param {string} path */
async function get(path) {
  const started = performance.now();
  const res = await fetch(c.urls.ui + path);
  return { status: res.status, body: await res.json(), ms: performance.now() - started };
}

/** @param {string} pattern @param {string} [key] */
const matching = (pattern, key = 'k') => ({
  expectations: [{ signal: 'spans', where: { service: 'evil' }, attributes: { [key]: { matches: pattern } }, count: { atLeast: 0 } }],
});

test('a catastrophic pattern in verify is answered at once, with the right verdict, and health is never blocked', { timeout: 30_000 }, async () => {
  const health = (async () => {
    let worst = 0;
    for (let i = 0; i < 20; i++) worst = Math.max(worst, (await get('/api/health')).ms);
    return worst;
  })();
  const evil = await verify(matching('(a+)+$'));
  assert.equal(evil.status, 200);
  assert.equal(evil.body.expectations[0].found, 0, 'the value ends in "!": (a+)+$ does not match it');
  assert.ok(evil.ms < 2000, `answered in ${evil.ms} ms`);
  const anchored = await verify(matching('^(a+)+!$'));
  assert.equal(anchored.body.expectations[0].found, 1, 'the same value does match ^(a+)+!$');
  const partial = await verify(matching('a{3}'));
  assert.equal(partial.body.expectations[0].found, 1, 'a pattern matches anywhere in the value, as RegExp.test does');
  assert.ok((await health) < 2000, 'health answered while verify ran');
});

test('a catastrophic mask pattern in snapshot is answered at once and masks what it matches', { timeout: 30_000 }, async () => {
  const evil = await get(`/api/snapshot?signal=traces&service=evil&maskDefaults=false&mask=${encodeURIComponent('/(a+)+$/')}`);
  assert.equal(evil.status, 200);
  assert.ok(evil.ms < 2000, `answered in ${evil.ms} ms`);
  const attributes = evil.body.traces[0].spans[0].attributes;
  assert.equal(attributes[EVIL], 'v', 'the key ends in "!": not masked');
  assert.equal(attributes.k, EVIL);
  const masked = await get(`/api/snapshot?signal=traces&service=evil&maskDefaults=false&mask=${encodeURIComponent('/^(a+)+!$/,pla*')}`);
  assert.equal(masked.body.traces[0].spans[0].attributes[EVIL], '<masked>');
  assert.equal(masked.body.traces[0].spans[0].attributes.plain, '<masked>', 'a glob still masks');
});

test('a pattern the linear-time engine cannot run is refused with 400 naming the pattern and why', async () => {
  /** @type {[string, RegExp][]} */
  const refused = [
    ['(a)\\1', /backreferences/],
    ['a(?=b)', /lookahead and lookbehind/],
    ['(?<!x)a', /lookahead and lookbehind/],
    ['[', /missing closing \]/],
    ['a'.repeat(MAX_PATTERN_CHARS + 1), new RegExp(`at most ${MAX_PATTERN_CHARS}`)],
    ['x{1000}y{1000}', /compiles to \d+ instructions, at most/],
  ];
  for (const [pattern, why] of refused) {
    const res = await verify(matching(pattern));
    assert.equal(res.status, 400, pattern);
    assert.match(res.body.message, why);
    assert.match(res.body.message, /^expectations\[0\]\.attributes\.k\.matches: pattern \//);
    assert.equal(res.body.path, 'expectations[0].attributes.k.matches');
    const mask = await get(`/api/snapshot?signal=traces&mask=${encodeURIComponent(`/${pattern}/`)}`);
    assert.equal(mask.status, 400, pattern);
    assert.match(mask.body.message, /^parameter 'mask': pattern \//);
    assert.match(mask.body.message, why);
  }
});

test('a value too long for its pattern never matches, and the nearest-miss message says why', async () => {
  await post(spansOf('long', [{ name: 'long', attributes: { big: 'x'.repeat(70_000) } }]));
  const res = await verify({ expectations: [{ signal: 'spans', where: { service: 'long' }, attributes: { big: { matches: 'x' } } }] });
  assert.equal(res.body.expectations[0].found, 0);
  assert.match(res.body.message, /big is 70000 characters, longer than \/x\/ is run on \(\d+\)/);
});

test('verify takes at most its limit of expectations and criteria, and says so', async () => {
  const many = (/** @type {number} */ n) => ({
    expectations: Array.from({ length: n }, (_, i) => ({ signal: 'spans', where: { name: `op-${i}` }, count: { atLeast: 0 } })),
  });
  const atLimit = await verify(many(MAX_EXPECTATIONS));
  assert.equal(atLimit.status, 200);
  assert.equal(atLimit.body.expectations.length, MAX_EXPECTATIONS);
  const over = await verify(many(MAX_EXPECTATIONS + 1));
  assert.equal(over.status, 400);
  assert.equal(over.body.path, 'expectations');
  assert.match(over.body.message, new RegExp(`holds ${MAX_EXPECTATIONS + 1} expectations; at most ${MAX_EXPECTATIONS} in one request`));
  const attributes = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`a${i}`, 'x']));
  const criteria = await verify({ expectations: [{ signal: 'spans', attributes }] });
  assert.equal(criteria.status, 400);
  assert.match(criteria.body.message, /more than 1000 criteria in one request, the limit/);
  /** @type {any} */
  let nested = { where: { name: 'x' } };
  for (let i = 0; i < 10; i++) nested = { childOf: nested };
  const deep = await verify({ expectations: [{ signal: 'spans', ...nested }] });
  assert.equal(deep.status, 400);
  assert.match(deep.body.message, /nests relations more than 8 deep, the limit/);
});

test('waiting verify requests are capped: one more is refused with 429 naming the limit', { timeout: 60_000 }, async () => {
  const controller = new AbortController();
  const body = JSON.stringify({ timeoutMs: 60_000, expectations: [{ signal: 'spans', where: { name: 'never arrives' } }] });
  const waiting = Array.from({ length: MAX_WAITING_VERIFIES }, () =>
    fetch(`${c.urls.ui}/api/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: controller.signal }).catch(() => null),
  );
  try {
    const refused = await waitFor(
      async () => {
        const res = await verify(JSON.parse(body));
        return res.status === 429 ? res : null;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'a 429 once every slot waits' },
    );
    assert.match(refused.body.message, new RegExp(`the limit \\(${MAX_WAITING_VERIFIES}\\)`));
    const once = await verify({ ...JSON.parse(body), timeoutMs: 0 });
    assert.equal(once.status, 200, 'a check that does not wait is still answered');
  } finally {
    controller.abort();
    await Promise.all(waiting);
  }
  await waitFor(async () => (await verify({ ...JSON.parse(body), timeoutMs: 1 })).status === 200, { timeoutMs: 10_000, what: 'slots freed when clients leave' });
});

test('a page over the byte cap holds fewer items, says so, keeps the exact total, and its cursors reach every item once', { timeout: 60_000 }, async () => {
  const SPANS = 40;
  const bigValue = 'v'.repeat(Math.ceil((MAX_PAGE_BYTES * 1.5) / SPANS));
  await post(
    spansOf(
      'big',
      Array.from({ length: SPANS }, (_, i) => ({ name: `big-${i}`, attributes: { blob: bigValue }, traceId: `${String(i).padStart(8, '0')}${'ef'.repeat(12)}` })),
    ),
  );
  for (const order of ['asc', 'desc']) {
    /** @type {string[]} */
    const seen = [];
    let cursor = '';
    let pages = 0;
    do {
      const page = await get(`/api/spans?service=big&limit=1000&order=${order}${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      assert.equal(page.body.total, SPANS, 'the total is over everything that matches');
      const names = page.body.spans.map((/** @type {any} */ s) => s.name);
      assert.ok(names.length < SPANS, `a page of ${names.length} spans`);
      if (page.body.nextCursor)
        assert.match(page.body.truncated, new RegExp(`^${names.length} of the \\d+ spans asked for: an answer holds at most ${MAX_PAGE_BYTES} bytes`));
      const numbers = names.map((/** @type {string} */ n) => Number(n.slice(4)));
      assert.deepEqual(
        numbers,
        [...numbers].sort((a, b) => (order === 'asc' ? a - b : b - a)),
        `listed ${order}`,
      );
      seen.push(...names);
      cursor = page.body.nextCursor ?? '';
      assert.ok(++pages <= SPANS, 'cursors end');
    } while (cursor);
    assert.ok(pages >= 2, 'the cap cut the page');
    assert.equal(seen.length, SPANS);
    assert.equal(new Set(seen).size, SPANS, 'every span once');
  }
});

test('a small page is sent whole with its length; a page past 64 KiB is made and sent a slice at a time', async () => {
  const spans = (/** @type {number} */ chars) =>
    [0, 1].map((i) => ({ name: `sized-${i}`, attributes: { pad: 'p'.repeat(chars) }, traceId: `${String(i).padStart(8, '0')}${'5a'.repeat(12)}` }));
  await post(spansOf('sized-small', spans(100)));
  await post(spansOf('sized-large', spans(40 * 1024)));
  const res = await fetch(`${c.urls.ui}/api/spans?service=sized-small`);
  const text = await res.text();
  assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
  assert.equal(JSON.parse(text).spans.length, 2);
  const large = await fetch(`${c.urls.ui}/api/spans?service=sized-large`);
  assert.equal(large.headers.get('transfer-encoding'), 'chunked');
  assert.equal(large.headers.get('content-length'), null);
  assert.equal((await large.json()).spans.length, 2);
});

test('a trace waiter answers as before while the same traces keep arriving', { timeout: 30_000 }, async () => {
  const traceIds = Array.from({ length: 3 }, (_, i) => `${String(i).padStart(8, '0')}${'12'.repeat(12)}`);
  const batch = spansOf(
    'waited',
    traceIds.map((traceId, i) => ({ name: `w-${i}`, traceId, spanId: `${String(i).padStart(8, '0')}00000000` })),
  );
  const waiting = get('/api/traces?service=waited&minCount=3&timeoutMs=20000');
  const unmet = get('/api/traces?service=waited&minCount=4&timeoutMs=1500');
  for (let i = 0; i < 5; i++) await post(batch);
  const met = await waiting;
  assert.equal(met.status, 200);
  assert.equal(met.body.total, 3);
  assert.deepEqual(met.body.traces.map((/** @type {any} */ t) => t.traceId).sort(), traceIds);
  const timedOut = await unmet;
  assert.equal(timedOut.status, 408);
  assert.equal(timedOut.body.total, 3);
  assert.match(timedOut.body.error, /^3 of 4 traces with service=waited after 1500 ms/);
});

test('trace summaries stay exact while the same traces grow and lose their oldest spans', { timeout: 30_000 }, async () => {
  const small = await startTestCollector({ print: 'none', maxSpans: 50 });
  try {
    const traceIds = ['1111111111111111aaaaaaaaaaaaaaaa', '2222222222222222bbbbbbbbbbbbbbbb'];
    let n = 0;
    for (let round = 0; round < 12; round++) {
      const spans = [];
      for (let i = 0; i < 9; i++) {
        n++;
        // Starts go up and down, ends too, some spans are roots, errors and services vary: every field's
        // extreme leaves with some eviction.
        const start = 1_700_000_000_000_000_000n + BigInt((n * 7919) % 1000) * 1000n;
        spans.push({
          traceId: traceIds[i % 2],
          spanId: n.toString(16).padStart(16, '0'),
          parentSpanId: n % 5 === 0 ? '' : 'ffffffffffffffff',
          name: `s${n}`,
          kind: 1,
          startTimeUnixNano: String(start),
          endTimeUnixNano: String(start + BigInt((n * 104729) % 5000) * 1000n),
          status: { code: n % 3 === 0 ? 2 : 0 },
        });
      }
      const body = {
        resourceSpans: spans.map((span, i) => ({
          resource: { attributes: [{ key: 'service.name', value: { stringValue: `svc-${(round + i) % 4}` } }] },
          scopeSpans: [{ spans: [span] }],
        })),
      };
      const res = await postOtlp(small.urls.http, '/v1/traces', JSON.stringify(body), 'application/json');
      assert.equal(res.status, 200);
      for (const traceId of traceIds) {
        const row = (await small.api(`/api/traces?traceId=${traceId}`)).traces[0];
        const stored = (await small.api(`/api/spans?traceId=${traceId}&limit=1000`)).spans;
        const starts = stored.map((/** @type {any} */ s) => BigInt(s.startTimeUnixNano));
        const ends = stored.map((/** @type {any} */ s) => BigInt(s.endTimeUnixNano));
        const roots = stored.filter((/** @type {any} */ s) => !s.parentSpanId);
        assert.equal(row.spanCount, stored.length, `round ${round}`);
        assert.equal(row.errorCount, stored.filter((/** @type {any} */ s) => s.status?.code === 2).length);
        assert.equal(row.startTimeUnixNano, String(starts.reduce((/** @type {bigint} */ a, /** @type {bigint} */ b) => (b < a ? b : a))));
        assert.equal(row.endTimeUnixNano, String(ends.reduce((/** @type {bigint} */ a, /** @type {bigint} */ b) => (b > a ? b : a))));
        assert.equal(row.hasRoot, roots.length > 0);
        assert.equal(row.rootName, roots.length ? roots[0].name : stored[0].name);
        assert.deepEqual(new Set(row.services), new Set(stored.map((/** @type {any} */ s) => s.service)));
      }
    }
  } finally {
    await small.stop();
  }
});

test('a snapshot of a deep trace is answered at once; one too deep or too large is refused saying why', { timeout: 30_000 }, async () => {
  /** @param {string} traceId @param {number} depth */
  const chain = (traceId, depth) =>
    Array.from({ length: depth }, (_, i) => ({
      traceId,
      spanId: (i + 1).toString(16).padStart(16, '0'),
      parentSpanId: i ? i.toString(16).padStart(16, '0') : '',
      name: 'quoted "name"',
      kind: 1,
      startTimeUnixNano: '1',
      endTimeUnixNano: '2',
    }));
  /** @param {string} service @param {any[]} spans */
  const send = (service, spans) =>
    post({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] });
  // Each level once doubled the escapes of the levels below it: 40 levels were a terabyte.
  await send('deep', chain('de'.repeat(16), 40));
  const deep = await get('/api/snapshot?signal=traces&service=deep');
  assert.equal(deep.status, 200);
  assert.ok(deep.ms < 5000, `answered in ${deep.ms} ms`);
  let depth = 0;
  for (let span = deep.body.traces[0].spans[0]; span; span = span.children?.[0]) depth++;
  assert.equal(depth, 40);
  await send('deeper', chain('df'.repeat(16), MAX_SNAPSHOT_DEPTH + 1));
  const deeper = await get('/api/snapshot?signal=traces&service=deeper');
  assert.equal(deeper.status, 400);
  assert.match(deeper.body.message, new RegExp(`a trace nests spans more than ${MAX_SNAPSHOT_DEPTH} deep`));
  await send(
    'many',
    Array.from({ length: MAX_SNAPSHOT_ITEMS + 1 }, (_, i) => ({ ...chain(`${String(i).padStart(8, '0')}${'ee'.repeat(12)}`, 1)[0] })),
  );
  const many = await get('/api/snapshot?signal=traces&service=many');
  assert.equal(many.status, 400);
  assert.match(many.body.message, new RegExp(`more than ${MAX_SNAPSHOT_ITEMS} spans, log records and metric series \\(the limit\\).*narrow it`));
});

test('a request pipelined after a refused body is not served: its answer closed the connection', async () => {
  const port = Number(new URL(c.urls.ui).port);
  const over = ' '.repeat(MAX_VERIFY_BYTES + 1024);
  const rule = '{"action":"unavailable"}';
  const host = `Host: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`;
  const requests =
    `POST /api/verify HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n${over.length.toString(16)}\r\n${over}\r\n0\r\n\r\n` +
    `POST /api/faults HTTP/1.1\r\n${host}Content-Length: ${rule.length}\r\n\r\n${rule}`;
  const before = (await c.api('/api/faults')).faults.length;
  const answers = await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(requests));
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text.match(/^HTTP\/1\.1 \d+/gm)));
  });
  assert.deepEqual(answers, ['HTTP/1.1 413']);
  // The rule had been added, unanswered, while its connection closed.
  assert.equal((await c.api('/api/faults')).faults.length, before);
});

test('a verify body over its byte limit is refused before it is read', async () => {
  const body = JSON.stringify({ expectations: Array.from({ length: 20_000 }, (_, i) => ({ signal: 'spans', where: { name: `o${i}` } })) });
  assert.ok(body.length > MAX_VERIFY_BYTES);
  const res = await fetch(`${c.urls.ui}/api/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(res.status, 413);
});
