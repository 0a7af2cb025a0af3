// Text as each wire can carry it. A JavaScript string can hold what no wire can: a lone surrogate (half of a UTF-16
// pair) has no UTF-8 form, a grpc-message trailer carries printable ASCII only, and an HTTP field value no line
// breaks or controls. Whatever reaches a wire from a user or a client (fault messages, decoded data echoed in an
// error, an upstream's answer, forwarded headers) passes through here on its way out.

/** In a `u` pattern a well-formed pair is one code point, so only a lone surrogate is in category Cs. */
const LONE_SURROGATE = /\p{Cs}/gu;

/** The text with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it; proto3 strings and JSON text must be valid UTF-8. @param {string} text */
export function wellFormed(text) {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/** Bytes a grpc-message carries as they are: printable ASCII except `%` (gRPC over HTTP/2, "Percent-Encoded"). */
const GRPC_MESSAGE_PLAIN = /^[\x20-\x24\x26-\x7e]*$/;
const HEX = Array.from({ length: 256 }, (_, b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * A status message as the grpc-message trailer carries it: its UTF-8 bytes, each outside printable ASCII (and `%`)
 * percent-encoded. Every gRPC client decodes this form, grpc-js's decodeURI included, since no reserved URI
 * character is ever encoded. grpc-js's own encodeURI throws on a lone surrogate, and leaves `%` as it is.
 * @param {string} text
 */
export function grpcMessage(text) {
  if (GRPC_MESSAGE_PLAIN.test(text)) return text;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : HEX[byte];
  return out;
}

/**
 * Header values each wire carries. HTTP/1.1 field content (tab, printable ASCII, obs-text; the bytes Node's
 * http module sends and refuses the rest of) and gRPC's ASCII-Value (printable ASCII, which grpc-js checks before
 * it sends any metadata). Neither takes a line break, so no value can add a header of its own.
 */
const HEADER_VALUE = { http: /^[\t\x20-\x7e\x80-\xff]*$/, grpc: /^[\x20-\x7e]*$/ };

/** Whether a header value can be sent on the wire as it is. @param {string} value @param {'http'|'grpc'} wire */
export function headerValueFits(value, wire) {
  return HEADER_VALUE[wire].test(value);
}
