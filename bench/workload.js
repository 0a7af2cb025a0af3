// The benchmark's request: a batch of spans as an SDK's batch processor sends them, one resource and
// scope, every span with its own ids and ten string attributes. Seeded, so every run sends the same bytes.
import { randomBytes } from 'node:crypto';
import { encodeRequest } from '../server/otlp/schema.js';
import { signalByName } from '../server/otlp/signals.js';

export const SPANS_PER_REQUEST = 512;
export const ATTRIBUTES_PER_SPAN = 10;
export const TRACES = /** @type {import('../server/otlp/signals.js').Signal} */ (signalByName('traces'));

/** A seeded generator of numbers in [0, 1): the same seed gives the same bytes every run. @param {number} seed */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROUTES = ['/api/products', '/api/products/{id}', '/api/cart', '/api/checkout', '/api/recommendations', '/api/ads'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'okhttp/4.12.0',
];

/**
 * @param {number} seed a different seed gives different ids and values
 * @param {number} [spans]
 * @returns {any} a canonical ExportTraceServiceRequest
 */
export function spanRequest(seed, spans = SPANS_PER_REQUEST) {
  const next = random(seed);
  /** @param {number} bytes */
  const hex = (bytes) => {
    let s = '';
    for (let i = 0; i < bytes; i++)
      s += Math.floor(next() * 256)
        .toString(16)
        .padStart(2, '0');
    return s;
  };
  const str = (/** @type {string} */ key, /** @type {string} */ value) => ({ key, value: { stringValue: value } });
  const start = 1768469400000000000n + BigInt(seed) * 1_000_000_000n;
  const list = [];
  let traceId = hex(16);
  let parent = '';
  for (let i = 0; i < spans; i++) {
    if (i % 8 === 0) {
      traceId = hex(16);
      parent = '';
    }
    const spanId = hex(8);
    const route = ROUTES[Math.floor(next() * ROUTES.length)];
    const t0 = start + BigInt(i) * 1_000_000n + BigInt(Math.floor(next() * 1e5));
    const requestId = hex(12);
    list.push({
      traceId,
      spanId,
      parentSpanId: parent,
      flags: 0x101,
      name: `${METHODS[i % METHODS.length]} ${route}`,
      kind: parent ? 3 : 2,
      startTimeUnixNano: String(t0),
      endTimeUnixNano: String(t0 + BigInt(Math.floor(next() * 5e7))),
      attributes: [
        str('http.request.method', METHODS[i % METHODS.length]),
        str('http.route', route),
        str('url.path', route.replace('{id}', String(Math.floor(next() * 1e6)))),
        str('url.scheme', 'https'),
        str('server.address', 'shop.example.com'),
        str('network.peer.address', `10.0.${Math.floor(next() * 256)}.${Math.floor(next() * 256)}`),
        str('user_agent.original', AGENTS[i % AGENTS.length]),
        str('app.request.id', requestId),
        str('app.tenant', `tenant-${Math.floor(next() * 50)}`),
        str('app.session.id', hex(16)),
      ],
      status: { code: i % 50 === 0 ? 2 : 0, message: '' },
    });
    parent = spanId;
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            str('service.name', 'frontend'),
            str('service.version', '2.4.1'),
            str('service.instance.id', 'frontend-7d9f8b6c5-x2k4q'),
            str('deployment.environment.name', 'bench'),
            str('telemetry.sdk.name', 'opentelemetry'),
            str('telemetry.sdk.language', 'nodejs'),
          ],
        },
        scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.208.0' }, spans: list }],
      },
    ],
  };
}

/** @param {number} seed @returns {Buffer} the request in protobuf */
export function protoBody(seed) {
  const bytes = encodeRequest('traces', spanRequest(seed));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** @param {number} seed @returns {Buffer} the request in OTLP/JSON, every field written as the JS exporter does */
export function jsonBody(seed) {
  return Buffer.from(JSON.stringify(spanRequest(seed)));
}

/**
 * Spans per CPU-second of `decode` over at least `roundMs` of `bodies` in turn (requests of SPANS_PER_REQUEST
 * spans): CPU time, so other processes slow a round but do not skew it.
 * @param {(body: any) => unknown} decode @param {any[]} bodies @param {number} roundMs
 */
export function decodeRate(decode, bodies, roundMs) {
  let n = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  do decode(bodies[n++ % bodies.length]);
  while (performance.now() - started < roundMs);
  const used = process.cpuUsage(cpu);
  return (n * SPANS_PER_REQUEST) / ((used.user + used.system) / 1e6);
}

/**
 * Encoded span requests whose trace ids are made new for each send, so every request carries new traces without
 * encoding thousands of spans a second: `templates` seeds' requests in turn, 8 spans a trace, or with `alone`, a
 * trace of each span.
 * @param {number} templates @param {boolean} [alone]
 * @returns {() => { body: Buffer, items: number }}
 */
export function newTraceRequests(templates, alone = false) {
  const out = Array.from({ length: templates }, (_, i) => {
    const body = protoBody(i + 1);
    const spans = spanRequest(i + 1).resourceSpans[0].scopeSpans[0].spans;
    const traces = [...new Set(spans.map((/** @type {any} */ s) => s.traceId))].map((hex) => {
      const id = Buffer.from(hex, 'hex');
      /** @type {number[]} */
      const at = [];
      for (let p = body.indexOf(id); p >= 0; p = body.indexOf(id, p + 1)) at.push(p);
      return at;
    });
    return { body, traces, items: spans.length };
  });
  let next = 0;
  return () => {
    const t = out[next++ % out.length];
    const body = Buffer.from(t.body);
    for (const at of t.traces) {
      let id = randomBytes(16);
      for (const p of at) {
        id.copy(body, p);
        if (alone) id = randomBytes(16);
      }
    }
    return { body, items: t.items };
  };
}
