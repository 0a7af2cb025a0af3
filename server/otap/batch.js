// One BatchArrowRecords → the OTLP protobuf request of its signal, with what the journal says of it.
import { PAYLOAD_TYPES } from './messages.js';
import { attributesByParent } from './attributes.js';
import { status as CODE } from '@grpc/grpc-js';
import { OtlpWriter, WriterFull } from './otlp-writer.js';
import { SIGNALS } from '../otlp/signals.js';
import { tooManyItems } from '../transport/receive.js';

/**
 * A batch whose message is larger, or whose tables have more rows, is read and written in slices that take turns with
 * other work; a smaller one at once, in a few milliseconds (a row of a log record with a few attributes takes about
 * 15 µs to write).
 */
export const AT_ONCE_BYTES = 64 * 1024;
const AT_ONCE_ROWS = 1000;

export class BatchError extends Error {
  /**
   * @param {string} message @param {number} [code] the batch's status
   * @param {boolean} [paced] a refusal a client can loop on, answered at the pace of refused bodies
   */
  constructor(message, code = CODE.INVALID_ARGUMENT, paced = false) {
    super(message);
    this.code = code;
    this.paced = paced;
  }
}

/**
 * @param {import('./services.js').OtapService} service the stream's
 * @param {import('./messages.js').BatchArrowRecords} batch
 * @param {import('./arrow.js').ArrowState} state the stream's
 * @param {import('./arrow.js').Inflation} inflation how far its compressed buffers may expand; its limit bounds the
 *   request the batch makes too, as it bounds a decompressed request body
 * @param {number} most the items its signal's store keeps: a batch of more rows of items is refused before its
 *   request is written (a million empty log records, 0.7 s)
 * @returns {Promise<{ body: Buffer, payloadTypes: string[], arrowBytes: number }>}
 */
export async function otlpOf(service, batch, state, inflation, most) {
  /** @type {Map<string, any>} */
  const tables = new Map();
  const payloadTypes = [];
  let arrowBytes = 0;
  for (const payload of batch.payloads) {
    const name = PAYLOAD_TYPES[/** @type {keyof typeof PAYLOAD_TYPES} */ (payload.type)];
    if (!name || !service.types.includes(payload.type)) {
      throw new BatchError(`payload type ${name ?? payload.type} has no place in a stream of ${service.signal}`);
    }
    if (tables.has(name)) throw new BatchError(`the batch has two ${name} payloads`);
    arrowBytes += payload.record.length;
    payloadTypes.push(name);
    tables.set(name, await state.read(payload, inflation));
  }
  const items = service.itemRows === null ? 0 : (tables.get(service.itemRows)?.numRows ?? 0);
  if (items > most) throw new BatchError(tooManyItems(SIGNALS[service.signal], most), CODE.RESOURCE_EXHAUSTED, true);
  const w = new OtlpWriter(inflation.limit);
  let rows = 0;
  for (const table of tables.values()) rows += table.numRows;
  const inSlices = inflation.inSlices || rows > AT_ONCE_ROWS;
  try {
    const steps = requestSteps(service, w, tables);
    while (!steps.next().done) if (inSlices) await inflation.turn();
  } catch (err) {
    if (err instanceof WriterFull) throw new BatchError(`${err.message} (--max-request-bytes)`, CODE.RESOURCE_EXHAUSTED);
    throw err;
  }
  return { body: w.finish(), payloadTypes, arrowBytes };
}

/**
 * Writes a batch's request from its tables, a few rows a step.
 * @param {import('./services.js').OtapService} service @param {OtlpWriter} w @param {Map<string, any>} tables
 * @returns {import('./columns.js').Steps<void>}
 */
function* requestSteps(service, w, tables) {
  const resource = yield* attributesByParent(tables.get('RESOURCE_ATTRS'));
  const scope = yield* attributesByParent(tables.get('SCOPE_ATTRS'));
  yield* service.write(w, tables, { resource, scope });
}
