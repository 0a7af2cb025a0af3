// The UI under load (issue 29): a separate process sends traces, logs and metrics over OTLP/HTTP protobuf at
// a fixed rate; the server runs in its own process so its CPU time can be measured. For each view in turn
// (Traces, Logs, Metrics, Requests) the run alternates phases with no page and with one Chromium tab on that
// view, under a load that runs throughout (tabs open and close while it does), after a tab has been open on the view
// for 20 s, and reports items per server CPU-second for each, their ratio (median over rounds) and the server's
// event-loop utilisation. With --against DIR, a second server runs the code in DIR (another checkout, e.g.
// main's) and every round measures both, interleaved, so the two can be compared in one run.
//
//   node bench/ui-load.js --help      (its options; the defaults are the load the issue measured)
//
// Phases are 16 s: under this load the server spends 100-190 ms of CPU on a full collection every 8-9 s, which an 8 s
// phase held none, one or two of, so that even the control row's rounds spanned 0.85-1.12.
//
// --use has a scripted user click through the Traces view during its tab phases; --check exits 1 when a ratio's
// median falls below 0.9 (or, with --use, a UI action took over a second).
import { fork } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import { performance, PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const self = fileURLToPath(import.meta.url);
const TEMPLATES = 24;
/** Per signal: an HTTP/1.1 connection per request in flight, as an SDK's exporter with a few workers. */
const MAX_IN_FLIGHT = 8;
const STORE_ITEMS = 100_000;
/** A phase with no page starts this long after the last tab closed. */
const SETTLE_SECONDS = 2;
/**
 * Loading a page and its first asks are a one-off, not what watching costs: a tab's phase starts this long after it
 * opened. Sampled a second at a time, a Metrics tab (its first list groups 100,000 stored points) cost the server
 * 280-480 ms of CPU in its first second and 30-230 ms more in each of the next three, over a base of 45-55 ms a
 * second; from the fifth on, no more than the base. With 2 s, what fell in a 16 s phase read as a tab costing a tenth.
 */
const TAB_SETTLE_SECONDS = 6;
const WARM_SECONDS = 15;
const VIEW_WARM_SECONDS = 20;

/** @typedef {'traces'|'logs'|'metrics'} Sent */
/** @type {readonly Sent[]} */
const SENT = ['traces', 'logs', 'metrics'];

/**
 * The control row: the same two phases with no page in either, which shows how far two phases of the same load read
 * apart on this machine, as the soak's control row does. On a lightly loaded server one collection more or less in a
 * phase moves its CPU by several hundredths, as much as the margin a view is judged by.
 */
const CONTROL = 'none';
/** What a tab on each view waits for before it counts as open: the view live, with rows from the store. */
const VIEWS = /** @type {const} */ ({
  traces: '[data-trace-id]',
  logs: '.logs-table .tr.log-grid:not(.placeholder)',
  metrics: '.metric-item',
  requests: '[data-request-id]',
});

// ---- the server process: a collector that answers CPU questions over IPC ----

async function serverRole(/** @type {string} */ root) {
  const { startCollector } = await import(new URL('server/collector.js', `file://${root}/`).href);
  // What the command line does for its own process, where the checkout has it.
  if (existsSync(`${root}/server/heap.js`)) (await import(new URL('server/heap.js', `file://${root}/`).href)).keepHeapRoom();
  const collector = await startCollector({ grpcPort: 0, httpPort: 0, uiPort: 0, maxSpans: STORE_ITEMS, maxLogs: STORE_ITEMS, maxPoints: STORE_ITEMS });
  const gc = gcTotals();
  process.on('message', async (/** @type {any} */ msg) => {
    if (msg.cmd === 'sample') {
      process.send?.({ cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), gc: { ...gc } });
    } else if (msg.cmd === 'stop') {
      await collector.stop();
      process.exit(0);
    }
  });
  process.send?.({ urls: collector.urls });
}

/**
 * The server's garbage collections so far: how many, and their pause in ms, young generation (scavenges) and full
 * (mark-compact, with its incremental steps) apart. A tab's cost that is not its asks' own work shows here.
 */
