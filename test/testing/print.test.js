// Console output (`--print`): the summary line and span tree, OTLP/JSON lines, silence, and a stuck
// stdout that costs dropped lines rather than a stalled receiver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../../server/index.js';
import { OutputQueue } from '../../server/print/queue.js';
import { startPrinter } from '../../server/print/index.js';
import { clock } from '../../server/print/summary.js';
import { Store } from '../../server/store/store.js';
import { Journal } from '../../server/store/journal.js';
import { parseLines } from '../../server/transfer/import.js';
import { builtRequest } from '../../server/otlp/items.js';
import { readFileSync } from 'node:fs';
import { waitFor } from '../helpers/wait.js';
import { rawGrpcClient } from '../helpers/grpc.js';
import { spans, logs, send } from './data.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const LINE_HEAD = /^\d\d:\d\d:\d\d\.\d{3} {2}/;

/** Collects what a stream receives, as text. @param {NodeJS.ReadableStream} stream */
function collect(stream) {
  const got = { text: '' };
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    got.text += chunk;
  });
  return got;
}

/**
 * Starts the CLI on free ports and resolves once it has printed its addresses.
 * @param {string[]} args
 */
async function startCli(args) {
  const child = spawn(process.execPath, ['server/cli.js', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const banner = await waitFor(() => /UI \+ API +(\S+)\n/.test(stdout.text + stderr.text) && stdout.text + stderr.text, {
    timeoutMs: 20000,
    what: 'the CLI to print its addresses',
  });
  /** @param {string} label */
  const address = (label) => /** @type {RegExpExecArray} */ (new RegExp(`${label} +(\\S+)`).exec(banner))[1];
  const urls = { grpc: address('OTLP/gRPC'), http: address('OTLP/HTTP'), ui: address('UI \\+ API') };
  return {
    urls,
    stdout,
    stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

test('summary: one line per request with service, count and fault, and a span tree for traces', async () => {
  const out = new PassThrough();
  const printed = collect(out);
  const c = await startCollector({ print: 'summary', printTo: out });
  try {
    await send(c, 'traces', spans('shop', ['GET /cart', 'SELECT cart', 'fail payment']));
    const rule = await c.client.faults.add({ action: 'unavailable', signals: 'logs', times: 1 });
    await send(c, 'logs', logs('shop', ['lost']));
    await send(c, 'logs', logs('shop', ['kept']));
    const grpcRule = await c.client.faults.add({ action: 'unavailable', transports: 'grpc' });
    const grpc = rawGrpcClient(c.urls.grpc);
    await grpc.exportRaw('opentelemetry.proto.collector.logs.v1.LogsService', readFileSync(new URL('../../fixtures/logs.pb', import.meta.url)));
    grpc.close();
    await waitFor(() => printed.text.split('\n').filter((l) => LINE_HEAD.test(l)).length === 4, { what: 'four summary lines' });
    const lines = printed.text
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(LINE_HEAD, 'TIME  '));
    assert.deepEqual(lines, [
      'TIME  http/json   traces   shop  3 spans',
      '  GET /cart 2.5 ms  · trace ' + lines[1].slice(-8),
      '  ├─ SELECT cart 2.5 ms',
      '  └─ fail payment 2.5 ms ERROR',
      `TIME  http/json   logs     shop  1 log record  fault unavailable (rule ${rule.id}) answered 503`,
      'TIME  http/json   logs     shop  1 log record',
      `TIME  grpc        logs     checkout, payment, frontend  28 log records  fault unavailable (rule ${grpcRule.id}) answered UNAVAILABLE`,
    ]);
  } finally {
    await c.stop();
  }
});

test('summary: a span tree cut short says how many spans it leaves out', async () => {
  const out = new PassThrough();
  const printed = collect(out);
  const c = await startCollector({ print: 'summary', printTo: out });
  try {
    await send(
      c,
      'traces',
      spans(
        'shop',
        Array.from({ length: 11 }, (_, i) => `step ${i}`),
      ),
    );
    await waitFor(() => printed.text.includes('…'), { what: "the tree's last line" });
    const lines = printed.text.trimEnd().split('\n');
    assert.equal(lines.length, 10, printed.text);
    assert.equal(lines.at(-1), '  … 3 more spans');
  } finally {
    await c.stop();
  }
});

/**
 * The tree `--print summary` draws, from every span sorted: parents before children, siblings by start (stable),
 * spans whose parent is not in the request as roots; eight lines, then how many spans are left out.
 * @param {any[]} all the request's spans, in its order
 */
function treeBySorting(all) {
  const key = (/** @type {any} */ s) => s.traceId + s.spanId;
  const ids = new Set(all.map(key));
  const byStart = (/** @type {any} */ a, /** @type {any} */ b) =>
    BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : BigInt(a.startTimeUnixNano) > BigInt(b.startTimeUnixNano) ? 1 : 0;
  const kids = (/** @type {any} */ p) => all.filter((s) => s.parentSpanId && s.traceId + s.parentSpanId === key(p)).sort(byStart);
  /** @type {string[]} */
  const lines = [];
  const walk = (/** @type {any} */ s, /** @type {string} */ lead, /** @type {string} */ indent, suffix = '') => {
    if (lines.length >= 8) return;
    lines.push(`${lead}${s.name} 1.0 ms${suffix}`);
    const children = kids(s);
    children.forEach((kid, i) => {
      const last = i === children.length - 1;
      walk(kid, `${indent}${last ? '└─ ' : '├─ '}`, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  const roots = all.filter((s) => !(s.parentSpanId && ids.has(s.traceId + s.parentSpanId))).sort(byStart);
  for (const r of roots) walk(r, '  ', '  ', `  · trace ${r.traceId.slice(0, 8)}`);
  if (all.length > lines.length) lines.push(`  … ${all.length - lines.length} more span${all.length - lines.length === 1 ? '' : 's'}`);
  return lines;
}

test('summary: the span tree of requests of every shape is the one sorting every span draws; none past 8,192 spans', async () => {
  const out = new PassThrough();
  const printed = collect(out);
  const c = await startCollector({ print: 'summary', printTo: out });
  let seed = 7;
  const random = (/** @type {number} */ n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const hexOf = (/** @type {number} */ n, width = 16) => n.toString(16).padStart(width, '0');
  try {
    for (const [round, count] of [1, 2, 9, 40, 300, 3000, 8192, 8193].entries()) {
      // few traces and few start times: siblings tie, parents come after their children, some are missing
      const traces = 1 + random(Math.min(count, 5));
      const all = Array.from({ length: count }, (_, i) => {
        const trace = random(traces);
        const parent = random(4) === 0 ? 0 : random(4) === 0 ? count + 1 + random(5) : 1 + random(count);
        const start = 1768469400000000000n + BigInt(random(6)) * 1000n;
        return {
          traceId: hexOf(round * 10 + trace + 1, 32),
          spanId: hexOf(i + 1),
          parentSpanId: parent === 0 ? '' : hexOf(parent),
          name: `s${i}`,
          startTimeUnixNano: String(start),
          endTimeUnixNano: String(start + 1000000n),
        };
      });
      const request = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: `shape${round}` } }] }, scopeSpans: [{ spans: all }] }] };
      printed.text = '';
      assert.equal(await send(c, 'traces', request), 200);
      await waitFor(() => printed.text.includes(`shape${round}`) && printed.text.endsWith('\n'), { what: `the summary of ${count} spans` });
      const lines = printed.text.trimEnd().split('\n').slice(1);
      assert.deepEqual(lines, count > 8192 ? ['  (no tree: one is drawn for requests of up to 8192 spans)'] : treeBySorting(all), `${count} spans`);
    }
  } finally {
    await c.stop();
  }
});

test("summary: a forwarded request's line says what the upstream answered", async () => {
  const upstream = await startCollector({ print: 'none' });
  const out = new PassThrough();
  const printed = collect(out);
  const c = await startCollector({ print: 'summary', printTo: out, forward: [upstream.urls.http] });
  try {
    await send(c, 'logs', logs('shop', ['sent on']));
    const rule = await c.client.faults.add({ action: 'unavailable', side: 'upstream', times: 1 });
    await send(c, 'logs', logs('shop', ['held back']));
    await waitFor(() => printed.text.split('\n').filter((l) => LINE_HEAD.test(l)).length === 2, { what: 'two summary lines' });
    const lines = printed.text
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(LINE_HEAD, 'TIME  ').replace(/\d+ ms$/, 'N ms'));
    assert.deepEqual(lines, [
      'TIME  http/json   logs     shop  1 log record  → upstream u1 accepted 200 N ms',
      `TIME  http/json   logs     shop  1 log record  fault unavailable (rule ${rule.id}) answered 503  → upstream u1 faulted 503 N ms`,
    ]);
  } finally {
    await c.stop();
    await upstream.stop();
  }
});

