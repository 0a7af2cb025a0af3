// The client's errors say what went wrong without opening `.body`: the server's reason, or which URL did not answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { OtlpMock, OtlpMockError } from '../../server/client/index.js';
import { startCollector } from '../../server/collector.js';

/** A port nothing listens on: taken from the system, then released. */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a refused connection names the URL that was not reachable', async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  await assert.rejects(new OtlpMock(url).spans({ service: 'checkout' }), (err) => {
    assert.ok(err instanceof OtlpMockError);
    assert.equal(err.status, 0);
    assert.equal(err.message, `GET /api/spans?service=checkout: otlp-mock is not reachable at ${url} (ECONNREFUSED); is it running? (npx otlp-mock)`);
    return true;
  });
});

test("a refusal carries the server's reason in the message", async () => {
  const mock = await startCollector({ host: '127.0.0.1', grpcPort: 0, httpPort: 0, uiPort: 0 });
  try {
    await assert.rejects(mock.client.page('spans', { limit: 'x' }), {
      name: 'OtlpMockError',
      message: `GET /api/spans?limit=x: 400 parameter 'limit' must be an integer from 1 to 100000, got "x"`,
    });
  } finally {
    await mock.stop();
  }
});
