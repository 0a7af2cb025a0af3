// The console summary writes telemetry strings: none may drive the operator's terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { startTestCollector } from '../helpers/collector.js';
import { sampleRequest } from '../helpers/payloads.js';
import { rawRequest } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { terminalJson, visible } from '../../server/print/escape.js';

test('control characters are shown as escapes', () => {
  assert.equal(visible('a\u001b[2Jb'), 'a\\x1b[2Jb');
  assert.equal(visible('\u001b]0;owned\u0007'), '\\x1b]0;owned\\x07');
  assert.equal(visible('\u009b31m'), '\\x9b31m');
  assert.equal(visible('\u202egnp.exe'), '\\u202egnp.exe');
  assert.equal(visible('plain ünïcode'), 'plain ünïcode');
});

test('ESC, OSC and C1 sequences in a service or span name never reach the console raw', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk) => (text += chunk));
  const c = await startTestCollector({ print: 'summary', printTo: out });
  try {
    const json = sampleRequest('traces', { service: 'svc\u001b[2J\u001b]0;title\u0007', name: 'op\u009b31m\u202e' });
    const res = await rawRequest(c.urls.http + '/v1/traces', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
    assert.equal(res.status, 200);
    await waitFor(() => text.includes('op'));
    // eslint-disable-next-line no-control-regex -- control characters are what must not reach the terminal
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    assert.match(text, /svc\\x1b\[2J\\x1b\]0;title\\x07/);
    assert.match(text, /op\\x9b31m\\u202e/);
  } finally {
    await c.stop();
  }
});

/** Every character the terminal must not get raw, each in a string of its own. */
const TERMINAL_CONTROLS = ['\u007f', '\u0080', '\u009b', '\u009d', '\u009f', '\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069'];
// eslint-disable-next-line no-control-regex -- control characters are what must not reach the terminal
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test('terminalJson escapes C1, DEL and bidi controls as \\u escapes and parses back to the same value', () => {
  const value = { name: `csi\u009b31m rlo\u202egnp.exe lri\u2066x\u2069 alm\u061c lrm\u200e`, list: TERMINAL_CONTROLS, plain: 'ünï 日本 \ud83d\ude00' };
  const line = terminalJson(JSON.stringify(value) + '\n');
  assert.doesNotMatch(line, RAW_CONTROL);
  assert.ok(line.endsWith('}\n'));
  assert.match(line, /csi\\u009b31m rlo\\u202egnp\.exe/);
  assert.deepEqual(JSON.parse(line), value);
});

test('--print json: a span and a log with C1 and bidi controls are written escaped, and parse back equal', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk) => (text += chunk));
  const c = await startTestCollector({ print: 'json', printTo: out });
  try {
    const name = `op\u009b31m\u202egnp.exe\u2066\u200f\u061c\u007f`;
    const service = `svc\u009d0;title\u009c\u2067`;
    const span = sampleRequest('traces', { service, name });
    const log = sampleRequest('logs', { service, name });
    for (const [path, body] of /** @type {const} */ ([
      ['/v1/traces', span],
      ['/v1/logs', log],
    ])) {
      const res = await rawRequest(c.urls.http + path, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 200);
    }
    await waitFor(() => text.split('\n').length > 2, { what: 'two printed lines' });
    assert.doesNotMatch(text, RAW_CONTROL);
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const printedSpan = lines.find((l) => l.resourceSpans)?.resourceSpans[0];
    const printedLog = lines.find((l) => l.resourceLogs)?.resourceLogs[0];
    assert.equal(printedSpan.scopeSpans[0].spans[0].name, name);
    assert.equal(printedSpan.resource.attributes.find((/** @type {any} */ a) => a.key === 'service.name').value.stringValue, service);
    assert.equal(printedLog.scopeLogs[0].logRecords[0].body.stringValue, `${name} happened`);
    assert.equal(printedLog.resource.attributes.find((/** @type {any} */ a) => a.key === 'service.name').value.stringValue, service);
    assert.match(text, /op\\u009b31m\\u202egnp\.exe\\u2066\\u200f\\u061c\\u007f/);
  } finally {
    await c.stop();
  }
});
