// A large OTAP batch's OTLP request is written from its Arrow tables in steps that take turns with all other work
// (server/otap/batch.js): written at once, a batch of 50,000 log records from otel-arrow's producer held the event
// loop 0.5-1.2 s. The real producer's batches, small and large, are in test/interop/otap*.test.js.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { RecordBatchStreamWriter, tableFromArrays } from 'apache-arrow';
import { ArrowState, ArrowError, Inflation } from '../../server/otap/arrow.js';
import { otlpOf } from '../../server/otap/batch.js';
import { ARROW_LOGS } from '../../server/otap/logs.js';
import { decodeBatch } from '../../server/otap/messages.js';
import { builtRequest, decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { batch as otapBatch } from '../helpers/otap-payloads.js';

const LOGS = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('logs'));
const ROWS = 100_000;

/** A logs batch of `rows` records, each with a severity text of its own (a dictionary of `rows` strings). @param {number} rows */
function logsBatch(rows) {
  const writer = new RecordBatchStreamWriter();
  writer.write(tableFromArrays({ severity_text: Array.from({ length: rows }, (_, i) => `text ${i}`) }));
  writer.finish();
  return decodeBatch(otapBatch(1, [{ schemaId: 'logs', type: 30, record: writer.toUint8Array(true) }]));
}

/**
 * How many times the event loop came round (setImmediate) while `work` ran.
 * @template T @param {() => Promise<T>} work @returns {Promise<{ result: T, turns: number }>}
 */
async function turnsDuring(work) {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

describe('a large OTAP batch is written in steps', () => {
  const batch = logsBatch(ROWS);

  test('the event loop comes round while its request is written, and the request holds every row', async () => {
    const state = new ArrowState({ maxDictionaryValues: 2 * ROWS });
    const { result, turns } = await turnsDuring(() => otlpOf(ARROW_LOGS, batch, state, new Inflation(64 << 20, () => false, undefined, true), ROWS));
    // A step is a few rows, a slice about a millisecond: writing 100,000 records takes tens of them. Written at once,
    // the loop came round once or twice, while the record batch was read.
    assert.ok(turns >= 10, `the loop came round ${turns} times`);
    const request = builtRequest(LOGS, decodeProto(LOGS, result.body, { lazy: true }));
    assert.equal(LOGS.countItems(request), ROWS);
    const records = request.resourceLogs[0].scopeLogs[0].logRecords;
    assert.equal(records[0].severityText, 'text 0');
    assert.equal(records[ROWS - 1].severityText, `text ${ROWS - 1}`);
  });

  test('a batch whose client leaves while it is written is not written on', async () => {
    let gone = false;
    let asked = 0;
    const inflation = new Inflation(
      64 << 20,
      () => {
        asked++;
        return gone;
      },
      undefined,
      true,
    );
    const state = new ArrowState({ maxDictionaryValues: 2 * ROWS });
    const writing = otlpOf(ARROW_LOGS, batch, state, inflation, ROWS);
    setImmediate(() => (gone = true));
    await assert.rejects(writing, (err) => err instanceof ArrowError && /went away/.test(err.message));
    assert.ok(asked >= 1);
  });
});
