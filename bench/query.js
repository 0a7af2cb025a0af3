#!/usr/bin/env node
/**
 * Queries over a full store (`npm run bench:query`, BENCH_QUICK=1 for a short run): fills the default
 * caps (bench/fill.js), then measures, in this one run,
 *   - every filter of the REST lists, answered by the server (a page of 100, as the UI asks): median ms;
 *   - lookups by trace id: median ms;
 *   - OTLP ingest (512-span requests, 4 in flight, from another process) alone, with 50 waiting queries,
 *     and with a client paging through the whole store, interleaved runs, medians and their ratio;
 *   - the longest event-loop stall of the collector during each part (perf_hooks.monitorEventLoopDelay).
 * The collector runs in this process; load and clients run in child processes of this same file.
 */
import { fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../server/collector.js';
import { fillDefaultCaps, oldestLogRecord } from './fill.js';
import { protoBody } from './workload.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 1 : 3;
const QUERY_RUNS = QUICK ? 3 : 7;
const LOAD_REQUESTS = QUICK ? 60 : 150;
const WAITERS = 50;
const self = fileURLToPath(import.meta.url);

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---- child roles -----------------------------------------------------------------------------------

/** Sends LOAD_REQUESTS span requests, 4 in flight; reports requests per second. @param {string} httpUrl */
async function load(httpUrl) {
  const bodies = Array.from({ length: 16 }, (_, i) => protoBody(5000 + i));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < LOAD_REQUESTS) {
        const body = bodies[next++ % bodies.length];
        const res = await fetch(`${httpUrl}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body: /** @type {BodyInit} */ (/** @type {unknown} */ (body)),
        });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`ingest: ${res.status}`);
      }
    }),
  );
  return (LOAD_REQUESTS * 1000) / (performance.now() - started);
}

/** Long-polls that ingest wakes: half can never be met (more than the store holds), half wait for a name. @param {string} ui */
function waiters(ui) {
  for (let i = 0; i < WAITERS; i++) {
    const q = i % 2 ? 'minCount=100001' : `name=never-${i}&minCount=1`;
    fetch(`${ui}/api/spans?${q}&timeoutMs=300000`).catch(() => {});
  }
}

/** Pages through every stored span, 1000 at a time, over and over. @param {string} ui */
async function pager(ui) {
  for (;;) {
    let cursor = '';
    do {
      const res = await fetch(`${ui}/api/spans?limit=1000&order=desc${cursor ? `&cursor=${cursor}` : ''}`);
      const body = /** @type {any} */ (await res.json());
      cursor = body.nextCursor ?? '';
    } while (cursor);
  }
}

if (process.argv[2] === 'child') {
  const [, , , role, url] = process.argv;
  if (role === 'load')
    load(url).then(
      (rate) => process.send?.({ rate }),
      (err) => process.send?.({ error: String(err) }),
    );
  else if (role === 'waiters') waiters(url);
  else if (role === 'pager') void pager(url);
} else await main();

// ---- the measuring process -------------------------------------------------------------------------

/** @param {string} role @param {string} url */
function child(role, url) {
  return fork(self, ['child', role, url], { stdio: 'inherit' });
}

/** @param {string} httpUrl @returns {Promise<number>} */
function runLoad(httpUrl) {
  return new Promise((resolve, reject) => {
    const c = child('load', httpUrl);
    c.once('message', (/** @type {any} */ m) => (m.error ? reject(new Error(m.error)) : resolve(m.rate)));
    c.once('error', reject);
  });
}

async function main() {
  const collector = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0, print: 'none' });
  const ui = collector.urls.ui;
  const delay = monitorEventLoopDelay({ resolution: 2 });
  delay.enable();
  const stallMs = () => delay.max / 1e6;
  try {
    const filled = performance.now();
    await fillDefaultCaps(collector.urls.http);
    const stats = /** @type {any} */ (await (await fetch(`${ui}/api/stats`)).json()).signals;
    console.log(
      `filled ${stats.traces.stored} spans, ${stats.logs.stored} log records, ${stats.metrics.stored} data points in ${Math.round(performance.now() - filled)} ms\n`,
    );
    const spans = /** @type {any} */ (await (await fetch(`${ui}/api/spans?limit=1`)).json()).spans;
    const traceId = spans[0].traceId;
    // The oldest stored record: its body and trace are the hardest to find for a view that looks only at recent ones.
    const oldLog = oldestLogRecord();
    const queries = [
      ['spans: service', '/api/spans?service=frontend'],
      ['spans: name', '/api/spans?name=GET%20/api/cart'],
      ['spans: name contains', '/api/spans?nameContains=checkout'],
      ['spans: attribute', '/api/spans?attr.app.tenant=tenant-7'],
      ['spans: attribute present', '/api/spans?attr.app.request.id='],
      ['spans: error', '/api/spans?error=true'],
      ['spans: duration', '/api/spans?minDurationMs=40'],
      ['spans: time range', '/api/spans?from=1768469450000&to=1768469460000'],
      ['spans: sort by duration', '/api/spans?sort=duration'],
      ['traces: all, by start', '/api/traces?sort=start&order=desc'],
      ['traces: service', '/api/traces?service=frontend'],
      ['traces: span name contains', '/api/traces?nameContains=recommend'],
      ['traces: root name', '/api/traces?rootName=GET%20/api/cart'],
      ['traces: attribute', '/api/traces?attr.app.tenant=tenant-7'],
      ['traces: error', '/api/traces?error=true'],
      ['traces: duration', '/api/traces?minDurationMs=40&maxDurationMs=60'],
      ['traces: time range', '/api/traces?from=1768469450000&to=1768469460000'],
      ['traces: sort by duration', '/api/traces?sort=duration'],
      ['logs: all', '/api/logs?order=desc'],
      ['logs: service', '/api/logs?service=payment'],
      ['logs: severity', '/api/logs?severity=17'],
      ['logs: body contains', `/api/logs?body=${encodeURIComponent(oldLog.body)}`],
      ['logs: trace id', `/api/logs?traceId=${oldLog.traceId}`],
      ['logs: attribute', '/api/logs?attr.app.tenant=tenant-7'],
      ['logs: time range', '/api/logs?from=1768469410000&to=1768469420000'],
      ['metrics: list', '/api/metrics?points=none'],
      ['metrics: one metric', '/api/metrics?service=frontend&name=app.metric_0'],
      ['metrics: attribute', '/api/metrics?attr.http.route=/api/cart&points=none'],
      ['requests: all', '/api/requests'],
      ['services', '/api/services'],
      ['lookup: GET /api/traces/:id', `/api/traces/${traceId}`],
      ['lookup: GET /api/traces/:prefix', `/api/traces/${traceId.slice(0, 8)}`],
      ['lookup: /api/spans?traceId=', `/api/spans?traceId=${traceId}`],
      ['lookup: /api/traces?traceId=', `/api/traces?traceId=${traceId}`],
    ];
    console.log('| query | median ms | answer KB | longest stall ms |');
    console.log('|---|---|---|---|');
    for (const [label, path] of queries) {
      const isList = !path.startsWith('/api/traces/') && path !== '/api/services';
      const times = [];
      let bytes = 0;
      delay.reset();
      for (let i = 0; i < QUERY_RUNS; i++) {
        const started = performance.now();
        const res = await fetch(ui + path + (isList ? `${path.includes('?') ? '&' : '?'}limit=100` : ''));
        const text = await res.text();
        if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
        times.push(performance.now() - started);
        bytes = text.length;
      }
      console.log(`| ${label} | ${median(times).toFixed(1)} | ${(bytes / 1024).toFixed(1)} | ${stallMs().toFixed(1)} |`);
    }

    console.log('\n| whole-store answer | ms | MB | longest stall ms |');
    console.log('|---|---|---|---|');
    for (const [label, path] of [
      ['a page of every span, cut at 8 MiB', '/api/spans?limit=100000'],
      ['export of everything', '/api/export'],
    ]) {
      delay.reset();
      const started = performance.now();
      const res = await fetch(ui + path);
      let bytes = 0;
      for await (const chunk of /** @type {any} */ (res.body)) bytes += chunk.length;
      console.log(`| ${label} (${path}) | ${(performance.now() - started).toFixed(0)} | ${(bytes / 1e6).toFixed(1)} | ${stallMs().toFixed(1)} |`);
    }

    /** @type {Record<string, { rates: number[], stalls: number[] }>} */
    const phases = { alone: { rates: [], stalls: [] }, [`${WAITERS} waiters`]: { rates: [], stalls: [] }, 'paging client': { rates: [], stalls: [] } };
    for (let round = 0; round < ROUNDS; round++) {
      for (const phase of Object.keys(phases)) {
        const helper = phase === 'alone' ? null : child(phase === 'paging client' ? 'pager' : 'waiters', ui);
        if (phase !== 'alone')
          await until(async () => phase === 'paging client' || /** @type {any} */ (await (await fetch(`${ui}/api/stats`)).json()).waiters >= WAITERS);
        delay.reset();
        phases[phase].rates.push(await runLoad(collector.urls.http));
        phases[phase].stalls.push(stallMs());
        helper?.kill();
        await until(async () => /** @type {any} */ (await (await fetch(`${ui}/api/stats`)).json()).waiters === 0);
      }
    }
    const base = median(phases.alone.rates);
    console.log(`\n| ingest (${LOAD_REQUESTS} × 512 spans, full store) | median requests/s | ratio | longest stall ms |`);
    console.log('|---|---|---|---|');
    for (const [phase, { rates, stalls }] of Object.entries(phases)) {
      console.log(`| ${phase} | ${median(rates).toFixed(0)} | ${(median(rates) / base).toFixed(2)} | ${Math.max(...stalls).toFixed(1)} |`);
    }
  } finally {
    await collector.stop();
  }
}

/** @param {() => Promise<boolean>} check */
async function until(check) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('bench: a helper process did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
}
