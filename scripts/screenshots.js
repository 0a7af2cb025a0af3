#!/usr/bin/env node
/**
 * Regenerates docs/screenshots/*.png: starts a collector, fills it with the fixtures and the demo shop
 * (scripts/demo-data.js), injects a fault so the journal shows one, and photographs every view in
 * headless Chromium.
 *
 *   node scripts/screenshots.js [--scheme dark|light] [--out docs/screenshots]
 *
 * Dark pictures are named after their view (trace.png), light ones with -light (trace-light.png).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.js';
import { startCollector } from '../server/collector.js';
import { sendDemoMetrics, sendDemoProfiles, sendDemoTraces } from './demo-data.js';
import { staleReason } from './build-web.js';

const root = fileURLToPath(new URL('..', import.meta.url));

async function main() {
  const { values } = parseArgs({
    options: { scheme: { type: 'string', default: 'dark' }, out: { type: 'string', default: 'docs/screenshots' } },
  });
  const reason = staleReason();
  if (reason) throw new Error(`the UI build is stale (${reason}): run npm run build first`);
  const out = join(root, values.out);
  mkdirSync(out, { recursive: true });

  const collector = await startCollector({ grpcPort: 0, httpPort: 0, uiPort: 0 });
  const browser = await launchChromium();
  try {
    for (const signal of ['traces', 'logs', 'metrics']) {
      const res = await fetch(`${collector.urls.http}/v1/${signal}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: readFileSync(join(root, 'fixtures', `${signal}.json`)),
      });
      if (!res.ok) throw new Error(`fixture ${signal}: ${res.status}`);
    }
    await sendDemoMetrics(collector.urls);
    await sendDemoTraces(collector.urls, { traces: 60 });
    collector.faults.add({ action: 'throttle', signals: ['logs'], transports: ['http'], times: 2, retryAfterMs: 2000 });
    collector.faults.add({ action: 'delay', signals: ['metrics'], delayMs: 250, match: { resource: { 'service.name': 'checkout' } } });
    for (let i = 0; i < 2; i++) {
      await fetch(`${collector.urls.http}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: readFileSync(join(root, 'fixtures', 'logs.pb')),
      });
    }

    const context = await browser.newContext({
      viewport: { width: 1440, height: 860 },
      colorScheme: /** @type {'dark'|'light'} */ (values.scheme),
      deviceScaleFactor: 1,
    });
    const page = await context.newPage();
    const ui = collector.urls.ui;
    /** @param {string} name */
    const shot = async (name) => {
      await page.waitForTimeout(400);
      const file = `${name}${values.scheme === 'light' ? '-light' : ''}.png`;
      await page.screenshot({ path: join(out, file) });
      console.log(`wrote ${join(values.out, file)}`);
    };

    await page.goto(`${ui}/traces`);
    await page.waitForSelector('[data-trace-id]');
    await shot('traces');

    const checkout = await collector.store.ring('traces');
    let errorTrace = '';
    for (const e of checkout) if (e.item.status.code === 2 && e.item.name === 'oteldemo.PaymentService/Charge') errorTrace = e.item.traceId;
    let paymentSpan = '';
    for (const e of checkout) if (e.item.traceId === errorTrace && e.item.name === 'oteldemo.PaymentService/Charge') paymentSpan = e.item.spanId;
    await page.goto(`${ui}/traces/${errorTrace}?span=${paymentSpan}`);
    await page.waitForSelector('.span-row');
    await shot('trace');
    await page.goto(`${ui}/traces/${errorTrace}?view=flame`);
    await page.waitForSelector('.flame-block');
    await page.getByLabel('Find in trace').fill('payment');
    await shot('trace-flame');
    await page.goto(`${ui}/traces/${errorTrace}?view=stats`);
    await page.waitForSelector('[aria-label="Trace statistics"] tbody tr');
    await shot('trace-stats');

    // Two runs of one request that took different paths, side by side.
    const { traces } = await (await fetch(`${ui}/api/traces?limit=200`)).json();
    /** @type {Map<string, any[]>} */
    const byRoot = new Map();
    for (const t of traces) byRoot.set(t.rootName, [...(byRoot.get(t.rootName) ?? []), t]);
    const pair = [...byRoot.values()]
      .map((ts) => ts.sort((a, b) => a.spanCount - b.spanCount))
      .find((ts) => ts.length > 1 && ts[0].spanCount !== ts[ts.length - 1].spanCount);
    if (pair) {
      await page.goto(`${ui}/traces/${pair[0].traceId}?compare=${pair[pair.length - 1].traceId}`);
      await page.waitForSelector('[data-side="right"] .compare-row');
      await shot('trace-compare');
    }

    // Checkout's CPU profile, one of its samples taken in a checkout span.
    /** @type {{ traceId: string, spanId: string } | undefined} */
    let span;
    for (const e of checkout) if (!span && e.ctx.service === 'checkout') span = { traceId: e.item.traceId, spanId: e.item.spanId };
    await sendDemoProfiles(collector.urls, { span });
    await page.goto(`${ui}/profiles`);
    await page.locator('[data-profile-id]').first().click();
    await page.waitForSelector('.profile-samples [data-action="sample-span"]');
    await page.locator('.top-functions tr[data-function="encoding/json.Marshal"]').click();
    await shot('profiles');

    await page.goto(`${ui}/logs`);
    await page.waitForSelector('.log-grid.tr');
    await page.locator('.log-grid.tr', { hasText: 'card declined' }).first().click();
    await shot('logs');

    await page.goto(`${ui}/metrics/frontend/http.server.request.duration?scope=${encodeURIComponent('@opentelemetry/instrumentation-http')}&unit=ms`);
    await page.waitForSelector('.chart svg');
    await shot('metrics-histogram');
    await page.goto(`${ui}/metrics/frontend/http.server.requests`);
    await page.waitForSelector('.chart svg');
    await page.getByRole('button', { name: 'Rate /s' }).click();
    await shot('metrics');

    await page.goto(`${ui}/requests`);
    await page.waitForSelector('.req-grid.tr');
    await shot('requests');
    await page.locator('.req-grid.tr', { hasText: 'throttle' }).first().click();
    await page.waitForSelector('.json-tree');
    await shot('request');

    await page.goto(`${ui}/map`);
    await page.waitForSelector('.map-edge');
    await page.locator('.map-edge.has-errors .edge-hit').first().click({ force: true });
    await page.waitForSelector('.edge-traces');
    await shot('service-map');

    await page.goto(`${ui}/resources`);
    await page.waitForSelector('.resource-row');
    await page.locator('.resource-row').first().click();
    await shot('resources');

    await page.goto(`${ui}/clients`);
    await page.waitForSelector('.client-card');
    await shot('clients');

    await page.goto(`${ui}/faults`);
    await page.waitForSelector('[data-rule-id]');
    await page.getByRole('button', { name: 'partial', exact: true }).click();
    await shot('faults');

    // A forward target nothing listens on: the next request's call fails, and the view says why.
    await fetch(`${ui}/api/forward`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://127.0.0.1:9/' }) });
    // The sender is answered the target's failure (502), as forward mode passes it on.
    await sendDemoProfiles(collector.urls, { span }).catch(() => undefined);
    await page.goto(`${ui}/forward`);
    await page.waitForSelector('.badge.error');
    await shot('forward');
  } catch (err) {
    for (const p of browser.contexts().flatMap((c) => c.pages())) await p.screenshot({ path: join(out, 'failed.png') });
    throw err;
  } finally {
    await browser.close();
    await collector.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
