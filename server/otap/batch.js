// One BatchArrowRecords → the OTLP protobuf request of its signal, with what the journal says of it.
import { PAYLOAD_TYPES } from './messages.js';
import { attributesByParent } from './attributes.js';
import { status as CODE } from '@grpc/grpc-js';
import { OtlpWriter, WriterFull } from './otlp-writer.js';

export class BatchError extends Error {
  /** @param {string} message @param {number} [code] the batch's status */
  constructor(message, code = CODE.INVALID_ARGUMENT) {
    super(message);
    this.code = code;
  }
}

/**
 * @param {import('./services.js').OtapService} service the stream's
 * @param {import('./messages.js').BatchArrowRecords} batch
 * @param {import('./arrow.js').ArrowState} state the stream's
 * @param {import('./arrow.js').Inflation} inflation how far its compressed buffers may expand; its limit bounds the
 *   request the batch makes too, as it bounds a decompressed request body
 * @returns {Promise<{ body: Buffer, payloadTypes: string[], arrowBytes: number }>}
 */
export async function otlpOf(service, batch, state, inflation) {
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
  const w = new OtlpWriter(inflation.limit);
  const envelope = { resource: attributesByParent(tables.get('RESOURCE_ATTRS')), scope: attributesByParent(tables.get('SCOPE_ATTRS')) };
  try {
    service.write(w, tables, envelope);
  } catch (err) {
    if (err instanceof WriterFull) throw new BatchError(`${err.message} (--max-request-bytes)`, CODE.RESOURCE_EXHAUSTED);
    throw err;
  }
  return { body: w.finish(), payloadTypes, arrowBytes };
}
