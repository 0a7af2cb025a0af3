// Proxies that stand between an exporter and a collector and count what crossed them, so that a test can compare
// the collector's own figures with bytes counted elsewhere: request bodies on the wire and after decompression.
import http from 'node:http';
import http2 from 'node:http2';
import { gunzipSync } from 'node:zlib';

/** @typedef {{ requests: number, wire: number, decoded: number }} Counted */

/** @param {Buffer} body @param {string|undefined} encoding */
const decodedLength = (body, encoding) => (encoding === 'gzip' ? gunzipSync(body).length : body.length);

/**
 * An OTLP/HTTP proxy to `target` (http://host:port). @param {string} target
 * @returns {Promise<{ url: string, counted: Counted, close: () => Promise<void> }>}
 */
export async function httpCountingProxy(target) {
  const counted = { requests: 0, wire: 0, decoded: 0 };
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    counted.requests++;
    counted.wire += body.length;
    counted.decoded += decodedLength(body, req.headers['content-encoding']);
    // Only what says what the body is travels on: fetch refuses hop-by-hop headers.
    const headers = /** @type {Record<string, string>} */ ({ 'content-type': req.headers['content-type'] ?? '', 'user-agent': req.headers['user-agent'] ?? '' });
    if (req.headers['content-encoding']) headers['content-encoding'] = req.headers['content-encoding'];
    const answer = await fetch(target + req.url, { method: 'POST', headers, body });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}`, counted, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * A gRPC proxy to `target` (http://host:port): one upstream stream per call, trailers passed back.
 * Counts the message as framed (after its 5-byte prefix), and decompressed when the prefix says so.
 * @param {string} target @returns {Promise<{ url: string, counted: Counted, close: () => Promise<void> }>}
 */
export async function grpcCountingProxy(target) {
  const counted = { requests: 0, wire: 0, decoded: 0 };
  const upstream = http2.connect(target);
  const server = http2.createServer();
  server.on('stream', async (stream, headers) => {
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const message = body.subarray(5);
    counted.requests++;
    counted.wire += message.length;
    counted.decoded += body[0] === 1 ? decodedLength(message, String(headers['grpc-encoding'])) : message.length;
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(':') || name === ':method' || name === ':path'));
    const call = upstream.request(forwarded);
    call.on('response', (answer) => {
      const { ':status': status, ...rest } = answer;
      stream.respond({ ':status': status, ...rest }, { waitForTrailers: true });
    });
    /** @type {Record<string, any>} */
    let trailers = {};
    call.on('trailers', (t) => (trailers = t));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    call.on('data', (chunk) => stream.write(chunk));
    call.on('end', () => stream.end());
    call.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    counted,
    close: async () => {
      upstream.close();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}
