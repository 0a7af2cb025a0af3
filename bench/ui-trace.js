#!/usr/bin/env node
/**
 * The trace view on a 5,001-span trace across 12 services, in headless Chromium: how long the page takes to
 * show it, how smooth zooming (dragging on the minimap) and scrolling the waterfall are (frame times from
 * requestAnimationFrame in the page), and how long find-in-trace takes to highlight its matches.
 *
 *   node bench/ui-trace.js [--runs 5]
 */
import { parseArgs } from 'node:util';
import { startCollector } from '../server/collector.js';
import { buildWeb } from '../scripts/build-web.js';
import { launchChromium } from '../scripts/chromium.js';
import { bigTrace, postJson } from '../test/helpers/ui-data.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);
const SPANS = 5001;
const TRACE = 'bb'.repeat(16);

/** @param {number[]} xs @param {number} q */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const median = (/** @type {number[]} */ xs) => quantile(xs, 0.5);

await buildWeb({ log: () => {} });
const collector = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
const browser = await launchChromium();
try {
  await postJson(collector.urls.http, 'traces', bigTrace(TRACE, SPANS, 12, Date.now() - 10_000));
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const url = `${collector.urls.ui}/traces/${TRACE}`;

  /** Frame intervals while `act` runs, from requestAnimationFrame timestamps in the page. @param {() => Promise<void>} act */
  const frames = async (act) => {
    await page.evaluate(() => {
      const w = /** @type {any} */ (window);
      w.__frames = [];
      w.__recording = true;
      let last = 0;
      const tick = (/** @type {number} */ t) => {
        if (last) w.__frames.push(t - last);
        last = t;
        if (w.__recording) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await act();
    return page.evaluate(() => {
      const w = /** @type {any} */ (window);
      w.__recording = false;
      return /** @type {number[]} */ (w.__frames);
    });
  };

  const open = [];
  for (let i = 0; i < RUNS; i++) {
    const started = Date.now();
    await page.goto(url);
    await page.locator('.span-row').first().waitFor();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
    open.push(Date.now() - started);
  }

  const box = /** @type {{ x: number, y: number, width: number, height: number }} */ (await page.locator('.minimap').boundingBox());
  const zoom = await frames(async () => {
    for (let i = 0; i < 8; i++) {
      const a = 0.05 + i * 0.1;
      await page.mouse.move(box.x + box.width * a, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * (a + 0.08), box.y + box.height / 2, { steps: 20 });
      await page.mouse.up();
      await page.locator('.minimap').dblclick();
    }
  });

  const scroll = await frames(() =>
    page.evaluate(
      () =>
        new Promise((resolve) => {
          const list = /** @type {HTMLElement} */ (document.querySelector('.waterfall .vlist'));
          const end = performance.now() + 3000;
          const step = () => {
            list.scrollTop = (list.scrollTop + 240) % (list.scrollHeight - list.clientHeight);
            if (performance.now() < end) requestAnimationFrame(step);
            else resolve();
          };
          requestAnimationFrame(step);
        }),
    ),
  );

  const find = [];
  /** a find that highlights nothing by then is a failure to report, not a wait without end */
  const FIND_LIMIT_MS = 10_000;
  for (let i = 0; i < RUNS; i++) {
    const needle = i % 2 ? 'slow query' : `op ${10 + i}`;
    find.push(
      await page.evaluate(
        ({ text, limitMs }) =>
          new Promise((resolve, reject) => {
            const input = /** @type {HTMLInputElement} */ (document.querySelector('input[data-filter="find"]'));
            const setValue = /** @type {(v: string) => void} */ (Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set);
            setValue.call(input, '');
            input.dispatchEvent(new Event('input', { bubbles: true }));
            requestAnimationFrame(() => {
              const started = performance.now();
              const done = () => {
                const count = document.querySelector('.find-count');
                if (count && count.getAttribute('data-matches') !== '0' && document.querySelector('.find-current, .find-match'))
                  requestAnimationFrame(() => resolve(performance.now() - started));
                else if (performance.now() - started > limitMs) reject(new Error(`find "${text}" highlighted nothing in ${limitMs} ms`));
                else requestAnimationFrame(done);
              };
              setValue.call(input, text);
              input.dispatchEvent(new Event('input', { bubbles: true }));
              done();
            });
          }),
        { text: needle, limitMs: FIND_LIMIT_MS },
      ),
    );
  }

  const ms = (/** @type {number} */ v) => `${v.toFixed(1)} ms`;
  console.log(`trace of ${SPANS} spans, 12 services, ${RUNS} runs, headless Chromium`);
  console.log(`open (navigation to first rows painted): median ${ms(median(open))}, worst ${ms(Math.max(...open))}`);
  console.log(
    `zoom (8 minimap drags + resets): ${zoom.length} frames, p95 frame ${ms(quantile(zoom, 0.95))}, median ${ms(median(zoom))}, ${(1000 / median(zoom)).toFixed(0)} fps median`,
  );
  console.log(`scroll (3 s, 240 px a frame): ${scroll.length} frames, p95 frame ${ms(quantile(scroll, 0.95))}, median ${ms(median(scroll))}`);
  console.log(`find in trace (typing to highlighted): median ${ms(median(find))}, worst ${ms(Math.max(...find))}`);
} finally {
  await browser.close();
  await collector.stop();
}