test('a stuck output drops lines and later says how many; pushing never waits', async () => {
  /** @type {(() => void)[]} */
  const held = [];
  let stuck = true;
  let text = '';
  const out = new Writable({
    highWaterMark: 64,
    write(chunk, _encoding, done) {
      text += chunk;
      if (stuck) held.push(done);
      else done();
    },
  });
  const queue = new OutputQueue(out, (/** @type {number} */ n) => `item ${n}\n`, { maxItems: 100, batch: 10 });
  const started = performance.now();
  for (let i = 0; i < 5000; i++) queue.push(i);
  const pushMs = performance.now() - started;
  assert.ok(queue.length <= 101, `the queue stays bounded (${queue.length})`);
  await waitFor(() => held.length > 0, { what: 'the first write' });
  for (let i = 5000; i < 6000; i++) queue.push(i);
  assert.ok(queue.length <= 101);
  assert.ok(pushMs < 200, `5000 pushes took ${pushMs.toFixed(1)} ms`);

  stuck = false;
  for (const done of held.splice(0)) done();
  await waitFor(() => queue.length === 0 && /not printed/.test(text), { what: 'the queue to drain' });
  const lines = text.trimEnd().split('\n');
  const printedItems = lines.filter((l) => l.startsWith('item ')).map((l) => Number(l.slice(5)));
  // Each run of dropped items is reported in its place: the items printed after a gap line are newer.
  let dropped = 0;
  let expected = 0;
  for (const line of lines) {
    if (line.startsWith('item ')) {
      assert.equal(Number(line.slice(5)), expected);
      expected++;
      continue;
    }
    const gap = /^otlp-mock: (\d+) requests? not printed: the output could not keep up$/.exec(line);
    assert.ok(gap, line);
    dropped += Number(gap[1]);
    expected += Number(gap[1]);
  }
  assert.equal(expected, 6000);
  assert.ok(dropped > 0);
  assert.equal(printedItems.length + dropped, 6000, 'every item is either printed or counted as dropped');
  queue.close();
});

