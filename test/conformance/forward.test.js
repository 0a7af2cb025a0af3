// Forward mode's edges: the /api/forward routes with bad input, upstreams that answer badly, and the command line.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestCollector } from '../helpers/collector.js';
import { postOtlp } from '../helpers/http.js';
import { encodePb, fixturePb, sampleRequest } from '../helpers/payloads.js';
import { waitFor } from '../helpers/wait.js';
import { decodeStatus } from '../../server/otlp/schema.js';

const PROTOBUF = 'application/x-protobuf';
const root = fileURLToPath(new URL('../../', import.meta.url));

/** @type {import('../helpers/collector.js').TestCollector} */
let collector;
/** @type {http.Server} answers as `answer` says */
let upstream;
/** @type {(req: http.IncomingMessage, res: http.ServerResponse) => unknown} */
let answer = (_req, res) => res.end();

before(async () => {
  collector = await startTestCollector({ forwardTimeoutMs: 1000 });
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', () => resolve(undefined)));
});
after(async () => {
  await collector.stop();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(() => resolve(undefined)));
});
beforeEach(async () => {
  await collector.clear();
  await collector.api('/api/forward', { method: 'DELETE' });
});

const upstreamUrl = () => `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (upstream.address()).port}`;

/** @param {string} method @param {string} path @param {unknown} [body] @param {string} [contentType] */
async function call(method, path, body, contentType = 'application/json') {
  const res = await fetch(collector.urls.ui + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe('/api/forward', () => {
  test('add, list, get and remove targets; the first is the primary', async () => {
    const a = await call('POST', '/api/forward', { url: 'grpc://127.0.0.1:4317', headers: { Authorization: 'Bearer x', 'X-Tenant': 'a' } });
    assert.equal(a.status, 201);
    assert.equal(a.headers.get('location'), `/api/forward/${a.body.id}`);
    assert.deepEqual(
      { ...a.body, id: 'x' },
      {
        id: 'x',
        url: 'grpc://127.0.0.1:4317',
        transport: 'grpc',
        encoding: 'received',
        compression: 'none',
        headers: { authorization: '(redacted)', 'x-tenant': 'a' },
        role: 'primary',
        inflight: 0,
        inflightBytes: 0,
        accepted: 0,
        partial: 0,
        refused: 0,
        failed: 0,
        timeout: 0,
        shed: 0,
        shedBytes: 0,
        faulted: 0,
        lastFailure: null,
      },
    );
    const b = await call('POST', '/api/forward', { url: 'http://127.0.0.1:4318', encoding: 'json' });
    assert.equal(b.body.role, 'tee');
    const list = await call('GET', '/api/forward');
    assert.deepEqual(
      list.body.targets.map((/** @type {any} */ t) => [t.id, t.role]),
      [
        [a.body.id, 'primary'],
        [b.body.id, 'tee'],
      ],
    );
    assert.deepEqual([list.body.timeoutMs, list.body.maxInflight, list.body.maxInflightBytes], [1000, 64, 32 * 2 ** 20]);
    assert.equal((await call('GET', `/api/forward/${b.body.id}`)).body.encoding, 'json');
    assert.equal((await call('DELETE', `/api/forward/${a.body.id}`)).status, 204);
    assert.equal((await call('GET', '/api/forward')).body.targets[0].role, 'primary');
    assert.equal((await call('DELETE', `/api/forward/${a.body.id}`)).status, 404);
    assert.equal((await call('GET', '/api/forward/nope')).status, 404);
    assert.equal((await call('DELETE', '/api/forward')).status, 204);
    assert.deepEqual((await call('GET', '/api/forward')).body.targets, []);
  });

  test('bad targets are refused with 400, the reason and the field; nothing is added', async () => {
    for (const [body, field] of /** @type {[unknown, string][]} */ ([
      [{}, 'url'],
      [{ url: 7 }, 'url'],
      [{ url: 'ftp://x' }, 'url'],
      [{ url: 'http://x:1/v1/logs' }, 'url'],
      [{ url: 'grpc://x:1', encoding: 'json' }, 'encoding'],
      [{ url: 'http://x:1', headers: { 'x-a': 'a\nb' } }, 'headers.x-a'],
      [{ url: 'http://x:1', extra: true }, 'extra'],
      [[{ url: 'http://x:1' }], 'target'],
      ['"http://x:1"', 'target'],
    ])) {
      const res = await call('POST', '/api/forward', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.field, field, JSON.stringify(res.body));
      assert.ok(res.body.error.length > 10);
    }
    const truncated = await call('POST', '/api/forward', '{"url":"http://x', 'application/json');
    assert.equal(truncated.status, 400);
    const huge = await call('POST', '/api/forward', { url: 'http://x:1', headers: { a: 'v'.repeat(2 * 2 ** 20) } });
    assert.ok(huge.status === 400 || huge.status === 413, String(huge.status));
    assert.deepEqual((await call('GET', '/api/forward')).body.targets, []);
  });

  test('the routes are in the OpenAPI document, and rules take side', async () => {
    const doc = (await call('GET', '/api/openapi.json')).body;
    assert.ok(doc.paths['/api/forward'].post);
    assert.ok(doc.paths['/api/forward/{id}'].delete);
    assert.deepEqual(doc.paths['/api/faults'].post.requestBody.content['application/json'].schema.properties.side.enum, ['client', 'upstream', null]);
  });
});

/**
 * Sends one traces request to the collector and returns the client's answer and the journal entry.
 * @returns {Promise<{ res: import('../helpers/http.js').RawResponse, entry: any }>}
 */
async function forwardOne() {
  const res = await postOtlp(collector.urls.http, '/v1/traces', fixturePb('traces'), PROTOBUF);
  const { requests } = await collector.api('/api/requests?signal=traces&limit=1');
  return { res, entry: requests[0] };
}

describe('upstreams that answer badly', () => {
  beforeEach(async () => {
    await collector.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: upstreamUrl() }) });
  });

  test('200 with a body that is no export response: accepted', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': PROTOBUF }).end(Buffer.from([0xff, 0xff, 0xff]));
    const { res, entry } = await forwardOne();
    assert.equal(res.status, 200);
    assert.deepEqual([entry.outcome, entry.upstream.outcome, entry.upstream.status], ['accepted', 'accepted', 200]);
  });

  test('an error in plain text: the status passes on, the text is the message', async () => {
    answer = (_req, res) => res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '2' }).end('upstream is\u0000 restarting');
    const { res, entry } = await forwardOne();
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '2');
    assert.equal(decodeStatus(res.body).message, 'upstream is  restarting');
    assert.deepEqual([entry.outcome, entry.upstream.outcome, entry.upstream.status, entry.stored], ['rejected', 'refused', 503, true]);
  });

  test('an error with a truncated Status body, and one far too long: the status passes on', async () => {
    answer = (_req, res) => res.writeHead(400, { 'content-type': PROTOBUF }).end(Buffer.from([0x12, 0x40, 0x61]));
    let { res, entry } = await forwardOne();
    assert.equal(res.status, 400);
    assert.equal(entry.upstream.message, 'HTTP 400');
    answer = (_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('e'.repeat(4 * 2 ** 20));
    ({ res, entry } = await forwardOne());
    assert.equal(res.status, 500);
    assert.ok(entry.upstream.message.length <= 1025);
  });

  test('a redirect, a status that is no HTTP error, a socket closed mid-answer: no answer, 502', async () => {
    for (const bad of /** @type {((req: http.IncomingMessage, res: http.ServerResponse) => unknown)[]} */ ([
      (_req, res) => res.writeHead(301, { location: 'http://elsewhere/' }).end(),
      (_req, res) => res.writeHead(399).end(),
      (req) => req.socket.destroy(),
      (_req, res) => {
        res.writeHead(200, { 'content-type': PROTOBUF, 'content-length': '100' });
        res.write(Buffer.from([0x0a]));
        setTimeout(() => res.socket?.destroy(), 20);
      },
    ])) {
      answer = bad;
      const { res, entry } = await forwardOne();
      assert.equal(res.status, 502, String(bad));
      assert.deepEqual([entry.outcome, entry.upstream.outcome, entry.upstream.status], ['rejected', 'failed', null]);
    }
  });

  test('no answer within the timeout: 504 and the upstream call ends', async () => {
    answer = () => {};
    const { res, entry } = await forwardOne();
    assert.equal(res.status, 504);
    assert.ok(res.ms >= 990 && res.ms < 3000, `answered after ${res.ms} ms`);
    assert.deepEqual([entry.outcome, entry.upstream.outcome], ['rejected', 'timeout']);
    await waitFor(async () => (await collector.api('/api/forward')).targets[0].inflight === 0, { what: 'the call to end' });
  });

  test('a gRPC target that never answers is a timeout every time, whichever timer fires first', async (t) => {
    const silent = http2.createServer();
    silent.on('stream', () => {});
    await new Promise((resolve) => silent.listen(0, '127.0.0.1', () => resolve(undefined)));
    const quick = await startTestCollector({ forwardTimeoutMs: 100 });
    t.after(async () => {
      await quick.stop();
      await new Promise((resolve) => silent.close(() => resolve(undefined)));
    });
    const port = /** @type {import('node:net').AddressInfo} */ (silent.address()).port;
    await quick.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `grpc://127.0.0.1:${port}` }) });
    const answers = await Promise.all(Array.from({ length: 24 }, () => postOtlp(quick.urls.http, '/v1/traces', fixturePb('traces'), PROTOBUF)));
    assert.deepEqual([...new Set(answers.map((r) => r.status))], [504]);
    const { requests } = await quick.api('/api/requests?signal=traces&limit=100');
    assert.deepEqual([...new Set(requests.map((/** @type {any} */ e) => `${e.upstream.outcome} ${e.upstream.status}`))], ['timeout null']);
    const [target] = (await quick.api('/api/forward')).targets;
    assert.deepEqual([target.timeout, target.refused], [24, 0]);
  });

  test('a request otlp-mock refuses is not forwarded', async () => {
    /** @type {string[]} */
    const seen = [];
    answer = (req, res) => {
      seen.push(String(req.url));
      res.writeHead(200).end();
    };
    const bad = await postOtlp(collector.urls.http, '/v1/traces', Buffer.from([0x0a, 0x05, 0x01]), PROTOBUF);
    assert.equal(bad.status, 400);
    await collector.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'reject', times: 1 }) });
    const faulted = await postOtlp(collector.urls.http, '/v1/traces', encodePb('traces', sampleRequest('traces', { service: 'x' })), PROTOBUF);
    assert.equal(faulted.status, 400);
    await collector.api('/api/faults', { method: 'DELETE' });
    const { requests } = await collector.api('/api/requests?signal=traces');
    assert.ok(requests.every((/** @type {any} */ e) => e.upstream === undefined));
    assert.deepEqual(seen, []);
  });
});

