// Playwright Test: a click in a real browser page instrumented with the OpenTelemetry web SDK, asserted on
// what otlp-mock received. Run from the repository root: npx playwright test -c examples/playwright/playwright.config.js
import { test, expect } from '@playwright/test';
import { OtlpMock } from 'otlp-mock/client';

const mock = new OtlpMock('http://127.0.0.1:14419');

test.beforeEach(async () => {
  await mock.clear();
  await mock.faults.clear();
});

test('placing an order sends its span from the browser', async ({ page, baseURL }) => {
  /** @type {string[]} */
  const errors = [];
  page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
  page.on('pageerror', (err) => errors.push(err.message));

  await page.goto('/');
  await page.getByRole('button', { name: 'Place order' }).click();

  try {
    // Throws with otlp-mock's explanation (what arrived instead) when it does not hold.
    await mock.expect({
      timeoutMs: 5000,
      expectations: [
        {
          signal: 'spans',
          where: { service: 'shop-web', name: 'place order', attributes: { 'cart.items': 1 } },
          count: { exactly: 1 },
        },
      ],
    });
  } finally {
    // Soft, so that a refused preflight (only a console error in the page) is reported next to that explanation.
    expect.soft(errors).toEqual([]);
  }
  // The page thanks only once forceFlush has resolved, that is once otlp-mock has answered the export.
  await expect(page.getByRole('status')).toHaveText('Thank you for your order');

  // The journal says who sent it: Chromium, cross-origin, from the page's origin.
  const [request, ...others] = await mock.requests({ signal: 'traces' });
  expect(others).toHaveLength(0);
  expect(request).toMatchObject({ transport: 'http', outcome: 'accepted', contentType: expect.stringContaining('application/json') });
  expect(request.userAgent).toMatch(/HeadlessChrome\//);
  expect(request.headers.origin).toBe(new URL(baseURL ?? '').origin);
  expect(request.headers['sec-fetch-mode']).toBe('cors');
});