test('the CLI prints a summary by default', async () => {
  const cli = await startCli([]);
  try {
    await send(cli, 'traces', spans('cli', ['root', 'child']));
    await waitFor(() => /traces +cli +2 spans\n {2}root 2\.5 ms .*\n {2}└─ child 2\.5 ms\n/.test(cli.stdout.text), {
      timeoutMs: 10000,
      what: `the summary in ${JSON.stringify(cli.stdout.text)}`,
    });
  } finally {
    await cli.stop();
  }
});

test('--print json writes only OTLP/JSON lines to stdout, which import back', async () => {
  const cli = await startCli(['--print', 'json']);
  try {
    assert.match(cli.stderr.text, /^otlp-mock .*\nOTLP\/gRPC /, 'the addresses go to stderr');
    await send(cli, 'traces', spans('json', ['a', 'b']));
    await send(cli, 'logs', logs('json', ['x']));
    await waitFor(() => cli.stdout.text.split('\n').length === 3, { timeoutMs: 10000, what: 'two JSON lines' });
    const requests = parseLines(cli.stdout.text);
    assert.deepEqual(
      requests.map((r) => [r.signal.name, r.signal.countItems(r.request)]),
      [
        ['traces', 2],
        ['logs', 1],
      ],
    );
    // Imported lines are stored as OTLP/JSON received on 4318 is: unbuilt, built when read.
    assert.equal(builtRequest(requests[0].signal, requests[0].request).resourceSpans[0].scopeSpans[0].spans[1].name, 'b');
  } finally {
    await cli.stop();
  }
});

