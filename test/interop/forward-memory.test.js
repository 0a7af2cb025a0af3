// A hung forward target under sustained load: otlp-mock keeps what it holds for the upstream within its limits,
// answers every client in bounded time with a retryable error, counts what it shed, and lets go of everything once
// the load stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { postOtlp, rawRequest } from '../helpers/http.js';
import { encodePb, sampleRequest } from '../helpers/payloads.js';
import { waitFor } from '../helpers/wait.js';

const TIMEOUT_MS = 1000;
const MAX_INFLIGHT = 8;
const MAX_INFLIGHT_BYTES = 4 * 1024 * 1024;
const LOAD_MS = 3000;
const BODY_BYTES = 256 * 1024;
const TRACE_SERVICE = 'opentelemetry.proto.collector.trace.v1.TraceService';
const CLI = new URL('../../server/cli.js', import.meta.url).pathname;
const LIVE_MEMORY_PROBE = new URL('../helpers/live-memory-probe.js', import.meta.url).pathname;

/** Accepts connections and never reads or answers: neither OTLP/HTTP nor the HTTP/2 handshake gets anywhere. */
async function hungServer() {
  /** @type {Set<net.Socket>} */
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.pause();
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  return {
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/** A 256 KiB traces request. */
function bigRequest() {
  const request = sampleRequest('traces', { service: 'hung-upstream' });
  request.resourceSpans[0].scopeSpans[0].spans[0].attributes.push({ key: 'payload', value: { stringValue: 'x'.repeat(BODY_BYTES) } });
  return encodePb('traces', request);
}

/**
 * Runs otlp-mock from its command line, so that its memory is its own and not the load generator's, with the live
 * memory probe loaded.
 * @param {string[]} args
 */
async function startCli(args) {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', LIVE_MEMORY_PROBE, CLI, '--grpc-port', '0', '--http-port', '0', '--ui-port', '0', '--print', 'none', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let live = 0;
  let peakLive = 0;
  let partial = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const bytes = /^live-bytes (\d+)$/.exec(line)?.[1];
      if (bytes === undefined) out += line + '\n';
      else {
        live = Number(bytes);
        peakLive = Math.max(peakLive, live);
      }
    }
  });
  const urls = await waitFor(
    () => {
      const grpc = /OTLP\/gRPC\s+(\S+)/.exec(out)?.[1];
      const http = /OTLP\/HTTP\s+(\S+)/.exec(out)?.[1];
      const ui = /UI \+ API\s+(\S+)/.exec(out)?.[1];
      return grpc && http && ui && { grpc, http, ui };
    },
    { what: `otlp-mock to start (${out})` },
  );
  return {
    urls,
    /** resident memory in bytes, from /proc */
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    /** the bytes reachable after the probe's last collection */
    live: () => live,
    /** the most bytes reachable after any collection since the last call, which starts the next window */
    takePeakLive: () => {
      const peak = peakLive;
      peakLive = live;
      return peak;
    },
    /** @param {string} path @param {RequestInit} [init] */
    api: async (path, init) => {
      const res = await fetch(urls.ui + path, init);
      return res.status === 204 ? null : res.json();
    },
    stop: () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

test(
  'a hung upstream under sustained load: bounded memory, retryable answers in bounded time, shedding counted',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async (t) => {
    const hung = await hungServer();
    const collector = await startCli([
      '--forward',
      `http://127.0.0.1:${hung.port}`,
      '--forward',
      `grpc://127.0.0.1:${hung.port}`,
      '--forward-timeout-ms',
      String(TIMEOUT_MS),
      '--forward-max-inflight',
      String(MAX_INFLIGHT),
      '--forward-max-inflight-bytes',
      String(MAX_INFLIGHT_BYTES),
      // What the store and the journal keep is bounded by their own budgets: small ones leave the forwarding's share.
      '--max-span-bytes',
      String(8 * 2 ** 20),
      '--max-journal-bytes',
      String(2 ** 20),
    ]);
    const grpc = rawGrpcClient(collector.urls.grpc);
    const body = bigRequest();
    try {
      await waitFor(() => collector.live() > 0, { what: 'the live memory probe' });
      const before = collector.live();
      let peakInflight = 0;
      let peakInflightBytes = 0;
      /**
       * Drives the load for LOAD_MS: patient and impatient HTTP clients and patient gRPC clients, all sending `body`.
       * Returns the answers counted, the slowest answer and resident memory's peak and its value each second.
       */
      const drive = async () => {
        collector.takePeakLive();
        let peakRss = collector.rss();
        /** @type {number[]} RSS each second of the load, to see it level off */
        const perSecond = [];
        const sampler = setInterval(async () => {
          peakRss = Math.max(peakRss, collector.rss());
          const { forward } = await collector.api('/api/stats').catch(() => ({ forward: { targets: [] } }));
          for (const target of forward.targets) {
            peakInflight = Math.max(peakInflight, target.inflight);
            peakInflightBytes = Math.max(peakInflightBytes, target.inflightBytes);
          }
        }, 20);
        const second = setInterval(() => perSecond.push(Math.round(collector.rss() / 2 ** 20)), 1000);
        const end = Date.now() + LOAD_MS;
        /** @type {Map<string, number>} */
        const answers = new Map();
        let slowest = 0;
        /** @param {string} what @param {number} ms */
        const count = (what, ms) => {
          answers.set(what, (answers.get(what) ?? 0) + 1);
          slowest = Math.max(slowest, ms);
        };
        // Patient clients wait for each answer; impatient ones give up after 50 ms and send again at once, which is what
        // makes calls pile up on a server that keeps every call it started.
        const patientHttp = async () => {
          while (Date.now() < end) {
            const res = await postOtlp(collector.urls.http, '/v1/traces', body, 'application/x-protobuf');
            count(`http ${res.status}${res.headers['retry-after'] ? ' retry-after' : ''}`, res.ms);
          }
        };
        const impatientHttp = async () => {
          while (Date.now() < end) {
            await rawRequest(`${collector.urls.http}/v1/traces`, { headers: { 'content-type': 'application/x-protobuf' }, body, timeoutMs: 50 }).catch(() => null);
          }
        };
        const patientGrpc = async () => {
          while (Date.now() < end) {
            const started = Date.now();
            const { error } = await grpc.exportRaw(TRACE_SERVICE, body, { timeoutMs: 5000 });
            const retryInfo = error?.metadata.get('google.rpc.retryinfo-bin').length ? ' retry-info' : '';
            count(`grpc ${grpcStatus[error?.code ?? 0]}${retryInfo}`, Date.now() - started);
          }
        };
        try {
          // Staggered so that every kind of answer comes whatever the machine's timing: the gRPC clients take slots
          // first (DEADLINE_EXCEEDED when their calls time out), the patient HTTP clients the rest (504), and the
          // impatient ones keep the target full, so that every client's next calls find it full (503, UNAVAILABLE)
          // until slots free. With the gRPC clients last, HTTP clients that resend at once took every slot that
          // freed, and a CI run saw no DEADLINE_EXCEEDED.
          const after = (/** @type {number} */ ms, /** @type {() => Promise<void>} */ client) => new Promise((resolve) => setTimeout(resolve, ms)).then(client);
          await Promise.all([
            ...Array.from({ length: 4 }, patientGrpc),
            ...Array.from({ length: 4 }, () => after(50, patientHttp)),
            ...Array.from({ length: 8 }, () => after(100, impatientHttp)),
          ]);
        } finally {
          clearInterval(sampler);
          clearInterval(second);
        }
        return { answers, slowest, grownMiB: (collector.takePeakLive() - before) / 2 ** 20, peakRssMiB: Math.round(peakRss / 2 ** 20), perSecond };
      };

      // Receiving this load at all holds some memory (bodies being read, answers being written): the same load refused
      // by a fault rule, before anything is forwarded, is the baseline that the forwarding's live memory is judged
      // against.
      const rule = await collector.api('/api/faults', {
        method: 'POST',
        body: JSON.stringify({ action: 'unavailable' }),
        headers: { 'content-type': 'application/json' },
      });
      const baseline = await drive();
      await collector.api(`/api/faults/${rule.id}`, { method: 'DELETE' });
      const { answers, slowest, grownMiB, peakRssMiB, perSecond } = await drive();
      t.diagnostic(
        `answers ${JSON.stringify(Object.fromEntries(answers))}; slowest ${slowest} ms; peak in flight ${peakInflight} (${peakInflightBytes} bytes); ` +
          `live ${(before / 2 ** 20).toFixed(1)} MiB before, peak grew ${grownMiB.toFixed(1)} MiB; RSS ${perSecond.join(', ')} MiB each second, peak ${peakRssMiB} MiB ` +
          `(refused by a fault rule: live grew ${baseline.grownMiB.toFixed(1)} MiB; RSS ${baseline.perSecond.join(', ')} MiB each second, peak ${baseline.peakRssMiB} MiB)`,
      );

      // Every client answer is retryable: shed (503 + Retry-After, UNAVAILABLE + RetryInfo) or timed out (504, DEADLINE_EXCEEDED).
      const allowed = ['http 503 retry-after', 'http 504', 'grpc UNAVAILABLE retry-info', 'grpc DEADLINE_EXCEEDED'];
      for (const what of answers.keys()) assert.ok(allowed.includes(what), `a client was answered ${what}`);
      for (const what of allowed) assert.ok((answers.get(what) ?? 0) > 0, `some client was answered ${what}`);
      assert.ok(slowest < TIMEOUT_MS + 1000, `the slowest answer took ${slowest} ms`);
      assert.ok(peakInflight <= MAX_INFLIGHT, `${peakInflight} calls were under way to one target`);
      assert.ok(peakInflightBytes <= MAX_INFLIGHT_BYTES, `${peakInflightBytes} bytes were under way to one target`);
      // What the forwarding holds on top of receiving the load is the few MiB of its limits (4 MiB a target); a target
      // that kept every call it started would hold ~40 MB a second of this load.
      assert.ok(grownMiB < baseline.grownMiB + 48, `live memory grew by ${grownMiB.toFixed(1)} MiB, ${baseline.grownMiB.toFixed(1)} MiB refusing the same load`);

      // Once the load stops, every call ends by itself within the timeout.
      const { forward } = await waitFor(
        async () => {
          const stats = await collector.api('/api/stats');
          return stats.forward.targets.every((/** @type {any} */ target) => target.inflight === 0 && target.inflightBytes === 0) && stats;
        },
        { timeoutMs: TIMEOUT_MS + 1000, what: 'the calls under way to end' },
      );
      const [primary, tee] = forward.targets;
      assert.ok(primary.shed > 0 && primary.shedBytes >= primary.shed * BODY_BYTES, `primary shed ${primary.shed}`);
      assert.ok(primary.timeout > 0 && tee.timeout > 0, 'calls timed out on both targets');
      assert.equal(primary.accepted + tee.accepted, 0);
    } finally {
      grpc.close();
      await collector.stop();
      await hung.close();
    }
  },
);
