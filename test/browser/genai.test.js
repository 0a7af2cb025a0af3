// A model call's span (OpenTelemetry gen_ai.* conventions) shown as a conversation in real headless Chromium:
// model, tokens in and out, each message by role, and the tools called, from the newer message attributes and
// from the older message events alike; a span without gen_ai.* shows none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite } from '../helpers/browser.js';
import { hex, kvs, ns, postJson, traceRequest } from '../helpers/ui-data.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;
const TRACE = 'ab'.repeat(16);
const NOW = Date.now();

test('gen_ai spans read as conversations', { skip }, async () => {
  const body = traceRequest(TRACE, [
    { service: 'agent', name: 'invoke_agent', spanId: hex(1), startMs: NOW - 3000, durMs: 2000 },
    {
      service: 'agent',
      name: 'chat gpt-4o',
      spanId: hex(2),
      parentSpanId: hex(1),
      startMs: NOW - 2900,
      durMs: 800,
      attrs: {
        'gen_ai.provider.name': 'openai',
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 1234,
        'gen_ai.usage.output_tokens': 56,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'What is the weather in Paris?' }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }], finish_reason: 'tool_calls' },
        ]),
      },
    },
    {
      service: 'agent',
      name: 'chat claude',
      spanId: hex(3),
      parentSpanId: hex(1),
      startMs: NOW - 2000,
      durMs: 700,
      attrs: { 'gen_ai.system': 'anthropic', 'gen_ai.request.model': 'claude-3-5-sonnet', 'gen_ai.usage.prompt_tokens': 80 },
    },
    { service: 'agent', name: 'plain work', spanId: hex(4), parentSpanId: hex(1), startMs: NOW - 1200, durMs: 10 },
  ]);
  const spans = /** @type {any[]} */ (body.resourceSpans[0].scopeSpans[0].spans);
  spans[2].events = [
    { timeUnixNano: ns(NOW - 1990), name: 'gen_ai.user.message', attributes: kvs({ content: 'Say hi' }) },
    { timeUnixNano: ns(NOW - 1990), name: 'gen_ai.tool.message', attributes: kvs({ content: '{"temp": 21}', id: 'call_1' }) },
    {
      timeUnixNano: ns(NOW - 1400),
      name: 'gen_ai.choice',
      attributes: kvs({ finish_reason: 'stop', message: JSON.stringify({ role: 'assistant', content: 'Hi! It is 21 degrees.' }) }),
    },
  ];
  await postJson(ui.collector.urls.http, 'traces', body);
  const { page } = ui;

  await page.goto(`${ui.collector.urls.ui}/traces/${TRACE}?span=${hex(2)}`);
  const facts = page.locator('.genai-facts');
  await facts.waitFor({ timeout: 10_000 });
  assert.equal(await facts.getAttribute('data-genai-model'), 'gpt-4o-2024-08-06');
  assert.match(await facts.innerText(), /openai/);
  assert.match(await page.locator('[data-tokens="in"]').innerText(), /1[,.]?234 tokens in|1\.2k tokens in/);
  assert.match(await page.locator('[data-tokens="out"]').innerText(), /56 tokens out/);
  const messages = page.locator('.genai-message');
  assert.deepEqual(await messages.evaluateAll((els) => els.map((e) => e.getAttribute('data-role'))), ['user', 'assistant']);
  assert.match(await messages.first().innerText(), /What is the weather in Paris\?/);
  assert.equal(await page.locator('.genai-tool-call').getAttribute('data-tool'), 'get_weather');
  assert.match(await page.locator('.genai-tool-call').innerText(), /"city":"Paris"/);

  await page.goto(`${ui.collector.urls.ui}/traces/${TRACE}?span=${hex(3)}`);
  await page.locator('.genai-facts[data-genai-model="claude-3-5-sonnet"]').waitFor({ timeout: 10_000 });
  assert.deepEqual(await messages.evaluateAll((els) => els.map((e) => [e.getAttribute('data-role'), e.querySelector('.genai-text')?.textContent])), [
    ['user', 'Say hi'],
    ['tool', '{"temp": 21}'],
    ['assistant', 'Hi! It is 21 degrees.'],
  ]);
  assert.match(await page.locator('[data-tokens="in"]').innerText(), /80 tokens in/);

  await page.goto(`${ui.collector.urls.ui}/traces/${TRACE}?span=${hex(4)}`);
  await page.locator('.panel-title', { hasText: 'plain work' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('.genai-facts').count(), 0);
  assert.deepEqual(ui.pageErrors, []);
});
