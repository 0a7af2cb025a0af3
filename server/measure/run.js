// One measured run: start the app, wait until it answers, drive it at a fixed rate while sampling its process tree,
// stop it, and read what it sent to the in-process collector.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error autocannon ships no declarations
import autocannon from 'autocannon';
import { sampleTree } from './proc.js';
import { quantile, round } from '../query/clients.js';

/**
 * @typedef {{ label: 'baseline'|'instrumented', command: string, url: string|null, rate: number, connections: number,
 *   durationMs: number, sampleMs: number, env: NodeJS.ProcessEnv, readyTimeoutMs: number }} RunPlan
 * @typedef {{ t: number, cpuPercent: number, rssMb: number }} Sample  `t`: ms since the load started
 * @typedef {{ t: number, p50: number, p99: number, requests: number }} LatencySecond
 * @typedef {{ label: string, command: string, requests: number, errors: number,
 *   latencyMs: { p50: number, p90: number, p99: number, max: number }, cpu: { seconds: number, perRequestMs: number },
 *   rssMb: { mean: number, max: number },
 *   telemetry: { requests: number, items: number, bytes: number, bytesPerItem: number, itemsPerSecond: number } }} RunResult
 *   the fields of `--json`'s runs (docs/measure.md)
 * @typedef {{ result: RunResult, samples: Sample[], latency: LatencySecond[] }} RunRecord
 */

/** How long an app has to exit after SIGTERM (its SDK flushing what it holds) before it is killed. */
const EXIT_GRACE_MS = 5_000;

/** Starts `command` in a shell, in a process group of its own so that its whole tree can be stopped. @param {string} command @param {NodeJS.ProcessEnv} env */
function startApp(command, env) {
  const child = spawn(command, { shell: true, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => stderr };
}

/** Whether any process of the group is still there. @param {number} group */
function groupAlive(group) {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops the app's whole process group and waits until every process of it is gone: the shell that started the
 * command exits at once, while the app's SDK may still be sending what it held.
 * @param {import('node:child_process').ChildProcess} child @param {Promise<unknown>} exited
 */
async function stopApp(child, exited) {
  const group = /** @type {number} */ (child.pid);
  if (!groupAlive(group)) return;
  const signal = (/** @type {NodeJS.Signals} */ name) => {
    try {
      process.kill(-group, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + EXIT_GRACE_MS;
  // An exited process nobody has reaped yet still counts as in the group: a second past SIGKILL is enough.
  for (let killed = false; groupAlive(group) && Date.now() < deadline + 1000; await sleep(50)) {
    if (!killed && Date.now() > deadline) {
      signal('SIGKILL');
      killed = true;
    }
  }
  await exited;
}

/** Resolves once `url` answers at all (any status), or throws after `timeoutMs`. @param {string} url @param {number} timeoutMs @param {() => boolean} gone */
async function waitUntilAnswering(url, timeoutMs, gone) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone()) throw new Error('the app exited before it answered');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs / 1000} s of starting the app`);
      await sleep(100);
    }
  }
}

/**
 * Drives `url` at `rate` requests a second for `durationMs`, noting each answer's latency by the second it came in.
 * @param {RunPlan} plan @returns {Promise<{ result: any, latency: LatencySecond[] }>}
 */
async function drive(plan) {
  const started = Date.now();
  /** @type {number[][]} */
  const seconds = [];
  const instance = autocannon({
    url: /** @type {string} */ (plan.url),
    connections: plan.connections,
    overallRate: plan.rate,
    duration: plan.durationMs / 1000,
  });
  instance.on('response', (/** @type {unknown} */ _client, /** @type {number} */ _status, /** @type {number} */ _bytes, /** @type {number} */ responseTime) => {
    const s = Math.floor((Date.now() - started) / 1000);
    (seconds[s] ??= []).push(responseTime);
  });
  const result = await instance;
  const latency = [];
  for (let s = 0; s < seconds.length; s++) {
    const list = (seconds[s] ?? []).sort((a, b) => a - b);
    latency.push({ t: s * 1000, p50: round(quantile(list, 0.5)), p99: round(quantile(list, 0.99)), requests: list.length });
  }
  return { result, latency };
}

/**
 * @param {RunPlan} plan
 * @param {{ collector: import('../collector.js').Collector }} deps the in-process collector the app sends to
 * @returns {Promise<RunRecord>}
 */
export async function measureRun(plan, { collector }) {
  const app = startApp(plan.command, plan.env);
  const gone = () => app.child.exitCode !== null || app.child.signalCode !== null;
  try {
    if (plan.url) await waitUntilAnswering(plan.url, plan.readyTimeoutMs, gone);
    // What the app sent while starting is not what the load cost: the window opens with the load.
    collector.journal.clear();
    const pid = /** @type {number} */ (app.child.pid);
    /** @type {Sample[]} */
    const samples = [];
    const begin = Date.now();
    const first = sampleTree(pid);
    let last = { at: begin, cpu: first.cpu };
    const sampler = setInterval(() => {
      const now = Date.now();
      const s = sampleTree(pid);
      samples.push({ t: now - begin, cpuPercent: round(((s.cpu - last.cpu) / ((now - last.at) / 1000)) * 100, 1), rssMb: round(s.rss / 1048576, 1) });
      last = { at: now, cpu: s.cpu };
    }, plan.sampleMs);
    let load = null;
    try {
      load = plan.url ? await drive(plan) : (await sleep(plan.durationMs), null);
    } finally {
      clearInterval(sampler);
    }
    const end = sampleTree(pid);
    const seconds = Math.max(0, end.cpu - first.cpu);
    const elapsed = (Date.now() - begin) / 1000;
    if (gone()) throw new Error(`the app exited during the run: ${app.stderr().trim().split('\n').slice(-3).join(' | ')}`);
    await stopApp(app.child, app.exited);
    const r = load?.result;
    const requests = r ? r.requests.total : 0;
    const rss = samples.map((s) => s.rssMb);
    const sent = collector.clients.report();
    const items = sent.reduce((n, c) => n + c.items, 0);
    const bytes = sent.reduce((n, c) => n + c.bytes.wire, 0);
    /** @type {RunResult} */
    const result = {
      label: plan.label,
      command: plan.command,
      requests,
      errors: r ? r.errors + r.timeouts + r.non2xx : 0,
      latencyMs: r ? { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max } : { p50: 0, p90: 0, p99: 0, max: 0 },
      cpu: { seconds: round(seconds, 3), perRequestMs: requests ? round((seconds * 1000) / requests, 4) : 0 },
      rssMb: { mean: rss.length ? round(rss.reduce((a, b) => a + b, 0) / rss.length, 1) : 0, max: rss.length ? Math.max(...rss) : 0 },
      telemetry: {
        requests: sent.reduce((n, c) => n + c.requests, 0),
        items,
        bytes,
        bytesPerItem: items ? round(bytes / items) : 0,
        itemsPerSecond: round(items / elapsed),
      },
    };
    return { result, samples, latency: load?.latency ?? [] };
  } finally {
    await stopApp(app.child, app.exited);
  }
}
