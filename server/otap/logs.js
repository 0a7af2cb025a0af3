// LOGS and LOG_ATTRS → ExportLogsServiceRequest. A log record names its attributes by `id`, a difference from the
// previous record's id; its body is a struct of typed columns, as an attribute's value is.
import { attributesByParent, DeltaIds } from './attributes.js';
import { column, nanos, struct } from './columns.js';
import { valueAt, valueColumns } from './any-value.js';
import { writeEnvelopes } from './envelope.js';

/**
 * @param {import('./otlp-writer.js').OtlpWriter} w
 * @param {Map<string, any>} tables record batches by payload type name
 * @param {import('./envelope.js').EnvelopeAttributes} envelope
 * @returns {import('./columns.js').Steps<void>}
 */
export function* writeLogs(w, tables, envelope) {
  const logs = tables.get('LOGS');
  if (!logs) return;
  const attrs = yield* attributesByParent(tables.get('LOG_ATTRS'));
  const id = column(logs, 'id');
  const time = column(logs, 'time_unix_nano');
  const observed = column(logs, 'observed_time_unix_nano');
  const traceId = column(logs, 'trace_id');
  const spanId = column(logs, 'span_id');
  const severityNumber = column(logs, 'severity_number');
  const severityText = column(logs, 'severity_text');
  const eventName = column(logs, 'event_name');
  const dropped = column(logs, 'dropped_attributes_count');
  const flags = column(logs, 'flags');
  const bodyStruct = struct(logs, 'body');
  const body = valueColumns(bodyStruct);
  const ids = new DeltaIds();

  yield* writeEnvelopes(w, logs, envelope, 2, (row) => {
    const own = ids.next(id(row));
    w.fixed64(1, nanos(time(row)));
    w.uint(2, severityNumber(row) ?? 0);
    w.string(3, severityText(row) ?? '');
    if (bodyStruct && bodyStruct.isValid(row)) {
      const { value } = valueAt(body, row);
      if (value.t !== 'empty') w.anyValue(5, value);
    }
    if (own !== null) w.attributes(6, attrs.get(own));
    w.uint(7, dropped(row) ?? 0);
    w.fixed32(8, flags(row) ?? 0);
    w.id(9, traceId(row));
    w.id(10, spanId(row));
    w.fixed64(11, nanos(observed(row)));
    w.string(12, eventName(row) ?? '');
  });
}

/** @type {import('./services.js').OtapService} */
export const ARROW_LOGS = Object.freeze({
  signal: 'logs',
  method: 'ArrowLogsService/ArrowLogs',
  // RESOURCE_ATTRS, SCOPE_ATTRS, LOGS, LOG_ATTRS
  types: Object.freeze([1, 2, 30, 31]),
  itemRows: 'LOGS',
  write: writeLogs,
});
