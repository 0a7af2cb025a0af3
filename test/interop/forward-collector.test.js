// Forward mode in front of the real OpenTelemetry Collector: the official exporters send to otlp-mock, which forwards
// to a Collector (OTLP receiver, OTLP exporter) that passes everything on to a second otlp-mock. The Collector must
// take what otlp-mock forwards on every wire, and everything must arrive once and the same. Runs where a Collector
// binary is at hand (OTELCOL_BIN, or the benchmarks' build in ~/.cache/otlp-bench); CI does not build one.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { freePort } from '../helpers/http.js';
import { startTestCollector } from '../helpers/collector.js';
import { SDK_ITEMS } from '../helpers/sdk-items.js';
import { WIRES, createExporter } from '../helpers/exporters.js';
import { withoutRequestIds } from '../helpers/payloads.js';
import { waitFor } from '../helpers/wait.js';

const BIN = process.env.OTELCOL_BIN ?? join(homedir(), '.cache/otlp-bench/bin/otelcol-anchor');
const skip = !existsSync(BIN) && `no Collector binary at ${BIN} (set OTELCOL_BIN)`;

/** @typedef {import('../helpers/collector.js').TestCollector} TestCollector */

/** @type {TestCollector} */
let mid;
/** @type {TestCollector} where the Collector exports to */
let sink;
/** @type {{ grpc: number, http: number, stop: () => Promise<unknown> }} */
let otelcol;

/**
 * Starts the Collector with an OTLP receiver on free ports and an OTLP exporter to the sink.
 * @param {string} sinkGrpc host:port @param {string} [compression] the exporter's (the Collector's default: gzip)
 */
async function startOtelcol(sinkGrpc, compression = 'gzip') {
  const [grpc, http] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-otelcol-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols:
      grpc: { endpoint: 127.0.0.1:${grpc} }
      http: { endpoint: 127.0.0.1:${http} }
exporters:
  otlp_grpc:
    endpoint: ${sinkGrpc}
    tls: { insecure: true }
    compression: ${compression}
    sending_queue: { enabled: false }
service:
  telemetry:
    logs: { level: warn }
    metrics: { level: none }
  pipelines:
    traces: { receivers: [otlp], exporters: [otlp_grpc] }
    metrics: { receivers: [otlp], exporters: [otlp_grpc] }
    logs: { receivers: [otlp], exporters: [otlp_grpc] }
`,
  );
  const child = spawn(BIN, ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitFor(async () => (await fetch(`http://127.0.0.1:${http}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).ok, {
    timeoutMs: 20_000,
    what: `the Collector to listen (${stderr})`,
  });
  return {
    grpc,
    http,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

before(async () => {
  if (skip) return;
  sink = await startTestCollector();
  otelcol = await startOtelcol(new URL(sink.urls.grpc).host);
  mid = await startTestCollector();
});
after(async () => {
  await mid?.stop();
  await otelcol?.stop();
  await sink?.stop();
});
beforeEach(async () => {
  if (skip) return;
  await mid.api('/api/forward', { method: 'DELETE' });
});

const TARGETS = [
  { name: 'OTLP/gRPC', target: () => ({ url: `grpc://127.0.0.1:${otelcol.grpc}` }) },
  { name: 'OTLP/HTTP as received', target: () => ({ url: `http://127.0.0.1:${otelcol.http}` }) },
  { name: 'OTLP/HTTP JSON, gzip', target: () => ({ url: `http://127.0.0.1:${otelcol.http}`, encoding: 'json', compression: 'gzip' }) },
];

for (const { name, target } of TARGETS) {
  describe(`through the Collector's ${name} receiver`, { skip }, () => {
    for (const wire of WIRES) {
      for (const signal of /** @type {(keyof SDK_ITEMS)[]} */ (Object.keys(SDK_ITEMS))) {
        test(`${signal} from the ${wire} exporter arrive once and the same`, async () => {
          await mid.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target()) });
          const { kind, make, count } = SDK_ITEMS[signal];
          const service = `otelcol-${name.replace(/\W+/g, '-')}-${wire}-${signal}`;
          const exporter = createExporter(signal, { wire, compression: 'none' }, mid.urls);
          const items = await make(service);
          /** @type {{ code: number, error?: Error }} */
          const result = await new Promise((resolve) => exporter.export(items, resolve));
          await exporter.shutdown();
          assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
          const [entry] = (await mid.api(`/api/requests?signal=${signal}&limit=1`)).requests;
          assert.equal(entry.upstream.outcome, 'accepted', entry.upstream.message);
          // The Collector exports without a queue, so it answered once the sink had the data.
          const there = (await sink.api(`/api/${kind}?service=${service}`))[kind];
          assert.equal(there.length, count);
          assert.deepEqual(withoutRequestIds(there), withoutRequestIds((await mid.api(`/api/${kind}?service=${service}`))[kind]));
        });
      }
    }
  });
}

describe("the Collector's gRPC exporter with each of its compressions", { skip }, () => {
  for (const compression of ['zstd', 'snappy', 'none']) {
    test(`${compression}: what it exports reaches otlp-mock's gRPC receiver whole`, async (t) => {
      const collector = await startOtelcol(new URL(sink.urls.grpc).host, compression);
      t.after(() => collector.stop());
      const service = `otelcol-compression-${compression}`;
      const { kind, make, count } = SDK_ITEMS.traces;
      const exporter = createExporter('traces', { wire: 'proto', compression: 'none' }, { ...sink.urls, http: `http://127.0.0.1:${collector.http}` });
      const items = await make(service);
      /** @type {{ code: number, error?: Error }} */
      const result = await new Promise((resolve) => exporter.export(items, resolve));
      await exporter.shutdown();
      assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
      assert.equal((await sink.api(`/api/${kind}?service=${service}`))[kind].length, count);
      const [entry] = (await sink.api('/api/requests?signal=traces&transport=grpc&limit=1&order=desc')).requests;
      assert.equal(entry.contentEncoding, compression === 'none' ? '' : compression);
    });
  }
});
