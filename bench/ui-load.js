// The UI under load (issue 5, must-show 2): a separate process sends spans over OTLP/HTTP protobuf at a
// fixed rate; the server runs in its own process so its CPU time can be measured. The same run loads the
// server twice, first with no browser, then with the Traces view open in Chromium while the bench clicks
// through the UI, and compares the server's ingest rate and CPU per span between the two.
//
//   node bench/ui-load.js [--rate 20000] [--seconds 10] [--json]
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const self = fileURLToPath(import.meta.url);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TEMPLATES = 24;
const MAX_IN_FLIGHT = 16;

// ---- the server process: a collector that answers CPU questions over IPC ----

async function serverRole() {
  const { startCollector } = await import('../server/collector.js');
  const collector = await startCollector({ grpcPort: 0, httpPort: 0, uiPort: 0 });
  const { performance } = await import('node:perf_hooks');
  process.on('message', async (/** @type {any} */ msg) => {
    if (msg.cmd === 'sample') {
      process.send?.({ cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), received: collector.store.stats().traces.received });
    } else if (msg.cmd === 'stop') {
      await collector.stop();
      process.exit(0);
    }
  });
  process.send?.({ urls: collector.urls });
}

// ---- the sender process: OTLP/HTTP protobuf at a fixed span rate ----

/**
 * Encoded requests whose trace ids can be rewritten in place, so every request carries new traces
 * without encoding 200 000 spans a second.
 */
async function templates() {
  const { protoBody, spanRequest } = await import('./workload.js');
  const out = [];
  for (let seed = 1; seed <= TEMPLATES; seed++) {
    const body = protoBody(seed);
    const ids = new Set(spanRequest(seed).resourceSpans[0].scopeSpans[0].spans.map((/** @type {any} */ s) => s.traceId));
    /** @type {number[][]} */
    const traces = [];
    for (const hex of ids) {
      const id = Buffer.from(hex, 'hex');
      const at = [];
      for (let i = body.indexOf(id); i >= 0; i = body.indexOf(id, i + 1)) at.push(i);
      traces.push(at);
    }
    const spans = spanRequest(seed).resourceSpans[0].scopeSpans[0].spans.length;
    out.push({ body, traces, spans });
  }
  return out;
}

