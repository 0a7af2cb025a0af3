#!/usr/bin/env node
/**
 * Fills a collector with realistic telemetry from a pretend online shop: traces and logs made with the
 * official OpenTelemetry SDKs and exporters (gRPC and HTTP), plus ten minutes of metric history and a CPU profile.
 * Used for the UI screenshots; handy for trying the UI by hand:
 *
 *   node scripts/demo-data.js [--http http://127.0.0.1:4318] [--grpc http://127.0.0.1:4317] [--traces 40]
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
// Seeded, so every run draws the same shop.
import { seededRandom as prng } from '../test/helpers/random.js';
import { profileRequest } from '../test/helpers/ui-data.js';

const SERVICES = {
  frontend: { language: 'nodejs', version: '2.4.1', wire: 'proto' },
  checkout: { language: 'go', version: '1.8.0', wire: 'grpc' },
  cart: { language: 'dotnet', version: '3.1.2', wire: 'grpc' },
  'product-catalog': { language: 'go', version: '1.2.7', wire: 'grpc' },
  inventory: { language: 'python', version: '0.9.4', wire: 'proto' },
  payment: { language: 'java', version: '5.0.3', wire: 'proto' },
  email: { language: 'ruby', version: '1.0.0', wire: 'proto' },
};

/**
 * @typedef {{ svc: keyof typeof SERVICES, name: string, kind?: SpanKind, at?: number, dur: number,
 *   attrs?: Record<string, any>, error?: string, events?: { at: number, name: string, attrs?: Record<string, any> }[],
 *   logs?: { at: number, sev: SeverityNumber, text: string, body: any, attrs?: Record<string, any> }[],
 *   children?: SpanSpec[] }} SpanSpec
 */

/** @param {() => number} rnd @param {number} min @param {number} max */
const between = (rnd, min, max) => min + rnd() * (max - min);

