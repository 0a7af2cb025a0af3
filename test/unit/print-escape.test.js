// The console summary writes telemetry strings: none may drive the operator's terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { startTestCollector } from '../helpers/collector.js';
import { sampleRequest } from '../helpers/payloads.js';
import { rawRequest } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { visible } from '../../server/print/summary.js';

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
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    assert.match(text, /svc\\x1b\[2J\\x1b\]0;title\\x07/);
    assert.match(text, /op\\x9b31m\\u202e/);
  } finally {
    await c.stop();
  }
});