function gcTotals() {
  const totals = { minor: 0, minorMs: 0, major: 0, majorMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = /** @type {any} */ (entry).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) {
        totals.minor++;
        totals.minorMs += entry.duration;
      } else {
        if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) totals.major++;
        totals.majorMs += entry.duration;
      }
    }
  }).observe({ type: 'gc' });
  return totals;
}

// ---- the sender process: OTLP/HTTP protobuf at a fixed rate per signal ----

/** Span requests of new traces each time (workload.js). */
async function spanTemplates() {
  const { newTraceRequests } = await import('./workload.js');
  return newTraceRequests(TEMPLATES);
}

/** Log and metric requests are encoded as they are sent: each newer than the last, as a live service's. */
async function encodedRequests() {
  const { encodeRequest } = await import('../server/otlp/schema.js');
  const { logRequest, metricRequest } = await import('./fill.js');
  let logs = 0;
  let metrics = 0;
  return {
    logs: () => {
      const request = logRequest(logs++);
      return { body: encodeRequest('logs', request), items: request.resourceLogs[0].scopeLogs[0].logRecords.length };
    },
    metrics: () => {
      const request = metricRequest(metrics++);
      const items = request.resourceMetrics.reduce(
        (n, r) => n + r.scopeMetrics[0].metrics.reduce((k, m) => k + (m.sum ?? m.gauge ?? m.histogram).dataPoints.length, 0),
        0,
      );
      return { body: encodeRequest('metrics', request), items };
    },
  };
}