test('--print none writes nothing but the addresses', async () => {
  const cli = await startCli(['--print', 'none']);
  const banner = cli.stdout.text;
  await send(cli, 'traces', spans('quiet', ['a']));
  const res = await fetch(`${cli.urls.ui}/api/spans?service=quiet&minCount=1&timeoutMs=10000`);
  assert.equal(res.status, 200);
  await cli.stop();
  assert.equal(cli.stdout.text, banner + 'otlp-mock: SIGTERM, stopping\n');
});

test('an unknown --print mode is refused', async () => {
  const child = spawn(process.execPath, ['server/cli.js', '--print', 'loud'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collect(child.stderr);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr.text, /--print: "loud" is not one of none, summary, json/);
});

test('the queue is also bounded by what its items hold', async () => {
  let text = '';
  const out = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  const queue = new OutputQueue(out, (/** @type {number} */ n) => `item ${n}\n`, { weigh: (n) => (n === 0 ? 50 : 2), maxWeight: 5 });
  for (let i = 0; i < 10; i++) queue.push(i);
  await waitFor(() => queue.length === 0 && text.includes('not printed'), { what: 'the queue to drain' });
  assert.equal(text, 'item 0\notlp-mock: 9 requests not printed: the output could not keep up\n', 'an oversized first item still prints');
  for (let i = 10; i < 13; i++) queue.push(i);
  await waitFor(() => queue.length === 0 && text.includes('item 11'), { what: 'the queue to drain again' });
  assert.match(text, /not printed: the output could not keep up\nitem 10\nitem 11\notlp-mock: 1 request not printed/);
  queue.close();
});

test('past the per-second limit, requests are counted on one line a second instead of printed one by one', async () => {
  const out = new PassThrough();
  const printed = collect(out);
  const store = new Store();
  const journal = new Journal();
  const printer = startPrinter({ mode: 'summary', store, journal, out, fullPerSecond: 3 });
  try {
    const outcomes = ['accepted', 'accepted', 'accepted', 'accepted', 'rejected', 'accepted', 'faulted', 'accepted'];
    // Each request received 10 ms after the one before, all recorded at once: the count line is stamped with
    // the last it counts, never earlier than the lines printed above it.
    const started = Date.now();
    outcomes.forEach((outcome, i) =>
      journal.record({
        id: journal.nextId(),
        time: new Date(started + i * 10).toISOString(),
        transport: 'http',
        signal: i < 6 ? 'traces' : 'logs',
        path: '/v1/traces',
        contentType: 'application/x-protobuf',
        contentEncoding: '',
        bytes: 10,
        items: 10 + i,
        userAgent: '',
        headers: {},
        fault: null,
        response: { status: 200, message: 'OK' },
        outcome: /** @type {any} */ (outcome),
        durationMs: 0,
      }),
    );
    await waitFor(() => /more requests/.test(printed.text), { what: 'the rollup line', timeoutMs: 3000 });
    const lines = printed.text.trimEnd().split('\n');
    assert.equal(lines.filter((l) => LINE_HEAD.test(l) && !l.includes('…')).length, 3, printed.text);
    const clockOf = (/** @type {string} */ line) => line.slice(0, 12);
    assert.equal(clockOf(lines[3]), clock(new Date(started + 70).toISOString()), "the count line's time: the last request it counts");
    assert.ok(clockOf(lines[3]) >= clockOf(lines[2]), printed.text);
    assert.match(
      lines[3],
      /^\d\d:\d\d:\d\d\.\d{3} {2}… 5 more requests this second: 42 spans, 33 log records; 1 rejected, 1 faulted \(GET \/api\/requests lists each\)$/,
    );
  } finally {
    printer.stop();
  }
});
