// Writes canonical requests as OTLP/JSON text that any OTLP/HTTP JSON receiver (ours included) reads back
// to the same request.

/** JSON has no NaN or ±Infinity (JSON.stringify writes null); OTLP/JSON spells them as strings. @param {number} v */
export function jsonDouble(v) {
  return Number.isFinite(v) ? v : String(v);
}

/** @param {string} _key @param {unknown} value */
function nonFiniteAsString(_key, value) {
  return typeof value === 'number' ? jsonDouble(value) : value;
}

/** @param {any} request a canonical Export*ServiceRequest @returns {string} one line, no newline */
export function requestJson(request) {
  return JSON.stringify(request, nonFiniteAsString);
}
