// Serving the built UI: content types, caching, the SPA fallback, and the page shown before a build.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { registerStatic } from '../../server/api/static.js';
import { precompress } from '../../scripts/build-web.js';
import { gunzipSync } from 'node:zlib';

const dist = mkdtempSync(join(tmpdir(), 'otlp-mock-dist-'));
const INDEX = '<!doctype html><title>ui</title><script type="module" src="/assets/index-Ab12Cd34.js"></script>';
const SCRIPT = 'console.log("ui")';

const app = Fastify();
const bare = Fastify();
let base = '';
let bareBase = '';

before(async () => {
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  precompress(dist);
  app.get('/api/health', async () => ({ status: 'ok' }));
  registerStatic(app, { root: dist });
  registerStatic(bare, { root: join(dist, 'missing') });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  bareBase = await bare.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await app.close();
  await bare.close();
  rmSync(dist, { recursive: true, force: true });
});

test('/ serves index.html, revalidated on every load', async () => {
  const res = await fetch(`${base}/`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'.*object-src 'none'/);
  assert.equal(await res.text(), INDEX);
});

test('hashed assets get their content type and a year of immutable caching; other files must revalidate', async () => {
  const js = await fetch(`${base}/assets/index-Ab12Cd34.js`);
  assert.equal(js.status, 200);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal(js.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(await js.text(), SCRIPT);
  const svg = await fetch(`${base}/favicon.svg`);
  assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
  assert.equal(svg.headers.get('cache-control'), 'no-cache');
});

test('a matching ETag gets 304 without a body; HEAD gets the length without one', async () => {
  const first = await fetch(`${base}/assets/index-Ab12Cd34.js`);
  const etag = first.headers.get('etag');
  assert.ok(etag);
  const again = await fetch(`${base}/assets/index-Ab12Cd34.js`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  const head = await fetch(`${base}/assets/index-Ab12Cd34.js`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(SCRIPT.length));
});

test("the UI's routes fall back to index.html, dotted metric names included", async () => {
  for (const path of ['/traces', '/traces/4bf92f3577b34da6a3ce929d0e0e4736?span=00f067aa0ba902b7', '/metrics/frontend/http.server.request.duration', '/logs?q=a.b']) {
    const res = await fetch(base + path);
    assert.equal(res.status, 200, path);
    assert.equal(await res.text(), INDEX, path);
  }
});

test('missing files are 404s, not the page; unknown API paths are JSON 404s; API routes still win', async () => {
  assert.equal((await fetch(`${base}/assets/index-gone1234.js`)).status, 404);
  assert.equal((await fetch(`${base}/missing.css`)).status, 404);
  const api = await fetch(`${base}/api/nope`);
  assert.equal(api.status, 404);
  assert.equal((await api.json()).statusCode, 404);
  assert.deepEqual(await (await fetch(`${base}/api/health`)).json(), { status: 'ok' });
});

test('paths cannot leave the UI directory', async () => {
  const { port } = new URL(base);
  for (const path of ['/../package.json', '/assets/..%2f..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/etc/hostname', '/..%5c..%5cetc%5chostname']) {
    /** @type {{ status: number | undefined, body: string }} */
    const res = await new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path }, (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (chunk) => (body += chunk));
        r.on('end', () => resolve({ status: r.statusCode, body }));
      });
      req.on('error', reject);
      req.end();
    });
    // Either refused or answered with the page itself: never a file from outside.
    assert.ok(res.status === 404 || (res.status === 200 && res.body === INDEX), `${path} → ${res.status} ${res.body.slice(0, 60)}`);
  }
});

test('before a build, / explains how to build the UI', async () => {
  const res = await fetch(`${bareBase}/`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.match(await res.text(), /npm run build/);
  assert.equal((await fetch(`${bareBase}/traces`)).status, 200);
});

test('a browser that accepts compression gets the precompressed copy the build wrote; others get the file', async () => {
  const path = `${base}/assets/index-Ab12Cd34.js`;
  const raw = (/** @type {Record<string, string>} */ headers) =>
    new Promise((resolve, reject) => {
      request(path, { headers }, (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
  const gzip = /** @type {any} */ (await raw({ 'accept-encoding': 'gzip, deflate' }));
  assert.equal(gzip.headers['content-encoding'], 'gzip');
  assert.equal(gzip.headers.vary, 'accept-encoding');
  assert.equal(gunzipSync(gzip.body).toString(), SCRIPT);
  const br = /** @type {any} */ (await raw({ 'accept-encoding': 'gzip, br' }));
  assert.equal(br.headers['content-encoding'], 'br');
  assert.notEqual(br.headers.etag, gzip.headers.etag, 'each encoding has its own etag');
  const plain = /** @type {any} */ (await raw({ 'accept-encoding': 'br;q=0, gzip;q=0' }));
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.toString(), SCRIPT);
});
