// The three OTAP stream services, each declared by the module that writes its signal's requests: OTAP defines these
// and no others, so a signal OTLP gains is not carried over OTAP until OTAP defines a service for it.
import { ARROW_TRACES } from './traces.js';
import { ARROW_LOGS } from './logs.js';
import { ARROW_METRICS } from './metrics.js';

/**
 * @typedef {{ signal: import('../otlp/signals.js').SignalName, method: string, types: readonly number[],
 *   itemRows: string|null,
 *   write: (w: import('./otlp-writer.js').OtlpWriter, tables: Map<string, any>,
 *     envelope: import('./envelope.js').EnvelopeAttributes) => import('./columns.js').Steps<void> }} OtapService
 *   `method`: service and method under the package; `types`: the payload types its stream may carry; `itemRows`: the
 *   payload each of whose rows is one stored item, if there is one (its request's items are counted otherwise);
 *   `write`: writes the request in steps
 */

/** @type {readonly OtapService[]} */
export const SERVICES = Object.freeze([ARROW_TRACES, ARROW_LOGS, ARROW_METRICS]);