async function senderRole() {
  const { logs, metrics } = await encodedRequests();
  const make = { traces: await spanTemplates(), logs, metrics };
  const sizes = Object.fromEntries(SENT.map((signal) => [signal, make[signal]().items]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT * SENT.length });
  /** @param {URL} target @param {Uint8Array} body @returns {Promise<number>} */
  const post = (target, body) =>
    new Promise((resolve) => {
      const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });

  /** @typedef {{ stopped: boolean, key: string, done: Promise<unknown> }} Run */
  /** @type {Run|null} the load being sent: replaced by each `start`, ended by `stop` */
  let current = null;
  const totals = { accepted: 0, failed: 0, late: 0 };

  /** One signal at `rate` items a second to `url` until `run` stops. @param {Run} run @param {string} url @param {Sent} signal @param {number} rate */
  async function send(run, url, signal, rate) {
    const target = new URL(`/v1/${signal}`, url);
    const intervalMs = (sizes[signal] / rate) * 1000;
    /** @type {Set<Promise<void>>} */
    const inFlight = new Set();
    const started = performance.now();
    for (let k = 0; !run.stopped; k++) {
      const wait = started + k * intervalMs - performance.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -intervalMs) totals.late++;
      while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      if (run.stopped) break;
      const { body, items } = make[signal]();
      const p = post(target, body).then((status) => {
        if (status === 200) totals.accepted += items;
        else totals.failed += items;
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  }

  async function stop() {
    if (!current) return;
    current.stopped = true;
    await current.done;
    current = null;
  }

  process.on('message', async (/** @type {any} */ msg) => {
    if (msg.cmd === 'start') {
      // The same load again goes on as it is: a pause would be a gap in the load, which the phases must not have.
      const key = JSON.stringify([msg.url, msg.rates]);
      if (current?.key !== key) {
        await stop();
        /** @type {Run} */
        const run = { stopped: false, key, done: Promise.resolve() };
        run.done = Promise.all(SENT.filter((signal) => msg.rates[signal] > 0).map((signal) => send(run, msg.url, signal, msg.rates[signal])));
        current = run;
      }
      process.send?.({ started: true });
    } else if (msg.cmd === 'stop') {
      await stop();
      process.send?.({ stopped: true });
    } else if (msg.cmd === 'count') {
      process.send?.({ ...totals, at: performance.now() });
    }
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
 * @typedef {{ name: string, process: import('node:child_process').ChildProcess, urls: { http: string, ui: string } }} Server
 * @typedef {{ rates: Record<Sent, number>, seconds: number }} Load
 */

/**
 * One phase: samples the server's CPU and the items it accepted over `seconds` of the load that runs throughout
 * (`startLoad`); `during` runs alongside it.
 * @param {Server} server @param {import('node:child_process').ChildProcess} sender
 * @param {number} seconds @param {(done: () => boolean) => Promise<void>} [during]
 */
async function phase(server, sender, seconds, during) {
  const a = await ask(server.process, { cmd: 'sample' });
  const sent = await ask(sender, { cmd: 'count' });
  let finished = false;
  const side = during ? during(() => finished) : Promise.resolve();
  await sleep(seconds * 1000);
  const b = await ask(server.process, { cmd: 'sample' });
  const sentAfter = await ask(sender, { cmd: 'count' });
  finished = true;
  await side;
  const cpuSeconds = (b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system) / 1e6;
  const wallSeconds = (sentAfter.at - sent.at) / 1000;
  const accepted = sentAfter.accepted - sent.accepted;
  const active = b.elu.active - a.elu.active;
  return {
    accepted,
    failed: sentAfter.failed - sent.failed,
    late: sentAfter.late - sent.late,
    wallSeconds,
    acceptedPerSecond: accepted / wallSeconds,
    serverCpuSeconds: cpuSeconds,
    itemsPerCpuSecond: accepted / cpuSeconds,
    serverEventLoopUtilization: active / (active + b.elu.idle - a.elu.idle),
    gc: { scavenges: b.gc.minor - a.gc.minor, scavengeMs: b.gc.minorMs - a.gc.minorMs, full: b.gc.major - a.gc.major, fullMs: b.gc.majorMs - a.gc.majorMs },
  };
}

/**
 * Sends `rates` to `server` from now on, without a pause when it already does: the load runs through every phase, the
 * opening and closing of tabs included. A pause of a second or two (a page loading) let V8 start a full collection
 * to give memory back, which then fell in the next phase, the tab's: with the load sent a phase at a time, a
 * Traces tab's phase held three full collections, two of them V8's memory reducer's, where no page's held one
 * (--trace-gc).
 * @param {import('node:child_process').ChildProcess} sender @param {Server} server @param {Record<Sent, number>} rates
 */
function startLoad(sender, server, rates) {
  return ask(sender, { cmd: 'start', url: server.urls.http, rates });
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

/** The machine's busy and total CPU ticks so far, all cores: what the other work on it took is told from ours. */
function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const total = f.reduce((n, x) => n + x, 0);
  return { busy: total - idle, total };
}

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** @param {{ gc: { scavenges: number, scavengeMs: number, full: number, fullMs: number }, wallSeconds: number }[]} phases */
function gcMedians(phases) {
  return {
    scavenges: median(phases.map((p) => p.gc.scavenges)),
    scavengeMsPerSecond: median(phases.map((p) => p.gc.scavengeMs / p.wallSeconds)),
    full: median(phases.map((p) => p.gc.full)),
    fullMsPerSecond: median(phases.map((p) => p.gc.fullMs / p.wallSeconds)),
  };
}

/** The UI actions of a busy person on the Traces view, each done when the page shows its result. @param {import('playwright-core').Page} page */
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

/** Every view a run can measure, the control first. */
const VIEW_NAMES = [CONTROL, ...Object.keys(VIEWS)];

const USAGE = `usage: node bench/ui-load.js [--spans 12000] [--logs 6000] [--points 2000] [--seconds 16] [--rounds 3]
    [--views ${VIEW_NAMES.join(',')}] [--use] [--against DIR] [--cpu-prof DIR] [--check] [--json]`;

/** The command line, or a usage message and exit 2 when it cannot be run. */
function options() {
  /** @param {string} problem */
  const refuse = (problem) => {
    console.error(`${problem}\n${USAGE}`);
    process.exit(2);
  };
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        spans: { type: 'string', default: '12000' },
        logs: { type: 'string', default: '6000' },
        points: { type: 'string', default: '2000' },
        seconds: { type: 'string', default: '16' },
        rounds: { type: 'string', default: '3' },
        views: { type: 'string', default: VIEW_NAMES.join(',') },
        against: { type: 'string' },
        // Writes a CPU profile of this code's server to DIR when it stops.
        'cpu-prof': { type: 'string' },
        use: { type: 'boolean', default: false },
        check: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    return refuse(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  for (const name of /** @type {const} */ (['spans', 'logs', 'points', 'seconds', 'rounds'])) {
    const value = Number(values[name]);
    if (!(value > 0) || (name === 'rounds' && !Number.isInteger(value)))
      refuse(`--${name} must be a positive ${name === 'rounds' ? 'integer' : 'number'}, got ${JSON.stringify(values[name])}`);
  }
  for (const view of values.views.split(',')) if (!VIEW_NAMES.includes(view)) refuse(`--views: ${view} is not one of ${VIEW_NAMES.join(', ')}`);
  return values;
}

async function main() {
  const values = options();
  /** @type {Load} */
  const load = { rates: { traces: Number(values.spans), logs: Number(values.logs), metrics: Number(values.points) }, seconds: Number(values.seconds) };
  const rate = SENT.reduce((n, signal) => n + load.rates[signal], 0);
  const rounds = Number(values.rounds);
  const views = /** @type {(keyof typeof VIEWS | typeof CONTROL)[]} */ (values.views.split(','));
  // Imported here, not at the top: the server's and sender's forks run this file too, and a server that had loaded the
  // browser driver would carry its modules in the heap every collection marks.
  const { CHROMIUM_PATH, launchChromium } = await import('../scripts/chromium.js');
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install chromium, or set CHROMIUM_PATH`);
  const { buildWeb } = await import('../scripts/build-web.js');
  await buildWeb({ log: () => {} });
  const log = (/** @type {string} */ line) => values.json || console.log(line);

  const roots = [{ name: 'this', root: fileURLToPath(new URL('..', import.meta.url)) }];
  if (values.against) roots.unshift({ name: 'against', root: values.against });
  /** @type {Server[]} */
  const servers = [];
  for (const { name, root } of roots) {
    const profile = name === 'this' && values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
    const child = fork(self, ['--role=server', root], { stdio: 'inherit', execArgv: [...process.execArgv, ...profile] });
    const { urls } = await once(child, 'message').then(([m]) => /** @type {any} */ (m));
    servers.push({ name, process: child, urls });
  }
  const sender = fork(self, ['--role=sender'], { stdio: 'inherit' });
  await once(sender, 'message');
  const browser = await launchChromium();
  const children = [...servers.map((s) => /** @type {number} */ (s.process.pid)), /** @type {number} */ (sender.pid)];
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const machine0 = machineTicks();
  const ours0 = treeCpuSeconds(process.pid, []);
  const wall0 = performance.now();

  /** @type {{ server: string, view: string, round: number, without: Awaited<ReturnType<typeof phase>>, withTab: Awaited<ReturnType<typeof phase>>, browserCpuSeconds: number }[]} */
  const pairs = [];
  /** @type {{ action: string, ms: number }[]} */
  const actions = [];
  try {
    // Until the stores are full, every item grows the heap; once they are, old items are evicted as new ones
    // arrive. Measure only that steady state, so no phase pays for the others' warm-up.
    /** @type {Record<Sent, number>} */
    const warm = { traces: 0, logs: 0, metrics: 0 };
    for (const signal of SENT) if (load.rates[signal] > 0) warm[signal] = Math.ceil((STORE_ITEMS * 1.2) / WARM_SECONDS);
    for (const server of servers) {
      log(`filling ${server.name}'s store: ${Math.ceil((STORE_ITEMS * 1.2) / WARM_SECONDS)} items/s per signal for ${WARM_SECONDS} s`);
      await startLoad(sender, server, warm);
      await sleep(WARM_SECONDS * 1000);
    }

    /** @param {Server} server @param {keyof typeof VIEWS} view */
    const openTab = async (server, view) => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${server.urls.ui}/${view}`);
      await page.waitForSelector('[data-status="live"]');
      await page.waitForSelector(VIEWS[view]);
      return page;
    };

    /** @param {Server} server @param {keyof typeof VIEWS | typeof CONTROL} view */
    const withTab = async (server, view) => {
      // The control row opens no page, and is otherwise measured as a tab is.
      const page = view === CONTROL ? null : await openTab(server, view);
      await sleep(TAB_SETTLE_SECONDS * 1000);
      const script = page && values.use && view === 'traces' ? uiScript(page) : [];
      let step = 0;
      /** @param {() => boolean} done */
      const act = async (done) => {
        while (!done() && script.length) {
          const t = performance.now();
          const { name, run } = script[step++ % script.length];
          await run();
          actions.push({ action: name, ms: performance.now() - t });
          await sleep(Math.max(0, 500 - (performance.now() - t)));
        }
      };
      const cpu0 = treeCpuSeconds(process.pid, children);
      const result = await phase(server, sender, load.seconds, act);
      const browserCpuSeconds = treeCpuSeconds(process.pid, children) - cpu0;
      await page?.close();
      return { result, browserCpuSeconds };
    };
    /** @param {Server} server */
    const withoutTab = async (server) => {
      await sleep(SETTLE_SECONDS * 1000);
      return phase(server, sender, load.seconds);
    };

    // Each round alternates which comes first, the tab or no page, and which server: the machine's other work
    // drifts over a run, and this order cancels a steady drift. Chromium runs throughout; only the tab comes and goes.
    for (const view of views) {
      // A tab costs the server more in its first minute or so: a Logs tab's first four rounds read 0.65-0.83, the next
      // four 0.83-0.95 (the server with no page got cheaper over those minutes too, likely V8 still compiling). The
      // rounds measure a tab left open, as one is while a load test runs, so each view is open a while first.
      if (view !== CONTROL) {
        for (const server of servers) {
          log(`${view}: a tab open on ${server.name} for ${VIEW_WARM_SECONDS} s, not measured`);
          await startLoad(sender, server, load.rates);
          const page = await openTab(server, view);
          await sleep(VIEW_WARM_SECONDS * 1000);
          await page.close();
        }
      }
      for (let round = 1; round <= rounds; round++) {
        const order = round % 2 ? servers : [...servers].reverse();
        for (const server of order) {
          const tabFirst = round % 2 === 0;
          log(`${view} round ${round}/${rounds}, ${server.name}: ${tabFirst ? 'tab, then no page' : 'no page, then tab'}`);
          await startLoad(sender, server, load.rates);
          /** @type {Awaited<ReturnType<typeof phase>>} */
          let without;
          /** @type {Awaited<ReturnType<typeof withTab>>} */
          let tab;
          if (tabFirst) {
            tab = await withTab(server, view);
            without = await withoutTab(server);
          } else {
            without = await withoutTab(server);
            tab = await withTab(server, view);
          }
          pairs.push({ server: server.name, view, round, without, withTab: tab.result, browserCpuSeconds: tab.browserCpuSeconds });
        }
      }
    }
    await ask(sender, { cmd: 'stop' });

    const wall = (performance.now() - wall0) / 1000;
    const machine1 = machineTicks();
    const cores = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .filter((l) => /^cpu\d/.test(l)).length;
    const machineBusy = (machine1.busy - machine0.busy) / (machine1.total - machine0.total);
    const oursBusy = (treeCpuSeconds(process.pid, []) - ours0) / (wall * cores);
    const table = [];
    for (const server of servers) {
      for (const view of views) {
        const mine = pairs.filter((p) => p.server === server.name && p.view === view);
        table.push({
          server: server.name,
          view,
          withoutPage: Math.round(median(mine.map((p) => p.without.itemsPerCpuSecond))),
          withTab: Math.round(median(mine.map((p) => p.withTab.itemsPerCpuSecond))),
          ratio: median(mine.map((p) => p.withTab.itemsPerCpuSecond / p.without.itemsPerCpuSecond)),
          ratios: mine.map((p) => Math.round((p.withTab.itemsPerCpuSecond / p.without.itemsPerCpuSecond) * 100) / 100),
          eluWithoutPage: median(mine.map((p) => p.without.serverEventLoopUtilization)),
          eluWithTab: median(mine.map((p) => p.withTab.serverEventLoopUtilization)),
          browserCpuSeconds: median(mine.map((p) => p.browserCpuSeconds)),
          gcWithoutPage: gcMedians(mine.map((p) => p.without)),
          gcWithTab: gcMedians(mine.map((p) => p.withTab)),
          failed: mine.reduce((n, p) => n + p.without.failed + p.withTab.failed, 0),
        });
      }
    }
    const worstMs = actions.length ? Math.round(Math.max(...actions.map((x) => x.ms))) : 0;
    const report = {
      load: { ...load, itemsPerSecond: rate },
      rounds,
      machine: {
        cores,
        loadAverageBefore: loadBefore,
        loadAverageAfter: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        busy: machineBusy,
        busyOurs: oursBusy,
      },
      table,
      worstUiActionMs: worstMs,
      pairs,
    };
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
      const pct = (/** @type {number} */ n) => `${Math.round(n * 100)}%`;
      console.log(`
${fmt(rate)} items/s (${SENT.map((s) => `${fmt(load.rates[s])} ${s}`).join(', ')}), ${load.seconds} s phases, median of ${rounds} rounds
machine: ${cores} cores ${pct(machineBusy)} busy (this run ${pct(oursBusy)}, other work ${pct(Math.max(0, machineBusy - oursBusy))}); load average ${report.machine.loadAverageBefore} → ${report.machine.loadAverageAfter}

${'server'.padEnd(8)} ${'view'.padEnd(9)} ${'no page'.padStart(10)} ${'tab'.padStart(10)}  ratio  (each)              ELU no page / tab   browser CPU-s`);
      for (const r of table)
        console.log(
          `${r.server.padEnd(8)} ${r.view.padEnd(9)} ${fmt(r.withoutPage).padStart(10)} ${fmt(r.withTab).padStart(10)}  ${r.ratio.toFixed(2)}   ${r.ratios
            .map((x) => x.toFixed(2))
            .join(' ')
            .padEnd(
              18,
            )}  ${pct(r.eluWithoutPage).padStart(4)} / ${pct(r.eluWithTab).padEnd(10)}  ${r.browserCpuSeconds.toFixed(2)}${r.failed ? `  ${fmt(r.failed)} failed` : ''}`,
        );
      console.log(`(items per server CPU-second; ratio = tab / no page, per round, median; ${CONTROL}: no page in either phase)`);
      console.log(`\nthe server's garbage collections in a phase, median: scavenges, full collections (ms of pause a second)`);
      const gcText = (/** @type {ReturnType<typeof gcMedians>} */ g) =>
        `${g.scavenges} (${g.scavengeMsPerSecond.toFixed(1)}), ${g.full} (${g.fullMsPerSecond.toFixed(1)})`;
      for (const r of table) console.log(`${r.server.padEnd(8)} ${r.view.padEnd(9)} no page ${gcText(r.gcWithoutPage).padEnd(24)} tab ${gcText(r.gcWithTab)}`);
      if (actions.length) console.log(`UI actions on the Traces view: ${actions.length}, worst ${worstMs} ms`);
    }
    const ok = table.every((r) => r.server !== 'this' || r.view === CONTROL || r.ratio >= 0.9) && worstMs <= 1000;
    if (values.check && !ok) process.exitCode = 1;
  } finally {
    await browser.close();
    sender.kill();
    for (const server of servers) {
      const exited = once(server.process, 'exit');
      server.process.send({ cmd: 'stop' });
      await exited;
    }
  }
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'server') await serverRole(process.argv[process.argv.length - 1]);
else if (role === 'sender') await senderRole();
else await main();
