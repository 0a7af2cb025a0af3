// The UI under load (issue 5, must-show 2): a separate process sends spans over OTLP/HTTP protobuf at a
// fixed rate; the server runs in its own process so its CPU time can be measured. The same run loads the
// server with no page open and with the Traces view open in Chromium while a scripted user clicks through
// it, and compares the server's ingest rate and CPU per span between the two. Exits 1 when a UI action
// takes over a second or either ratio falls below 0.9.
//
//   node bench/ui-load.js [--rate 20000] [--seconds 10] [--rounds 2] [--idle] [--json]
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHROMIUM_PATH, launchChromium } from '../scripts/chromium.js';

const self = fileURLToPath(import.meta.url);
const TEMPLATES = 24;
const MAX_IN_FLIGHT = 16;
const STORE_SPANS = 100_000;

// ---- the server process: a collector that answers CPU questions over IPC ----

async function serverRole() {
  const { startCollector } = await import('../server/collector.js');
  const collector = await startCollector({ grpcPort: 0, httpPort: 0, uiPort: 0, maxSpans: STORE_SPANS });
  process.on('message', async (/** @type {any} */ msg) => {
    if (msg.cmd === 'sample') {
      process.send?.({ cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() });
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
  const b = await ask(server, { cmd: 'sample' });
  finished = true;
  await side;
  const cpuSeconds = (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1e6;
  const wallSeconds = result.elapsedMs / 1000;
  const elu = (b.elu.active - a.elu.active) / (b.elu.active - a.elu.active + b.elu.idle - a.elu.idle);
  return {
    sent: result.accepted + result.failed,
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

/**
 * CPU seconds used so far by the processes below `root` (Chromium's browser, renderer and GPU processes).
 * @param {number} root @param {number[]} exclude
 */
function treeCpuSeconds(root, exclude) {
  /** @type {Map<number, { ppid: number, ticks: number }>} */
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // The process ended while we looked.
    }
  }
  let ticks = 0;
  for (const [pid, p] of procs) {
    if (exclude.includes(pid)) continue;
    for (let up = p.ppid, seen = 0; up > 1 && seen < 64; up = procs.get(up)?.ppid ?? 0, seen++) {
      if (exclude.includes(up)) break;
      if (up === root) {
        ticks += p.ticks;
        break;
      }
    }
  }
  return ticks / 100;
}

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** Totals over several phases of the same kind. @param {Awaited<ReturnType<typeof phase>>[]} phases */
function combine(phases) {
  const sum = (/** @type {(p: any) => number} */ f) => phases.reduce((n, p) => n + f(p), 0);
  const accepted = sum((p) => p.accepted);
  const cpu = sum((p) => p.serverCpuSeconds);
  const wall = sum((p) => p.wallSeconds);
  return {
    accepted,
    failed: sum((p) => p.failed),
    wallSeconds: wall,
    acceptedPerSecond: accepted / wall,
    serverCpuSeconds: cpu,
    spansPerCpuSecond: accepted / cpu,
    serverEventLoopUtilization: sum((p) => p.serverEventLoopUtilization * p.wallSeconds) / wall,
    phases,
  };
}

/** The UI actions of a busy person, each done when the page shows its result. @param {import('playwright-core').Page} page */
function uiScript(page) {
  const errorsOnly = page.getByLabel('Errors only');
  return [
    {
      name: 'filter: errors only',
      run: async () => {
        await errorsOnly.check();
        await page.waitForFunction(() => {
          const rows = [...document.querySelectorAll('[data-trace-id]')];
          return rows.length > 0 && rows.every((r) => r.querySelector('.badge.error'));
        });
      },
    },
    {
      name: 'filter: clear',
      run: async () => {
        await errorsOnly.uncheck();
        await page.waitForFunction(() => [...document.querySelectorAll('[data-trace-id]')].some((r) => !r.querySelector('.badge.error')));
      },
    },
    {
      name: 'open a trace (waterfall)',
      run: async () => {
        await page.locator('[data-trace-id]').first().click();
        await page.waitForSelector('.span-row');
      },
    },
    {
      name: 'back to the list',
      run: async () => {
        await page.getByRole('link', { name: '← Traces' }).click();
        await page.waitForSelector('[data-trace-id]');
      },
    },
  ];
}

async function main() {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '20000' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
      // Leaves the page open but untouched, to tell what watching costs from what clicking costs.
      idle: { type: 'boolean', default: false },
    },
  });
  const load = { rate: Number(values.rate), seconds: Number(values.seconds) };
  const rounds = Number(values.rounds);
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install chromium, or set CHROMIUM_PATH`);
  const { buildWeb } = await import('../scripts/build-web.js');
  await buildWeb({ log: () => {} });

  const server = fork(self, ['--role=server'], { stdio: 'inherit' });
  const { urls } = await once(server, 'message').then(([m]) => /** @type {any} */ (m));
  const sender = fork(self, ['--role=sender', urls.http], { stdio: 'inherit' });
  await once(sender, 'message');
  const browser = await launchChromium();
  const log = (/** @type {string} */ line) => values.json || console.log(line);
  const children = [/** @type {number} */ (server.pid), /** @type {number} */ (sender.pid)];

  /** @type {Awaited<ReturnType<typeof phase>>[]} */
  const without = [];
  /** @type {Awaited<ReturnType<typeof phase>>[]} */
  const withPage = [];
  /** @type {{ action: string, ms: number }[]} */
  const actions = [];
  let browserCpuSeconds = 0;
  /** @type {Record<string, number>} */
  const rendererSeconds = { TaskDuration: 0, ScriptDuration: 0, LayoutDuration: 0, RecalcStyleDuration: 0 };
  let pageState = {};
  try {
    // Until the store is full, every span grows the heap; once it is, old spans are evicted as new ones
    // arrive. Measure only that steady state, so no phase pays for the others' warm-up.
    const warmSeconds = Math.ceil((STORE_SPANS * 1.2) / load.rate);
    log(`warming up: ${load.rate} spans/s for ${warmSeconds} s`);
    await phase(server, sender, { rate: load.rate, seconds: warmSeconds });

    // Rounds of A (no page), B, B (Traces view open), A: the machine's other work drifts over a run, and
    // this order cancels a steady drift; Chromium keeps running throughout, only the page comes and goes.
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}/${rounds}: A, ${load.rate} spans/s for ${load.seconds} s, no page`);
      without.push(await phase(server, sender, load));

      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${urls.ui}/traces`);
      await page.waitForSelector('[data-status="live"]');
      await page.waitForSelector('[data-trace-id]');
      // Loading the page and React's first render of the snapshot are a one-off, not what watching costs.
      await phase(server, sender, { rate: load.rate, seconds: 3 });
      const script = uiScript(page);
      let step = 0;
      /** @param {() => boolean} done */
      const act = async (done) => {
        while (!done()) {
          const t = performance.now();
          if (!values.idle) {
            const { name, run } = script[step++ % script.length];
            await run();
            actions.push({ action: name, ms: performance.now() - t });
          }
          await sleep(Math.max(0, 500 - (performance.now() - t)));
        }
      };
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((/** @type {any} */ m) => [m.name, m.value]));
      const renderer0 = await metrics();
      const cpu0 = treeCpuSeconds(process.pid, children);
      for (const half of ['B', 'B']) {
        log(`round ${round}/${rounds}: ${half}, ${load.rate} spans/s for ${load.seconds} s, Traces view open${values.idle ? '' : ' and in use'}`);
        withPage.push(await phase(server, sender, load, act));
      }
      browserCpuSeconds += treeCpuSeconds(process.pid, children) - cpu0;
      const renderer1 = await metrics();
      for (const key of Object.keys(rendererSeconds)) rendererSeconds[key] += renderer1[key] - renderer0[key];
      pageState = await page.evaluate(() => ({ list: document.querySelector('.toolbar .total')?.textContent ?? '' }));
      await page.close();

      log(`round ${round}/${rounds}: A, ${load.rate} spans/s for ${load.seconds} s, no page`);
      without.push(await phase(server, sender, load));
    }

    const a = combine(without);
    const b = combine(withPage);
    /** @type {Record<string, { count: number, p50Ms: number, maxMs: number }>} */
    const byAction = {};
    for (const name of new Set(actions.map((x) => x.action))) {
      const ms = actions.filter((x) => x.action === name).map((x) => x.ms);
      byAction[name] = { count: ms.length, p50Ms: Math.round(quantile(ms, 0.5)), maxMs: Math.round(Math.max(...ms)) };
    }
    const worstMs = actions.length ? Math.round(Math.max(...actions.map((x) => x.ms))) : 0;
    for (const key of Object.keys(rendererSeconds)) rendererSeconds[key] = Math.round(rendererSeconds[key] * 100) / 100;
    const report = {
      load,
      rounds,
      withoutPage: a,
      withPage: b,
      ratio: { acceptedPerSecond: b.acceptedPerSecond / a.acceptedPerSecond, spansPerCpuSecond: b.spansPerCpuSecond / a.spansPerCpuSecond },
      uiActions: byAction,
      worstUiActionMs: worstMs,
      browserCpuSeconds,
      rendererSeconds,
      page: pageState,
    };
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
      const range = (/** @type {any[]} */ ps) => `${fmt(Math.min(...ps.map((p) => p.spansPerCpuSecond)))}–${fmt(Math.max(...ps.map((p) => p.spansPerCpuSecond)))}`;
      console.log(`
                          without page    with page    ratio
accepted spans/s          ${fmt(a.acceptedPerSecond).padStart(12)} ${fmt(b.acceptedPerSecond).padStart(12)}    ${report.ratio.acceptedPerSecond.toFixed(2)}
spans per server CPU-s    ${fmt(a.spansPerCpuSecond).padStart(12)} ${fmt(b.spansPerCpuSecond).padStart(12)}    ${report.ratio.spansPerCpuSecond.toFixed(2)}
  range over ${String(without.length).padEnd(2)} phases   ${range(without).padStart(15)} ${range(withPage).padStart(15)}
server CPU seconds        ${a.serverCpuSeconds.toFixed(2).padStart(12)} ${b.serverCpuSeconds.toFixed(2).padStart(12)}
browser CPU seconds       ${'—'.padStart(12)} ${browserCpuSeconds.toFixed(2).padStart(12)}
failed spans              ${fmt(a.failed).padStart(12)} ${fmt(b.failed).padStart(12)}

UI actions during the load (${actions.length}, worst ${worstMs} ms):`);
      for (const [name, st] of Object.entries(byAction))
        console.log(`  ${name.padEnd(28)} ${String(st.count).padStart(3)}×  p50 ${String(st.p50Ms).padStart(4)} ms  max ${String(st.maxMs).padStart(4)} ms`);
      console.log(`  page after the load: ${JSON.stringify(pageState)}`);
      console.log(`  page main thread busy during the load (s): ${JSON.stringify(rendererSeconds)}`);
    }
    const ok = worstMs <= 1000 && report.ratio.spansPerCpuSecond >= 0.9 && report.ratio.acceptedPerSecond >= 0.9;
    if (!ok) process.exitCode = 1;
  } finally {
    await browser.close();
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
