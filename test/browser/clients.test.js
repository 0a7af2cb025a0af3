// The Clients view in Chromium: a card per client with the figures GET /api/clients gives and its charts drawn,
// for two official exporters over different wires; "Start a window now" empties it until a client sends again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { browserSuite } from '../helpers/browser.js';
import { createExporter, exportOrThrow } from '../helpers/exporters.js';

const ui = browserSuite({ page: true });
const skip = ui.skip;

/** @param {string} service @param {number} n */
async function spans(service, n) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.instance.id': `${service}-1` }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  for (let i = 0; i < n; i++) provider.getTracer('clients-view').startSpan(`op-${i}`).end();
  const finished = memory.getFinishedSpans();
  await provider.shutdown();
  return finished;
}

/** Exports in two seconds of the clock, so that each chart has a line to draw, not a point. */
async function sendAcrossTwoSeconds(/** @type {any} */ exporter, /** @type {string} */ service, /** @type {number[]} */ batches) {
  for (const [i, n] of batches.entries()) {
    if (i === batches.length - 1) await sleep(1000 - (Date.now() % 1000) + 20);
    await exportOrThrow(exporter, await spans(service, n));
  }
}

test('a card per client, with its figures and charts drawn', { skip }, async () => {
  const alpha = createExporter('traces', { wire: 'proto', compression: 'gzip' }, ui.collector.urls);
  const beta = createExporter('traces', { wire: 'grpc', compression: 'none' }, ui.collector.urls);
  await Promise.all([sendAcrossTwoSeconds(alpha, 'alpha', [3, 8, 5]), sendAcrossTwoSeconds(beta, 'beta', [2, 4])]);
  await Promise.all([alpha.shutdown(), beta.shutdown()]);
  const { clients } = await ui.collector.api('/api/clients');

  const { page } = ui;
  await page.goto(`${ui.collector.urls.ui}/clients`);
  const cards = page.locator('.client-card');
  await cards.nth(1).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('.tab.active').textContent(), 'Clients');
  for (const [i, row] of clients.entries()) {
    const card = cards.nth(i);
    assert.equal(await card.getAttribute('data-client'), row.key);
    const figure = async (/** @type {string} */ label) => card.locator(`[data-figure="${label}"] .mono`).textContent();
    assert.equal(await figure('requests'), String(row.requests));
    assert.equal(await figure('items'), String(row.items));
    assert.equal(await figure('batch min / median / max'), `${row.batch.min} / ${row.batch.median} / ${row.batch.max}`);
    assert.equal(await figure('faults / retries'), '0 / 0');
    const lines = await card
      .locator('polyline[data-series]')
      .evaluateAll((els) => els.map((el) => [el.getAttribute('data-series'), (el.getAttribute('points') ?? '').trim().split(/\s+/).length]));
    assert.deepEqual(
      lines.map(([label]) => label),
      ['requests', 'items', 'faults', 'wire', 'decoded'],
    );
    for (const [label, points] of lines) assert.ok(Number(points) >= 2, `${row.service} ${label}: ${points} points`);
  }
  assert.match(/** @type {string} */ (await cards.nth(0).textContent()), /alpha.*gzip ×3/s);
  assert.match(/** @type {string} */ (await cards.nth(1).textContent()), /beta.*none ×2/s);
  await page.screenshot({ path: process.env.OTLP_MOCK_SCREENSHOT ?? '/tmp/otlp-mock-clients.png', fullPage: true });

  await page.locator('button[data-action="window"]').click();
  await page.getByText('Nothing sent since the window started.').waitFor({ timeout: 10_000 });
  assert.deepEqual(ui.pageErrors, []);
});
