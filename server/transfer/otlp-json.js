// Writes canonical requests as OTLP/JSON text that any OTLP/HTTP JSON receiver (ours included) reads back
// to the same request.

/**
 * JSON.stringify would write NaN and ±Infinity as null; OTLP/JSON spells them as strings.
 * @param {string} _key @param {unknown} value
 */
function nonFiniteAsString(_key, value) {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
}

/** @param {any} request a canonical Export*ServiceRequest @returns {string} one line, no newline */
export function requestJson(request) {
  return JSON.stringify(request, nonFiniteAsString);
}
