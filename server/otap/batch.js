// One BatchArrowRecords → the OTLP protobuf request of its signal, with what the journal says of it.
import { PAYLOAD_TYPES } from './messages.js';
import { attributesByParent } from './attributes.js';
import { OtlpWriter } from './otlp-writer.js';

export class BatchError extends Error {}

/**
 * @param {import('./services.js').OtapService} service the stream's
 * @param {import('./messages.js').BatchArrowRecords} batch
 * @param {import('./arrow.js').ArrowState} state the stream's
 * @returns {{ body: Buffer, payloadTypes: string[], arrowBytes: number }}
 */
export function otlpOf(service, batch, state) {
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
    tables.set(name, state.read(payload));
  }
  const w = new OtlpWriter();
  const envelope = { resource: attributesByParent(tables.get('RESOURCE_ATTRS')), scope: attributesByParent(tables.get('SCOPE_ATTRS')) };
  service.write(w, tables, envelope);
  return { body: w.finish(), payloadTypes, arrowBytes };
}