/** The shapes of request the shop serves, with their timings drawn from `rnd`. @param {() => number} rnd @param {number} i */
function scenario(rnd, i) {
  const user = `user-${1000 + Math.floor(rnd() * 9000)}`;
  const pick = rnd();
  if (pick < 0.35) {
    const db = between(rnd, 2, 18);
    return /** @type {SpanSpec} */ ({
      svc: 'frontend',
      name: 'GET /api/products',
      kind: SpanKind.SERVER,
      dur: db + between(rnd, 8, 30),
      attrs: { 'http.request.method': 'GET', 'http.route': '/api/products', 'http.response.status_code': 200, 'url.path': '/api/products', 'user.id': user },
      logs: [{ at: 0.1, sev: SeverityNumber.DEBUG, text: 'DEBUG', body: 'listing products page=1 size=24' }],
      children: [
        {
          svc: 'product-catalog',
          name: 'oteldemo.ProductCatalogService/ListProducts',
          kind: SpanKind.SERVER,
          at: 2,
          dur: db + 3,
          attrs: { 'rpc.system': 'grpc', 'rpc.service': 'oteldemo.ProductCatalogService', 'rpc.method': 'ListProducts' },
          children: [
            {
              svc: 'product-catalog',
              name: 'SELECT catalog.products',
              kind: SpanKind.CLIENT,
              at: 1,
              dur: db,
              attrs: {
                'db.system.name': 'postgresql',
                'db.query.text': 'SELECT id, name, price_cents FROM products ORDER BY rank LIMIT $1',
                'db.response.returned_rows': 24,
              },
            },
          ],
        },
      ],
    });
  }
  if (pick < 0.55) {
    const cache = rnd() < 0.7;
    return /** @type {SpanSpec} */ ({
      svc: 'frontend',
      name: 'GET /api/cart',
      kind: SpanKind.SERVER,
      dur: cache ? between(rnd, 3, 9) : between(rnd, 20, 60),
      attrs: { 'http.request.method': 'GET', 'http.route': '/api/cart', 'http.response.status_code': 200, 'user.id': user },
      children: [
        {
          svc: 'cart',
          name: 'oteldemo.CartService/GetCart',
          kind: SpanKind.SERVER,
          at: 1,
          dur: cache ? 1.5 : 15,
          attrs: { 'rpc.system': 'grpc', 'app.cart.items': Math.floor(rnd() * 5), 'app.cache.hit': cache },
          children: [
            {
              svc: 'cart',
              name: cache ? 'HGETALL' : 'GET',
              kind: SpanKind.CLIENT,
              at: 0.2,
              dur: cache ? 0.8 : 12,
              attrs: { 'db.system.name': 'redis', 'db.operation.name': cache ? 'HGETALL' : 'GET' },
            },
          ],
        },
      ],
    });
  }
  const declined = i % 5 === 3;
  const slowPayment = rnd() < 0.3;
  const payDur = slowPayment ? between(rnd, 300, 900) : between(rnd, 40, 120);
  const items = 1 + Math.floor(rnd() * 3);
  const order = `ord-${(48213 + i).toString()}`;
  /** @type {SpanSpec[]} */
  const reserve = [];
  for (let k = 0; k < items; k++) {
    reserve.push({
      svc: 'inventory',
      name: 'inventory.reserve',
      kind: SpanKind.SERVER,
      at: 22 + k * 9,
      dur: between(rnd, 4, 8),
      attrs: { 'app.product.id': `SKU-${100 + Math.floor(rnd() * 900)}`, 'app.quantity': 1 + Math.floor(rnd() * 2) },
      children: [
        {
          svc: 'inventory',
          name: 'UPDATE stock',
          kind: SpanKind.CLIENT,
          at: 0.5,
          dur: 2.5,
          attrs: { 'db.system.name': 'postgresql', 'db.query.text': 'UPDATE stock SET reserved = reserved + $1 WHERE sku = $2' },
        },
      ],
    });
  }
  const payAt = 24 + items * 9;
  const total = payAt + payDur + (declined ? 6 : 28);
  return /** @type {SpanSpec} */ ({
    svc: 'frontend',
    name: 'POST /api/checkout',
    kind: SpanKind.SERVER,
    dur: total + 4,
    attrs: { 'http.request.method': 'POST', 'http.route': '/api/checkout', 'http.response.status_code': declined ? 402 : 200, 'user.id': user, 'app.order.id': order },
    error: declined ? 'payment declined' : undefined,
    logs: [{ at: 0.2, sev: SeverityNumber.INFO, text: 'INFO', body: `checkout started for ${user}`, attrs: { 'app.order.id': order } }],
    children: [
      {
        svc: 'checkout',
        name: 'oteldemo.CheckoutService/PlaceOrder',
        kind: SpanKind.SERVER,
        at: 2,
        dur: total,
        attrs: { 'rpc.system': 'grpc', 'rpc.method': 'PlaceOrder', 'app.order.id': order, 'app.order.items': items },
        error: declined ? 'payment declined' : undefined,
        logs: [
          { at: 0.1, sev: SeverityNumber.INFO, text: 'INFO', body: `order received ${order}`, attrs: { 'app.order.items': items } },
          ...(slowPayment
            ? [{ at: 0.4, sev: SeverityNumber.WARN, text: 'WARN', body: `payment gateway slow: ${Math.round(payDur)} ms`, attrs: { 'app.gateway': 'stripe-eu' } }]
            : []),
          declined
            ? {
                at: 0.95,
                sev: SeverityNumber.ERROR,
                text: 'ERROR',
                body: { message: 'payment declined', reason: 'insufficient_funds', order },
                attrs: { 'exception.type': 'PaymentDeclinedError' },
              }
            : { at: 0.97, sev: SeverityNumber.INFO, text: 'INFO', body: `order ${order} placed, ${items} item(s)` },
        ],
        children: [
          {
            svc: 'cart',
            name: 'oteldemo.CartService/GetCart',
            kind: SpanKind.SERVER,
            at: 2,
            dur: 12,
            attrs: { 'rpc.system': 'grpc', 'app.cart.items': items },
            children: [{ svc: 'cart', name: 'HGETALL', kind: SpanKind.CLIENT, at: 1, dur: 2, attrs: { 'db.system.name': 'redis' } }],
          },
          ...reserve,
          {
            svc: 'payment',
            name: 'oteldemo.PaymentService/Charge',
            kind: SpanKind.SERVER,
            at: payAt,
            dur: payDur,
            attrs: {
              'rpc.system': 'grpc',
              'app.payment.card_type': rnd() < 0.5 ? 'visa' : 'mastercard',
              'app.payment.amount': Math.round(between(rnd, 15, 400) * 100) / 100,
              'app.payment.currency': 'EUR',
            },
            error: declined ? 'card declined: insufficient funds' : undefined,
            events: declined
              ? [
                  {
                    at: 0.9,
                    name: 'exception',
                    attrs: {
                      'exception.type': 'PaymentDeclinedError',
                      'exception.message': 'card declined: insufficient funds',
                      'exception.stacktrace':
                        'PaymentDeclinedError: card declined\n    at Charge (payment/Charge.java:88)\n    at Gateway.authorize (payment/Gateway.java:41)',
                    },
                  },
                ]
              : [{ at: 0.5, name: 'authorized', attrs: { 'app.payment.auth_code': `A${Math.floor(rnd() * 1e6)}` } }],
            logs: declined
              ? [{ at: 0.9, sev: SeverityNumber.ERROR, text: 'ERROR', body: 'card declined: insufficient funds', attrs: { 'app.payment.gateway_code': '51' } }]
              : [{ at: 0.6, sev: SeverityNumber.INFO, text: 'INFO', body: 'payment authorized' }],
            children: [
              {
                svc: 'payment',
                name: 'POST https://api.payments.example/v1/charges',
                kind: SpanKind.CLIENT,
                at: 3,
                dur: payDur - 8,
                attrs: { 'http.request.method': 'POST', 'server.address': 'api.payments.example', 'http.response.status_code': declined ? 402 : 200 },
                error: declined ? '402 Payment Required' : undefined,
              },
            ],
          },
          ...(declined
            ? []
            : [
                {
                  svc: /** @type {const} */ ('checkout'),
                  name: 'orders publish',
                  kind: SpanKind.PRODUCER,
                  at: payAt + payDur + 4,
                  dur: 3,
                  attrs: { 'messaging.system': 'kafka', 'messaging.destination.name': 'orders', 'messaging.operation.type': 'send' },
                  children: [
                    {
                      svc: /** @type {const} */ ('email'),
                      name: 'orders process',
                      kind: SpanKind.CONSUMER,
                      at: 6,
                      dur: 16,
                      attrs: { 'messaging.system': 'kafka', 'messaging.consumer.group.name': 'email' },
                      logs: [{ at: 0.8, sev: SeverityNumber.INFO, text: 'INFO', body: `confirmation mail queued for ${order}` }],
                    },
                  ],
                },
              ]),
        ],
      },
    ],
  });
}

