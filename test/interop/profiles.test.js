// OTLP profiles from a real producer: test/interop/profiles-producer, a Go program on the Collector's pdata
// (pprofile v0.165.0, from the Go module proxy), builds profiles and sends them as the Collector's own code does,
// over gRPC (pprofileotlp's client), HTTP protobuf and HTTP JSON. Everything sent is stored once and reads back
// as sent; an unsupported schema version is refused; fault rules give profiles the answers the other signals
// get; forward mode passes them on. Then, where a Collector binary is at hand, through the Collector with its
// profiles gate. Without go a developer's run skips and says why; CI=true makes that a failure.
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestCollector } from '../helpers/collector.js';
import { freePort } from '../helpers/http.js';
import { rawGrpcClient, grpcStatus } from '../helpers/grpc.js';
import { waitFor } from '../helpers/wait.js';
import { OtlpMock } from '../../server/client/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const source = join(root, 'test/interop/profiles-producer');
const producer = join(root, 'node_modules/.cache/otlp-mock/profiles-producer');
const OTELCOL = process.env.OTELCOL_BIN ?? join(homedir(), '.cache/otlp-bench/bin/otelcol-anchor');

/** @param {string} command @param {string[]} args @param {{ cwd?: string, env?: Record<string, string> }} [options] */
function run(command, args, { cwd = root, env = {} } = {}) {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...process.env, GOFLAGS: '-mod=mod', ...env }, timeout: 300_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (/** @type {any} */ (err).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const goFound = /** @type {any} */ (await run('go', ['version'])).code === 0;
const skip = !goFound && !process.env.CI && 'go is not installed (https://go.dev/dl; .ci/run installs it); CI=true makes this a failure';

/** What the producer sends (main.go): two profiles of one service, cpu (4 samples) and alloc_space (2). */
const CPU_ID = '0a0b0c0d0102030405060708090a0b0c';
const ALLOC_ID = '0a0b0c0e0102030405060708090a0b0c';
const WIRES = /** @type {const} */ (['grpc', 'http-proto', 'http-json']);

/** @type {import('../helpers/collector.js').TestCollector} */
let mock;
/** @type {OtlpMock} */
let client;
/** @param {Record<string, unknown>} rule */
const addFault = (rule) => mock.api('/api/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) });
const clearFaults = () => mock.api('/api/faults', { method: 'DELETE' });

/**
 * Runs the producer: one export request, answered as it saw the answer.
 * @param {typeof WIRES[number]} wire @param {string} service @param {{ to?: { grpc: string, http: string }, version?: string }} [options]
 * @returns {Promise<{ status: number, code?: string, message?: string, rejected: number }>}
 */
async function send(wire, service, { to = { grpc: new URL(mock.urls.grpc).host, http: new URL(mock.urls.http).host }, version } = {}) {
  const args = [wire, wire === 'grpc' ? to.grpc : to.http, service, ...(version ? [version] : [])];
  const { code, stdout, stderr } = /** @type {any} */ (await run(producer, args));
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout);
}

before(async () => {
  if (skip) return;
  mkdirSync(join(root, 'node_modules/.cache/otlp-mock'), { recursive: true });
  const built = /** @type {any} */ (await run('go', ['build', '-o', producer, '.'], { cwd: source }));
  assert.equal(built.code, 0, `go build of the profiles producer: ${built.stderr}`);
  mock = await startTestCollector();
  client = new OtlpMock(mock.urls.ui);
});
after(() => mock?.stop());
beforeEach(() => mock?.clear());

describe('the pdata producer on every wire', { skip }, () => {
  for (const wire of WIRES) {
    test(`${wire}: everything sent is stored once and reads back as sent`, async () => {
      const service = `pdata-${wire}`;
      assert.deepEqual(await send(wire, service), { status: wire === 'grpc' ? 0 : 200, rejected: 0 });
      const list = await mock.api(`/api/profiles?service=${service}`);
      assert.equal(list.total, 2);
      assert.equal(list.samples, 6);
      const [journal] = (await mock.api('/api/requests')).requests;
      assert.equal(journal.signal, 'profiles');
      assert.equal(journal.items, 6);
      assert.equal(journal.transport, wire === 'grpc' ? 'grpc' : 'http');

      const cpu = await mock.api(`/api/profiles/${CPU_ID}`);
      assert.equal(cpu.stored, 1);
      assert.deepEqual(
        {
          service: cpu.service,
          type: cpu.type,
          unit: cpu.unit,
          periodType: cpu.periodType,
          period: cpu.period,
          timeUnixNano: cpu.timeUnixNano,
          durationNano: cpu.durationNano,
          attributes: cpu.attributes,
          resource: cpu.resource,
        },
        {
          service,
          type: 'cpu',
          unit: 'nanoseconds',
          periodType: 'cpu:nanoseconds',
          period: 10_000_000,
          timeUnixNano: '1700000000000000000',
          durationNano: '10000000000',
          attributes: { 'profile.origin': 'interop' },
          resource: { 'service.name': service, 'deployment.environment': 'test' },
        },
      );
      const [first] = cpu.samples;
      assert.deepEqual(
        first.stack.map((/** @type {any} */ f) => `${f.name} ${f.file}:${f.line} ${f.address}`),
        ['parse parse.go:77 0x403000', 'handle handler.go:40 0x402000', 'main main.go:12 0x401000'],
      );
      assert.deepEqual(first.values, [10_000_000, 20_000_000]);
      assert.deepEqual(first.timestampsUnixNano, ['1700000000001000000', '1700000000002000000']);
      assert.deepEqual(first.attributes, { 'thread.name': 'worker-1' });
      assert.deepEqual(first.link, { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' });
      assert.deepEqual(
        cpu.samples.map((/** @type {any} */ s) => s.link),
        [first.link, null, null, null],
      );
      const alloc = await mock.api(`/api/profiles/${ALLOC_ID}`);
      assert.equal(alloc.originalPayloadFormat, 'pprof');
      assert.deepEqual(
        alloc.samples.map((/** @type {any} */ s) => s.value),
        [4096, 1024],
      );

      const aggregate = await mock.api(`/api/profiles/aggregate?service=${service}&type=cpu`);
      assert.deepEqual(tree(aggregate.tree), ['all 0/110', ' main 10/110', '  handle 0/100', '   parse 70/70', '   compress 30/30']);
      assert.deepEqual(
        aggregate.functions.map((/** @type {any} */ f) => [f.name, f.self / 1e6, f.total / 1e6, f.samples]),
        [
          ['parse', 70, 70, 2],
          ['compress', 30, 30, 1],
          ['main', 10, 110, 4],
          ['handle', 0, 100, 3],
        ],
      );
      await client.expect([
        { signal: 'profiles', where: { service, function: 'parse', type: 'cpu' }, count: 2 },
        { signal: 'profiles', where: { service, traceId: '5b8efff798038103d269b633813fc60c' }, count: 1 },
        { signal: 'profiles', where: { service }, attributes: { 'thread.name': 'worker-1' }, count: 2 },
      ]);
    });
  }

  test('the three wires store the same profiles', async () => {
    for (const wire of WIRES) await send(wire, 'pdata-same');
    const rows = (await mock.api('/api/profiles?service=pdata-same&samples=all')).profiles;
    assert.equal(rows.length, 6);
    const content = rows.map((/** @type {any} */ { requestId, ...rest }) => JSON.stringify(rest));
    assert.equal(new Set(content).size, 2, 'each profile reads back alike from every wire');
  });

  test('an unsupported schema version is refused as invalid, not to be retried, on every wire, and nothing is stored', async () => {
    for (const wire of /** @type {const} */ (['http-proto', 'http-json'])) {
      const answer = await send(wire, 'pdata-v2', { version: '2' });
      assert.equal(answer.status, 400, wire);
      // A google.rpc.Status, in protobuf or JSON (where the quotes come escaped).
      assert.match(String(answer.message), /otlp-profiles-development-version \\?"2\\?": the supported version is 1/);
    }
    const client = rawGrpcClient(mock.urls.grpc);
    const bytes = /** @type {any} */ (await run(producer, ['proto', 'pdata-v2'], {}));
    const { error } = await client.exportRaw('opentelemetry.proto.collector.profiles.v1development.ProfilesService', Buffer.from(bytes.stdout, 'latin1'), {
      metadata: { 'otlp-profiles-development-version': '2' },
    });
    client.close();
    assert.equal(error?.code, grpcStatus.INVALID_ARGUMENT);
    assert.equal((await mock.api('/api/profiles')).total, 0);
    const outcomes = (await mock.api('/api/requests')).requests.map((/** @type {any} */ r) => [r.transport, r.outcome]);
    assert.deepEqual(outcomes, [
      ['grpc', 'rejected'],
      ['http', 'rejected'],
      ['http', 'rejected'],
    ]);
  });

  test('fault rules on profiles give the answers the other signals get', async () => {
    await addFault({ action: 'unavailable', signals: 'profiles', retryAfterMs: 2000 });
    assert.deepEqual(pick(await send('grpc', 'pdata-fault')), { status: grpcStatus.UNAVAILABLE, code: 'Unavailable' });
    for (const wire of /** @type {const} */ (['http-proto', 'http-json'])) assert.equal((await send(wire, 'pdata-fault')).status, 503, wire);
    await clearFaults();
    await addFault({ action: 'partial', signals: 'profiles', rejectItems: 1, message: 'one profile dropped' });
    for (const wire of WIRES) {
      const answer = await send(wire, 'pdata-partial');
      assert.deepEqual({ rejected: answer.rejected, message: answer.message }, { rejected: 1, message: 'one profile dropped' }, wire);
    }
    assert.equal((await mock.api('/api/profiles?service=pdata-partial')).samples, 18, 'a partial success stores the request');
    assert.equal((await mock.api('/api/profiles?service=pdata-fault')).total, 0);
    await clearFaults();
  });
});

describe('forward mode', { skip }, () => {
  /** @type {import('../helpers/collector.js').TestCollector} */
  let upstream;
  before(async () => {
    upstream = await startTestCollector();
  });
  const stopForwarding = () => mock.api('/api/forward', { method: 'DELETE' });
  after(async () => {
    await stopForwarding();
    await upstream?.stop();
  });
  beforeEach(async () => {
    await upstream.clear();
    await stopForwarding();
  });

  const TARGETS = [
    { name: 'gRPC', target: () => ({ url: upstream.urls.grpc.replace(/^http:/, 'grpc:') }) },
    { name: 'HTTP as received', target: () => ({ url: upstream.urls.http }) },
    { name: 'HTTP JSON, gzip', target: () => ({ url: upstream.urls.http, encoding: 'json', compression: 'gzip' }) },
  ];
  for (const { name, target } of TARGETS) {
    test(`profiles from every wire arrive upstream (${name}) once and the same`, async () => {
      await mock.api('/api/forward', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target()) });
      for (const wire of WIRES) assert.equal((await send(wire, `fwd-${wire}`)).rejected, 0);
      for (const wire of WIRES) {
        const query = `/api/profiles?service=fwd-${wire}&samples=all`;
        const [here, there] = await Promise.all([mock.api(query), upstream.api(query)]);
        assert.equal(there.samples, 6, wire);
        const content = (/** @type {any} */ body) => body.profiles.map((/** @type {any} */ { requestId, ...rest }) => rest);
        assert.deepEqual(content(there), content(here), wire);
      }
    });
  }
});

/** @param {any} node @param {string} [indent] @returns {string[]} name self/total in milliseconds, depth first */
function tree(node, indent = '') {
  return [`${indent}${node.name} ${node.self / 1e6}/${node.total / 1e6}`, ...node.children.flatMap((/** @type {any} */ c) => tree(c, `${indent} `))];
}

/** @param {{ status: number, code?: string }} answer */
const pick = ({ status, code }) => ({ status, code });

describe('through the Collector with its profiles gate', { skip: skip || (!existsSync(OTELCOL) && `no Collector binary at ${OTELCOL} (set OTELCOL_BIN)`) }, () => {
  /** @type {{ grpc: string, http: string, stop: () => Promise<unknown> }} */
  let otelcol;

  before(async () => {
    const [grpc, http] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-otelcol-profiles-'));
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
    endpoint: ${new URL(mock.urls.grpc).host}
    tls: { insecure: true }
    sending_queue: { enabled: false }
  otlp_http:
    endpoint: ${mock.urls.http}
    sending_queue: { enabled: false }
service:
  telemetry:
    logs: { level: warn }
    metrics: { level: none }
  pipelines:
    profiles/grpc: { receivers: [otlp], exporters: [otlp_grpc] }
    profiles/http: { receivers: [otlp], exporters: [otlp_http] }
`,
    );
    const child = spawn(OTELCOL, ['--config', config, '--feature-gates=service.profilesSupport'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    otelcol = {
      grpc: `127.0.0.1:${grpc}`,
      http: `127.0.0.1:${http}`,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
    await waitFor(
      async () =>
        (
          await fetch(`http://127.0.0.1:${http}/v1development/profiles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(
            () => null,
          )
        )?.status === 200,
      { timeoutMs: 20_000, what: `the Collector to listen (${stderr})` },
    );
  });
  after(() => otelcol?.stop());

  for (const wire of WIRES) {
    test(`${wire} into the Collector: its gRPC and HTTP exporters each deliver every profile once`, async () => {
      const service = `otelcol-${wire}`;
      const answer = await send(wire, service, { to: otelcol });
      assert.equal(answer.status, wire === 'grpc' ? 0 : 200);
      await client.waitForProfiles({ service }, { count: 12 });
      const journal = (await mock.api('/api/requests?signal=profiles')).requests;
      assert.deepEqual(journal.map((/** @type {any} */ r) => r.transport).sort(), ['grpc', 'http']);
      const rows = (await mock.api(`/api/profiles?service=${service}&samples=all`)).profiles;
      assert.equal(rows.length, 4);
      for (const id of [CPU_ID, ALLOC_ID]) {
        const copies = rows.filter((/** @type {any} */ r) => r.profileId === id).map((/** @type {any} */ { requestId, ...rest }) => JSON.stringify(rest));
        assert.equal(copies.length, 2);
        assert.equal(copies[0], copies[1], 'both exporters deliver the same profile');
      }
      const aggregate = await mock.api(`/api/profiles/aggregate?service=${service}&type=cpu`);
      assert.deepEqual(tree(aggregate.tree), ['all 0/220', ' main 20/220', '  handle 0/200', '   parse 140/140', '   compress 60/60']);
    });
  }
});
