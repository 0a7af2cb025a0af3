import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';

/**
 * @typedef {{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer, ms: number }} RawResponse
 */

/**
 * Sends one HTTP request exactly as described, over a fresh connection so that one test's broken
 * socket cannot affect another. With `chunked` the body goes out in pieces without Content-Length (as the
 * official Node exporters do); otherwise Content-Length is set (as the Python exporter does).
 * A stream body is piped; the server may answer and close before the whole stream is sent.
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: Uint8Array|string|Readable, chunked?: boolean, timeoutMs?: number }} [options]
 * @returns {Promise<RawResponse>}
 */
export function rawRequest(url, { method = 'POST', headers = {}, body, chunked = false, timeoutMs = 10000 } = {}) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers }, agent: false });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no response within ${timeoutMs} ms`));
    }, timeoutMs);
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: Date.now() - started });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      // A server that rejects a body early may reset the socket while the rest is still being written.
      if (answered) return;
      clearTimeout(timer);
      reject(err);
    });
    if (body instanceof Readable) {
      body.on('error', (err) => req.destroy(err));
      req.on('close', () => body.destroy());
      body.pipe(req);
      return;
    }
    if (body === undefined) {
      req.end();
      return;
    }
    const buf = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (!chunked) {
      req.setHeader('content-length', String(buf.length));
      req.end(buf);
      return;
    }
    const piece = Math.max(1, Math.ceil(buf.length / 3));
    for (let i = 0; i < buf.length; i += piece) req.write(buf.subarray(i, i + piece));
    req.end();
  });
}

/**
 * POSTs an OTLP body with the given content type.
 * @param {string} baseUrl @param {string} path @param {Uint8Array|string} body @param {string} contentType
 * @param {Record<string, string>} [headers] @param {{ chunked?: boolean, timeoutMs?: number }} [options]
 */
export function postOtlp(baseUrl, path, body, contentType, headers = {}, options = {}) {
  return rawRequest(baseUrl + path, { headers: { 'content-type': contentType, ...headers }, body, ...options });
}

/** A loopback port nothing listens on (free when asked; a test binds it soon after). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return port;
}