/** @param {string} service */
function resourceOf(service) {
  const s = SERVICES[/** @type {keyof typeof SERVICES} */ (service)];
  return resourceFromAttributes({
    'service.name': service,
    'service.namespace': 'shop',
    'service.version': s.version,
    'service.instance.id': `${service}-5c7d9-${service.length}x`,
    'deployment.environment.name': 'staging',
    'telemetry.sdk.language': s.language,
    'host.name': `node-${(service.length % 3) + 1}`,
  });
}

/**
 * Sends `traces` traces (with their logs) spread over the last few minutes, then flushes.
 * @param {{ http: string, grpc: string }} urls @param {{ traces?: number, seed?: number, now?: number }} [options]
 */
export async function sendDemoTraces(urls, { traces = 40, seed = 7, now = Date.now() } = {}) {
  const rnd = prng(seed);
  /** @type {Map<string, { tracer: import('@opentelemetry/api').Tracer, logger: import('@opentelemetry/api-logs').Logger, shutdown: () => Promise<void> }>} */
  const sdks = new Map();
  for (const [service, info] of Object.entries(SERVICES)) {
    const resource = resourceOf(service);
    const spanExporter = info.wire === 'grpc' ? new GrpcTraceExporter({ url: urls.grpc }) : new ProtoTraceExporter({ url: `${urls.http}/v1/traces` });
    const logExporter = info.wire === 'grpc' ? new GrpcLogExporter({ url: urls.grpc }) : new ProtoLogExporter({ url: `${urls.http}/v1/logs` });
    // Batching as real services do: one export per service and signal rather than one per span.
    const batch = { maxQueueSize: 100_000, maxExportBatchSize: 2048, scheduledDelayMillis: 60_000 };
    const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(spanExporter, batch)] });
    const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: logExporter, ...batch })] });
    sdks.set(service, {
      tracer: tracerProvider.getTracer(`shop.${service}`, info.version),
      logger: loggerProvider.getLogger(`shop.${service}`, info.version),
      shutdown: async () => {
        await tracerProvider.shutdown();
        await loggerProvider.shutdown();
      },
    });
  }

  /** @param {SpanSpec} spec @param {number} startMs @param {import('@opentelemetry/api').Context} parent */
  const emit = (spec, startMs, parent) => {
    const sdk = /** @type {NonNullable<ReturnType<typeof sdks.get>>} */ (sdks.get(spec.svc));
    const span = sdk.tracer.startSpan(spec.name, { kind: spec.kind ?? SpanKind.INTERNAL, startTime: new Date(startMs), attributes: spec.attrs }, parent);
    const ctx = trace.setSpan(parent, span);
    for (const ev of spec.events ?? []) span.addEvent(ev.name, ev.attrs ?? {}, new Date(startMs + ev.at * spec.dur));
    for (const log of spec.logs ?? []) {
      sdk.logger.emit({
        timestamp: new Date(startMs + log.at * spec.dur),
        severityNumber: log.sev,
        severityText: log.text,
        body: log.body,
        attributes: log.attrs,
        context: ctx,
      });
    }
    for (const child of spec.children ?? []) emit(child, startMs + (child.at ?? 0), ctx);
    if (spec.error) span.setStatus({ code: SpanStatusCode.ERROR, message: spec.error });
    span.end(new Date(startMs + spec.dur));
  };

  for (let i = 0; i < traces; i++) {
    const start = now - (traces - i) * between(rnd, 2500, 5000);
    emit(scenario(rnd, i), start, ROOT_CONTEXT);
  }
  for (const sdk of sdks.values()) await sdk.shutdown();
}

