// One BatchArrowRecords → the OTLP protobuf request of its signal, with what the journal says of it.
import { PAYLOAD_TYPES } from './messages.js';
import { attributesByParent } from './attributes.js';
import { OtlpWriter } from './otlp-writer.js';
import { writeTraces } from './traces.js';
import { writeLogs } from './logs.js';
import { writeMetrics } from './metrics.js';

export class BatchError extends Error {}

/** The payload types each signal's stream may carry, and the writer of its request. */
const SIGNAL_TABLES = {
  traces: { types: [1, 2, 40, 41, 42, 43, 44, 45], write: writeTraces },
  logs: { types: [1, 2, 30, 31], write: writeLogs },
  metrics: { types: [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24], write: writeMetrics },
};

/**
 * @param {import('../otlp/signals.js').Signal} signal
 * @param {import('./messages.js').BatchArrowRecords} batch
 * @param {import('./arrow.js').ArrowState} state the stream's
 * @returns {{ body: Buffer, payloadTypes: string[], arrowBytes: number }}
 */
export function otlpOf(signal, batch, state) {
  const spec = SIGNAL_TABLES[/** @type {'traces'|'logs'|'metrics'} */ (signal.name)];
  /** @type {Map<string, any>} */
  const tables = new Map();
  const payloadTypes = [];
  let arrowBytes = 0;
  for (const payload of batch.payloads) {
    const name = PAYLOAD_TYPES[/** @type {keyof typeof PAYLOAD_TYPES} */ (payload.type)];
    if (!name || !spec.types.includes(payload.type)) {
      throw new BatchError(`payload type ${name ?? payload.type} has no place in a stream of ${signal.name}`);
    }
    if (tables.has(name)) throw new BatchError(`the batch has two ${name} payloads`);
    arrowBytes += payload.record.length;
    payloadTypes.push(name);
    tables.set(name, state.read(payload));
  }
  const w = new OtlpWriter();
  const envelope = { resource: attributesByParent(tables.get('RESOURCE_ATTRS')), scope: attributesByParent(tables.get('SCOPE_ATTRS')) };
  spec.write(w, tables, envelope);
  return { body: w.finish(), payloadTypes, arrowBytes };
}
