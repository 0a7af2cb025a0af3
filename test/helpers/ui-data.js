// OTLP/JSON requests shaped for UI tests and benchmarks: traces across many services, big traces,
// logs tied to spans, histograms with exemplars. Times are unix nanoseconds as decimal strings.

/** @param {number} ms @returns {string} */
export const ns = (ms) => String(BigInt(Math.round(ms)) * 1_000_000n);

/** @param {number} n @param {number} [width] lowercase hex of n, padded */
export const hex = (n, width = 16) => n.toString(16).padStart(width, '0');

/** @param {Record<string, any>} attrs */
export const kvs = (attrs) =>
  Object.entries(attrs).map(([key, v]) => ({
    key,
    value:
      typeof v === 'number'
        ? Number.isInteger(v)
          ? { intValue: String(v) }
          : { doubleValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : { stringValue: String(v) },
  }));

/**
 * @typedef {{ service: string, name: string, spanId: string, parentSpanId?: string, startMs: number, durMs: number,
 *   attrs?: Record<string, any>, error?: boolean }} SpanSpec
 */

/**
 * One ExportTraceServiceRequest with a resource per service.
 * @param {string} traceId @param {SpanSpec[]} spans @param {Record<string, Record<string, any>>} [resources] extra resource attributes per service
 */
export function traceRequest(traceId, spans, resources = {}) {
  /** @type {Map<string, SpanSpec[]>} */
  const byService = new Map();
  for (const s of spans) byService.set(s.service, [...(byService.get(s.service) ?? []), s]);
  return {
    resourceSpans: [...byService].map(([service, list]) => ({
      resource: {
        attributes: kvs({
          'service.name': service,
          'telemetry.sdk.name': 'opentelemetry',
          'telemetry.sdk.language': 'nodejs',
          'telemetry.sdk.version': '9.9.9',
          ...resources[service],
        }),
      },
      scopeSpans: [
        {
          scope: { name: 'ui-test', version: '1.0.0' },
          spans: list.map((s) => ({
            traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: 2,
            startTimeUnixNano: ns(s.startMs),
            endTimeUnixNano: ns(s.startMs + s.durMs),
            attributes: kvs(s.attrs ?? {}),
            status: s.error ? { code: 2, message: 'failed' } : {},
          })),
        },
      ],
    })),
  };
}

/**
 * A trace of `count` spans over `services` services: a root, then spans nested up to eight deep, every
 * 50th named "slow query" (find-in-trace has 1 in 50 to find).
 * @param {string} traceId @param {number} count @param {number} services @param {number} startMs
 */
export function bigTrace(traceId, count, services, startMs) {
  /** @type {SpanSpec[]} */
  const spans = [{ service: 'svc-0', name: 'GET /big', spanId: hex(1), startMs, durMs: 2000 }];
  for (let i = 1; i < count; i++) {
    const depth = 1 + (i % 8);
    const parent = depth === 1 ? 1 : i; // the previous span, one level up
    const at = startMs + (i * 1999) / count;
    spans.push({
      service: `svc-${i % services}`,
      name: i % 50 === 0 ? `slow query ${i}` : `op ${i % 40}`,
      spanId: hex(i + 1),
      parentSpanId: hex(parent),
      startMs: at,
      durMs: Math.max(0.05, (2000 - (at - startMs)) / (depth + 1) / 4),
      attrs: { 'op.index': i },
    });
  }
  return traceRequest(traceId, spans);
}

/** @param {string} base OTLP/HTTP base URL @param {string} signal @param {any} body */
export async function postJson(base, signal, body) {
  const res = await fetch(`${base}/v1/${signal}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST /v1/${signal}: ${res.status} ${await res.text()}`);
}

/**
 * @typedef {{ stack: string[], value: number, link?: { traceId: string, spanId: string }, attrs?: Record<string, string> }} SampleSpec
 *   `stack` leaf first, as the API gives it back
 * @typedef {{ profileId: string, type: string, unit: string, startMs: number, durMs: number, samples: SampleSpec[] }} ProfileSpec
 */

/**
 * One ExportProfilesServiceRequest of one service, with its dictionary built from the profiles: a function and a
 * location per name, a stack per sample.
 * @param {string} service @param {ProfileSpec[]} profiles
 */
export function profileRequest(service, profiles) {
  const strings = [''];
  const str = (/** @type {string} */ s) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  /** @type {string[]} */
  const functions = [];
  const fn = (/** @type {string} */ name) => (functions.includes(name) ? functions.indexOf(name) : functions.push(name) - 1) + 1;
  /** @type {number[][]} */
  const stacks = [];
  /** @type {{ traceId: string, spanId: string }[]} */
  const links = [];
  /** @type {{ keyStrindex: number, value: { stringValue: string } }[]} */
  const attributes = [];
  const json = {
    resourceProfiles: [
      {
        resource: { attributes: kvs({ 'service.name': service }) },
        scopeProfiles: [
          {
            scope: { name: 'ui-test', version: '1.0.0' },
            profiles: profiles.map((p) => ({
              sampleType: { typeStrindex: str(p.type), unitStrindex: str(p.unit) },
              periodType: { typeStrindex: str(p.type), unitStrindex: str(p.unit) },
              period: '10000000',
              timeUnixNano: ns(p.startMs),
              durationNano: ns(p.durMs),
              profileId: p.profileId,
              samples: p.samples.map((s) => ({
                stackIndex: stacks.push(s.stack.map(fn)),
                values: [String(s.value)],
                timestampsUnixNano: [ns(p.startMs)],
                ...(s.link ? { linkIndex: links.push(s.link) } : {}),
                attributeIndices: Object.entries(s.attrs ?? {}).map(([k, v]) => attributes.push({ keyStrindex: str(k), value: { stringValue: v } })),
              })),
            })),
          },
        ],
      },
    ],
    dictionary: {
      mappingTable: [{}],
      functionTable: [{}, ...functions.map((name) => ({ nameStrindex: str(name), filenameStrindex: str(`${name}.go`) }))],
      locationTable: [{}, ...functions.map((_, i) => ({ address: String(0x1000 * (i + 1)), lines: [{ functionIndex: i + 1, line: '1' }] }))],
      stackTable: [{}, ...stacks.map((locationIndices) => ({ locationIndices }))],
      linkTable: [{}, ...links],
      attributeTable: [{ value: {} }, ...attributes],
      stringTable: strings,
    },
  };
  return json;
}