/** @param {Record<string, any>} obj */
function kvs(obj) {
  return Object.entries(obj).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : Number.isInteger(v) ? { intValue: String(v) } : typeof v === 'boolean' ? { boolValue: v } : { doubleValue: v },
  }));
}

/** @param {number} ms */
const ns = (ms) => (BigInt(Math.round(ms)) * 1_000_000n).toString();

/**
 * Ten minutes of metric history at a 15 s interval, in OTLP/JSON, as a cumulative SDK would export it.
 * @param {{ http: string }} urls @param {{ seed?: number, now?: number, points?: number }} [options]
 */
export async function sendDemoMetrics(urls, { seed = 11, now = Date.now(), points = 40 } = {}) {
  const rnd = prng(seed);
  const start = now - points * 15_000;
  const routes = ['/api/products', '/api/cart', '/api/checkout'];
  const bounds = [5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500];
  const counts = routes.map(() => bounds.map(() => 0).concat(0));
  const sums = routes.map(() => 0);
  const requests = routes.map(() => ({ ok: 0, err: 0 }));
  let orders = 0;
  for (let p = 1; p <= points; p++) {
    const t = start + p * 15_000;
    const wave = 1 + 0.6 * Math.sin(p / 5);
    /** @type {any[]} */
    const histPoints = [];
    /** @type {any[]} */
    const reqPoints = [];
    routes.forEach((route, r) => {
      const n = Math.round((route === '/api/checkout' ? 12 : 40) * wave * between(rnd, 0.7, 1.3));
      for (let k = 0; k < n; k++) {
        const base = route === '/api/checkout' ? 180 : route === '/api/cart' ? 8 : 24;
        const v = base * Math.exp((rnd() - 0.4) * 1.6);
        sums[r] += v;
        const b = bounds.findIndex((x) => v <= x);
        counts[r][b < 0 ? bounds.length : b]++;
      }
      const errors = route === '/api/checkout' ? Math.round(n * between(rnd, 0.05, 0.25)) : 0;
      requests[r].ok += n - errors;
      requests[r].err += errors;
      const total = counts[r].reduce((a, b) => a + b, 0);
      histPoints.push({
        attributes: kvs({ 'http.request.method': route === '/api/checkout' ? 'POST' : 'GET', 'http.route': route }),
        startTimeUnixNano: ns(start),
        timeUnixNano: ns(t),
        count: String(total),
        sum: sums[r],
        bucketCounts: counts[r].map(String),
        explicitBounds: bounds,
        min: 0.6,
        max: route === '/api/checkout' ? 1840 : 140,
      });
      reqPoints.push({
        attributes: kvs({ 'http.route': route, 'http.response.status_code': 200 }),
        startTimeUnixNano: ns(start),
        timeUnixNano: ns(t),
        asInt: String(requests[r].ok),
      });
      if (requests[r].err) {
        reqPoints.push({
          attributes: kvs({ 'http.route': route, 'http.response.status_code': 402 }),
          startTimeUnixNano: ns(start),
          timeUnixNano: ns(t),
          asInt: String(requests[r].err),
        });
      }
    });
    orders += Math.round(8 * wave * between(rnd, 0.6, 1.2));
    const body = {
      resourceMetrics: [
        {
          resource: { attributes: kvs({ 'service.name': 'frontend', 'service.namespace': 'shop', 'service.version': '2.4.1' }) },
          scopeMetrics: [
            {
              scope: { name: '@opentelemetry/instrumentation-http', version: '0.223.1' },
              metrics: [
                {
                  name: 'http.server.request.duration',
                  description: 'Duration of HTTP server requests.',
                  unit: 'ms',
                  histogram: { aggregationTemporality: 2, dataPoints: histPoints },
                },
                {
                  name: 'http.server.requests',
                  description: 'Number of HTTP requests served.',
                  unit: '{request}',
                  sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: reqPoints },
                },
              ],
            },
            {
              scope: { name: 'shop.frontend', version: '2.4.1' },
              metrics: [
                {
                  name: 'nodejs.eventloop.utilization',
                  description: 'Event loop utilization.',
                  unit: '1',
                  gauge: { dataPoints: [{ attributes: [], timeUnixNano: ns(t), asDouble: Math.min(0.98, 0.18 + 0.25 * wave * between(rnd, 0.8, 1.2)) }] },
                },
                {
                  name: 'process.memory.usage',
                  description: 'Resident set size.',
                  unit: 'By',
                  gauge: { dataPoints: [{ attributes: [], timeUnixNano: ns(t), asInt: String(Math.round((142 + p * 0.9 + rnd() * 6) * 1024 * 1024)) }] },
                },
              ],
            },
          ],
        },
        {
          resource: { attributes: kvs({ 'service.name': 'checkout', 'service.namespace': 'shop', 'service.version': '1.8.0' }) },
          scopeMetrics: [
            {
              scope: { name: 'shop.checkout', version: '1.8.0' },
              metrics: [
                {
                  name: 'app.orders.placed',
                  description: 'Orders placed.',
                  unit: '{order}',
                  sum: {
                    aggregationTemporality: 2,
                    isMonotonic: true,
                    dataPoints: [{ attributes: kvs({ 'app.payment.currency': 'EUR' }), startTimeUnixNano: ns(start), timeUnixNano: ns(t), asInt: String(orders) }],
                  },
                },
                {
                  name: 'app.orders.queue_depth',
                  description: 'Orders waiting for fulfilment.',
                  unit: '{order}',
                  gauge: {
                    dataPoints: ['eu-west', 'us-east'].map((region, k) => ({
                      attributes: kvs({ 'cloud.region': region }),
                      timeUnixNano: ns(t),
                      asInt: String(Math.max(0, Math.round((k ? 6 : 14) * wave + (rnd() - 0.5) * 6))),
                    })),
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await fetch(`${urls.http}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'OTel-OTLP-Exporter-JavaScript/0.223.1' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`metrics export failed: ${res.status} ${await res.text()}`);
  }
}

/** Checkout's hot paths, leaf first, and how heavy each is: what a Go CPU profiler might see under load. */
const CHECKOUT_STACKS = /** @type {const} */ ([
  [['runtime.mallocgc', 'encoding/json.Marshal', 'main.(*checkout).PlaceOrder', 'net/http.HandlerFunc.ServeHTTP', 'net/http.(*conn).serve', 'runtime.goexit'], 9],
  [
    [
      'encoding/json.(*encodeState).marshal',
      'encoding/json.Marshal',
      'main.(*checkout).PlaceOrder',
      'net/http.HandlerFunc.ServeHTTP',
      'net/http.(*conn).serve',
      'runtime.goexit',
    ],
    14,
  ],
  [['crypto/sha256.block', 'main.orderID', 'main.(*checkout).PlaceOrder', 'net/http.HandlerFunc.ServeHTTP', 'net/http.(*conn).serve', 'runtime.goexit'], 6],
  [
    [
      'syscall.Syscall',
      'net.(*conn).Write',
      'google.golang.org/grpc.(*ClientConn).Invoke',
      'main.(*payment).Charge',
      'main.(*checkout).PlaceOrder',
      'net/http.HandlerFunc.ServeHTTP',
      'net/http.(*conn).serve',
      'runtime.goexit',
    ],
    11,
  ],
  [
    [
      'google.golang.org/protobuf/proto.Marshal',
      'google.golang.org/grpc.(*ClientConn).Invoke',
      'main.(*payment).Charge',
      'main.(*checkout).PlaceOrder',
      'net/http.HandlerFunc.ServeHTTP',
      'net/http.(*conn).serve',
      'runtime.goexit',
    ],
    7,
  ],
  [
    [
      'database/sql.(*DB).QueryContext',
      'main.(*cart).Items',
      'main.(*checkout).PlaceOrder',
      'net/http.HandlerFunc.ServeHTTP',
      'net/http.(*conn).serve',
      'runtime.goexit',
    ],
    12,
  ],
  [['strconv.ParseFloat', 'main.(*cart).Total', 'main.(*checkout).PlaceOrder', 'net/http.HandlerFunc.ServeHTTP', 'net/http.(*conn).serve', 'runtime.goexit'], 4],
  [['net/http.(*conn).readRequest', 'net/http.(*conn).serve', 'runtime.goexit'], 8],
  [['runtime.scanobject', 'runtime.gcBgMarkWorker', 'runtime.goexit'], 10],
  [['runtime.findRunnable', 'runtime.schedule', 'runtime.mcall'], 5],
]);

/**
 * One CPU profile of checkout (ten seconds at 100 Hz) in OTLP/JSON; the samples of one stack were taken in `span`.
 * @param {{ http: string }} urls @param {{ seed?: number, now?: number, span?: { traceId: string, spanId: string } }} [options]
 */
export async function sendDemoProfiles(urls, { seed = 13, now = Date.now(), span } = {}) {
  const rnd = prng(seed);
  const samples = CHECKOUT_STACKS.flatMap(([stack, weight], i) =>
    Array.from({ length: 2 }, (_, k) => ({
      stack: [...stack],
      value: Math.round(weight * between(rnd, 0.6, 1.4)) * 10_000_000,
      ...(i === 3 && k === 0 && span ? { link: span } : {}),
      attrs: { 'thread.name': `worker-${k + 1}` },
    })),
  );
  const body = profileRequest('checkout', [
    { profileId: '6f1c0de2a9b84e37b5d0c4a1f2e3d4c5', type: 'cpu', unit: 'nanoseconds', startMs: now - 12_000, durMs: 10_000, samples },
  ]);
  const res = await fetch(`${urls.http}/v1development/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`profiles export failed: ${res.status} ${await res.text()}`);
}

async function main() {
  const { values } = parseArgs({
    options: {
      http: { type: 'string', default: 'http://127.0.0.1:4318' },
      grpc: { type: 'string', default: 'http://127.0.0.1:4317' },
      traces: { type: 'string', default: '40' },
    },
  });
  const urls = { http: values.http, grpc: values.grpc };
  await sendDemoTraces(urls, { traces: Number(values.traces) });
  await sendDemoMetrics(urls);
  await sendDemoProfiles(urls);
  console.log(`sent ${values.traces} traces with their logs, 40 metric exports and a CPU profile to ${urls.http} and ${urls.grpc}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