async function senderRole(/** @type {string} */ url) {
  const bodies = await templates();
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  const target = new URL('/v1/traces', url);
  /** @param {Buffer} body @returns {Promise<number>} */
  const post = (body) =>
    new Promise((resolve) => {
      const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });
  let next = 0;
  process.on('message', async (/** @type {any} */ msg) => {
    if (msg.cmd !== 'run') return;
    const { rate, seconds } = msg;
    const perRequest = bodies[0].spans;
    const requests = Math.round((rate * seconds) / perRequest);
    const intervalMs = (perRequest / rate) * 1000;
    let accepted = 0;
    let failed = 0;
    let late = 0;
    /** @type {Set<Promise<void>>} */
    const inFlight = new Set();
    const started = performance.now();
    for (let k = 0; k < requests; k++) {
      const due = started + k * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -intervalMs) late++;
      while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      const t = bodies[next++ % bodies.length];
      const body = Buffer.from(t.body);
      for (const at of t.traces) {
        const id = randomBytes(16);
        for (const i of at) id.copy(body, i);
      }
      const p = post(body).then((status) => {
        if (status === 200) accepted += t.spans;
        else failed += t.spans;
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    const elapsedMs = performance.now() - started;
    process.send?.({ accepted, failed, late, requests, elapsedMs });
  });
  process.send?.({ ready: true });
}

// ---- the orchestrator ----

/** @param {import('node:child_process').ChildProcess} child @param {any} msg */
async function ask(child, msg) {
  const reply = once(child, 'message');
  child.send(msg);
  return /** @type {any} */ ((await reply)[0]);
}

/**
 * One load phase: samples the server's CPU around the sender's run; `during` runs alongside it.
 * @param {import('node:child_process').ChildProcess} server @param {import('node:child_process').ChildProcess} sender
 * @param {{ rate: number, seconds: number }} load @param {(done: () => boolean) => Promise<void>} [during]
 */
async function phase(server, sender, load, during) {
  const a = await ask(server, { cmd: 'sample' });
  const run = ask(sender, { cmd: 'run', ...load });
  let finished = false;
  const side = during ? during(() => finished) : Promise.resolve();
  const result = await run;
  finished = true;
  await side;
  const b = await ask(server, { cmd: 'sample' });
  const cpuSeconds = (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1e6;
  const wallSeconds = result.elapsedMs / 1000;
  const elu = (b.elu.active - a.elu.active) / (b.elu.active - a.elu.active + b.elu.idle - a.elu.idle);
  return {
    sent: (result.accepted + result.failed),
    accepted: result.accepted,
    failed: result.failed,
    late: result.late,
    wallSeconds,
    acceptedPerSecond: result.accepted / wallSeconds,
    serverCpuSeconds: cpuSeconds,
    spansPerCpuSecond: result.accepted / cpuSeconds,
    serverEventLoopUtilization: elu,
  };
}

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main() {
  const { values } = parseArgs({ options: { rate: { type: 'string', default: '20000' }, seconds: { type: 'string', default: '10' }, json: { type: 'boolean', default: false } } });
  const load = { rate: Number(values.rate), seconds: Number(values.seconds) };
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  const { buildWeb } = await import('../scripts/build-web.js');
  await buildWeb({ log: () => {} });
  const { chromium } = await import('playwright-core');

  const server = fork(self, ['--role=server'], { stdio: 'inherit' });
  const { urls } = await once(server, 'message').then(([m]) => /** @type {any} */ (m));
  const sender = fork(self, ['--role=sender', urls.http], { stdio: 'inherit' });
  await once(sender, 'message');
  const log = (/** @type {string} */ line) => values.json || console.log(line);

  try {
    log(`warming up: ${load.rate} spans/s for 3 s`);
    await phase(server, sender, { rate: load.rate, seconds: 3 });
    log(`phase A: ${load.rate} spans/s for ${load.seconds} s, no browser`);
    const without = await phase(server, sender, load);

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    /** @type {{ action: string, ms: number }[]} */
    const actions = [];
    let withPage;
    let pageState = {};
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${urls.ui}/traces`);
      await page.waitForSelector('[data-status="live"]');
      await page.waitForSelector('[data-trace-id]');
      /** @param {string} action @param {() => Promise<unknown>} fn */
      const timed = async (action, fn) => {
        const t = performance.now();
        await fn();
        actions.push({ action, ms: performance.now() - t });
      };
      const errorsOnly = page.getByLabel('Errors only');
      log(`phase B: ${load.rate} spans/s for ${load.seconds} s, Traces view open, clicking through the UI`);
      withPage = await phase(server, sender, load, async (done) => {
        while (!done()) {
          await timed('filter: errors only', async () => {
            await errorsOnly.check();
            await page.waitForFunction(() => {
              const rows = [...document.querySelectorAll('[data-trace-id]')];
              return rows.length > 0 && rows.every((r) => r.querySelector('.badge.error'));
            });
          });
          await timed('filter: clear', async () => {
            await errorsOnly.uncheck();
            await page.waitForFunction(() => [...document.querySelectorAll('[data-trace-id]')].some((r) => !r.querySelector('.badge.error')));
          });
          await timed('open a trace (waterfall)', async () => {
            await page.locator('[data-trace-id]').first().click();
            await page.waitForSelector('.span-row');
          });
          await timed('back to the list', async () => {
            await page.getByRole('link', { name: '← Traces' }).click();
            await page.waitForSelector('[data-trace-id]');
          });
        }
      });
      pageState = await page.evaluate(() => ({
        list: document.querySelector('.toolbar .muted')?.textContent ?? '',
        skippedBanner: document.querySelector('.banner.warn')?.textContent ?? '',
      }));
    } finally {
      await browser.close();
    }

    /** @type {Record<string, { count: number, p50Ms: number, maxMs: number }>} */
    const byAction = {};
    for (const name of new Set(actions.map((a) => a.action))) {
      const ms = actions.filter((a) => a.action === name).map((a) => a.ms);
      byAction[name] = { count: ms.length, p50Ms: Math.round(quantile(ms, 0.5)), maxMs: Math.round(Math.max(...ms)) };
    }
    const worstMs = Math.round(Math.max(...actions.map((a) => a.ms)));
    const report = {
      load,
      withoutPage: without,
      withPage,
      ratio: {
        acceptedPerSecond: /** @type {any} */ (withPage).acceptedPerSecond / without.acceptedPerSecond,
        spansPerCpuSecond: /** @type {any} */ (withPage).spansPerCpuSecond / without.spansPerCpuSecond,
      },
      uiActions: byAction,
      worstUiActionMs: worstMs,
      page: pageState,
    };
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
      const w = /** @type {any} */ (withPage);
      console.log(`
                          without page    with page    ratio
accepted spans/s          ${fmt(without.acceptedPerSecond).padStart(12)} ${fmt(w.acceptedPerSecond).padStart(12)}    ${report.ratio.acceptedPerSecond.toFixed(2)}
spans per server CPU-s    ${fmt(without.spansPerCpuSecond).padStart(12)} ${fmt(w.spansPerCpuSecond).padStart(12)}    ${report.ratio.spansPerCpuSecond.toFixed(2)}
server CPU seconds        ${without.serverCpuSeconds.toFixed(2).padStart(12)} ${w.serverCpuSeconds.toFixed(2).padStart(12)}
server event loop busy    ${(without.serverEventLoopUtilization * 100).toFixed(0).padStart(11)}% ${(w.serverEventLoopUtilization * 100).toFixed(0).padStart(11)}%
failed spans              ${fmt(without.failed).padStart(12)} ${fmt(w.failed).padStart(12)}

UI actions during the load (${actions.length}, worst ${worstMs} ms):`);
      for (const [name, s] of Object.entries(byAction)) console.log(`  ${name.padEnd(28)} ${String(s.count).padStart(3)}×  p50 ${String(s.p50Ms).padStart(4)} ms  max ${String(s.maxMs).padStart(4)} ms`);
      console.log(`  page after the load: ${JSON.stringify(pageState)}`);
    }
    const ok = worstMs <= 1000 && report.ratio.spansPerCpuSecond >= 0.9 && report.ratio.acceptedPerSecond >= 0.9;
    if (!ok) process.exitCode = 1;
  } finally {
    sender.kill();
    const exited = once(server, 'exit');
    server.send({ cmd: 'stop' });
    await exited;
  }
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'server') await serverRole();
else if (role === 'sender') await senderRole(process.argv[process.argv.length - 1]);
else await main();
