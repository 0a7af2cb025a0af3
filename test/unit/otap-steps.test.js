// A large OTAP batch's OTLP request is written from its Arrow tables in steps that take turns with all other work
// (server/otap/batch.js): written at once, a batch of 50,000 log records from otel-arrow's producer held the event
// loop 0.5-1.2 s. The real producer's batches, small and large, are in test/interop/otap*.test.js.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { RecordBatchStreamWriter, tableFromArrays } from 'apache-arrow';
import { ArrowState, ArrowError, Inflation } from '../../server/otap/arrow.js';
import { otlpOf } from '../../server/otap/batch.js';
import { OtlpWriter } from '../../server/otap/otlp-writer.js';
import { ARROW_LOGS } from '../../server/otap/logs.js';
import { ARROW_METRICS } from '../../server/otap/metrics.js';
import { decodeBatch } from '../../server/otap/messages.js';
import { builtRequest, decodeProto } from '../../server/otlp/items.js';
import { signalByName } from '../../server/otlp/signals.js';
import { batch as otapBatch } from '../helpers/otap-payloads.js';

const LOGS = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('logs'));
const METRICS = /** @type {import('../../server/otlp/signals.js').Signal} */ (signalByName('metrics'));
const ROWS = 100_000;

/** An Arrow IPC stream of one record batch. @param {Parameters<typeof tableFromArrays>[0]} columns */
function record(columns) {
  const writer = new RecordBatchStreamWriter();
  writer.write(tableFromArrays(columns));
  writer.finish();
  return writer.toUint8Array(true);
}

/** A logs batch of `rows` records, each with a severity text of its own (a dictionary of `rows` strings). @param {number} rows */
function logsBatch(rows) {
  return decodeBatch(otapBatch(1, [{ schemaId: 'logs', type: 30, record: record({ severity_text: Array.from({ length: rows }, (_, i) => `text ${i}`) }) }]));
}

/** A metrics batch of one gauge of `points` data points (their parent ids, differences, all 0: the one metric). @param {number} points */
function gaugeBatch(points) {
  return decodeBatch(
    otapBatch(1, [
      { schemaId: 'metrics', type: 10, record: record({ id: Uint16Array.of(0), metric_type: Uint8Array.of(1), name: ['gauge'] }) },
      { schemaId: 'points', type: 11, record: record({ parent_id: new Uint16Array(points), int_value: BigInt64Array.from({ length: points }, (_, i) => BigInt(i)) }) },
    ]),
  );
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

  test("a metric's data points are written a few at a time, however many one metric has", async () => {
    const state = new ArrowState({ maxDictionaryValues: 10 });
    const inflation = new Inflation(64 << 20, () => false);
    /** @type {Map<string, any>} */
    const tables = new Map();
    for (const payload of gaugeBatch(ROWS).payloads) tables.set(payload.type === 10 ? 'UNIVARIATE_METRICS' : 'NUMBER_DATA_POINTS', await state.read(payload, inflation));
    const w = new OtlpWriter();
    const steps = ARROW_METRICS.write(w, tables, { resource: new Map(), scope: new Map() });
    let count = 0;
    while (!steps.next().done) count++;
    // A step a few rows of the points table as they are read, and again as they are written in their one metric.
    assert.ok(count >= (2 * ROWS) / 64 - 2, `${count} steps`);
    const request = builtRequest(METRICS, decodeProto(METRICS, w.finish(), { lazy: true }));
    const [metric] = request.resourceMetrics[0].scopeMetrics[0].metrics;
    assert.equal(metric.name, 'gauge');
    const points = metric.gauge.dataPoints;
    assert.equal(points.length, ROWS);
    assert.equal(String(points[ROWS - 1].asInt), String(ROWS - 1));
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
