// What telemetry text may do to a terminal: nothing. Both print modes write client-supplied strings (service and
// span names, attribute values, log bodies) to the operator's console, and these characters would drive it.

/**
 * C0 and C1 controls (ESC starts colour, cursor and OSC title sequences; C1 CSI and OSC do the same in one byte)
 * and the bidirectional controls that reorder what follows them.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it escapes
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** @param {string} c */
const unicodeEscape = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Telemetry text as it may reach a terminal: every control shown as a visible escape. @param {string} text */
export function visible(text) {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : unicodeEscape(c);
  });
}

/**
 * A line of JSON with every control written as a `\uXXXX` escape, which parses back to the same value.
 * JSON.stringify escapes C0 controls but writes DEL, C1 and the bidirectional controls as they are; in JSON text
 * they can stand only inside strings, where the escape means the same character. The line's own end stays.
 * @param {string} line
 */
export function terminalJson(line) {
  return line.replace(CONTROL, (c) => (c === '\n' ? c : unicodeEscape(c)));
}