describe('command line', () => {
  /** @param {string[]} args @param {NodeJS.ProcessEnv} [env] */
  function cli(args, env = {}) {
    const child = spawn(process.execPath, ['server/cli.js', '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--print', 'none', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out.stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (out.stderr += chunk));
    /** @type {Promise<number|null>} */
    const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
    return { child, out, exited };
  }

  test('a bad forward target or option is a usage error in one sentence', async () => {
    for (const [args, message] of /** @type {[string[], RegExp][]} */ ([
      [['--forward', 'ftp://collector:21'], /scheme ftp:/],
      [['--forward', 'http://collector:4318', '--forward-header', 'novalue'], /NAME=VALUE/],
      [['--forward-encoding', 'yaml'], /not one of received, protobuf, json/],
      [['--forward-max-inflight', '0'], /positive whole number/],
    ])) {
      const run = cli(args);
      assert.equal(await run.exited, 2, run.out.stderr);
      assert.match(run.out.stderr, message);
      assert.equal(run.out.stderr.trim().split('\n')[0].startsWith('otlp-mock: '), true);
    }
  });

  test('OTLP_MOCK_FORWARD and OTLP_MOCK_FORWARD_HEADER: the banner names each target', async () => {
    const run = cli([], { OTLP_MOCK_FORWARD: 'grpc://127.0.0.1:4317;http://127.0.0.1:4318', OTLP_MOCK_FORWARD_HEADER: 'x-tenant=a' });
    try {
      const text = await waitFor(() => /Forward.*\n.*Forward.*\n/.test(run.out.stdout) && run.out.stdout, {
        timeoutMs: 20000,
        what: `the banner; stderr ${run.out.stderr}`,
      });
      assert.match(text, /Forward +grpc:\/\/127\.0\.0\.1:4317 \(primary\)\nForward +http:\/\/127\.0\.0\.1:4318 \(tee\)/);
      const ui = /UI \+ API +(\S+)/.exec(text)?.[1];
      const { targets } = await (await fetch(`${ui}/api/forward`)).json();
      assert.deepEqual(
        targets.map((/** @type {any} */ t) => t.headers),
        [{ 'x-tenant': 'a' }, { 'x-tenant': 'a' }],
      );
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });
});
