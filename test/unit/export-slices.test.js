// The lines of GET /api/export and `--print json` written in slices (transfer/export.js exportLineInSlices): the same
// text as the line written at once, for every signal and shape of request, escaped for a terminal or not.
import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeProto } from '../../server/otlp/items.js';
import { DecodeError } from '../../server/otlp/errors.js';
import { signalByName } from '../../server/otlp/signals.js';
import { encodeRequest, requestType } from '../../server/otlp/schema.js';
import { Store } from '../../server/store/store.js';
import { Slicer } from '../../server/query/scan.js';
import { exportLineInSlices } from '../../server/transfer/export.js';
import { rebuildRequest } from '../../server/store/rebuild.js';
import { requestJson } from '../../server/transfer/otlp-json.js';
import { terminalJson } from '../../server/print/escape.js';
import { createRandom, encodeLiberally, randomRequest } from '../helpers/random-otlp.js';
import { readFileSync } from 'node:fs';
import { metricRequest } from '../../bench/fill.js';

/** Requests with items whatever the random ones hold: a random metric seldom has data points. */
const GIVEN = {
  traces: () => readFileSync(new URL('../../fixtures/traces.pb', import.meta.url)),
  logs: () => readFileSync(new URL('../../fixtures/logs.pb', import.meta.url)),
  metrics: (/** @type {number} */ n) => (n % 2 ? encodeRequest('metrics', metricRequest(n)) : readFileSync(new URL('../../fixtures/metrics.pb', import.meta.url))),
  profiles: () => readFileSync(new URL('../../fixtures/profiles.pb', import.meta.url)),
};

/** A slicer whose every slice is spent at once: each item's JSON is written in a turn of its own. */
class EveryItem extends Slicer {
  due() {
    return true;
  }
}

/** @typedef {import('../../server/otlp/signals.js').SignalName} SignalName */

test('a line written in slices is the line written at once, for 150 random and realistic requests of each signal', { timeout: 120_000 }, async () => {
  for (const name of /** @type {SignalName[]} */ (['traces', 'logs', 'metrics', 'profiles'])) {
    const signal = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName(name));
    const type = requestType(name);
    const r = createRandom(0xe4 + name.length);
    let compared = 0;
    for (let i = 0; i < 150; i++) {
      const bytes = i % 5 === 0 ? GIVEN[name](i) : encodeLiberally(r, type, randomRequest(r, type, { maxDepth: 4 }));
      let request;
      try {
        request = decodeProto(signal, bytes, { lazy: true });
      } catch (err) {
        if (err instanceof DecodeError) continue;
        throw err;
      }
      const store = new Store();
      store.addRequest(name, request, 1, bytes.length);
      const entries = [...store.ring(name)];
      if (entries.length === 0) continue;
      // the line as written at once: the request rebuilt, then written
      const whole = requestJson(rebuildRequest(name, entries)) + '\n';
      assert.equal(String(await exportLineInSlices(name, entries, new EveryItem())), whole, `${name} request ${i}`);
      assert.equal(String(await exportLineInSlices(name, entries, new EveryItem(), terminalJson)), terminalJson(whole), `${name} request ${i}, escaped`);
      compared++;
    }
    assert.ok(compared >= 30, `${name}: ${compared} requests compared`);
  }
});
