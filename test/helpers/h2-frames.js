// HTTP/2 written frame by frame (RFC 9113), for clients that break the protocol on purpose: the hostile-client tests
// and the soak's raw connections to the gRPC port.
import { encodeHeaders } from '../../server/transport/h2/hpack.js';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const TYPE = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 };
export const FLAG = { END_STREAM: 0x1, END_HEADERS: 0x4, PADDED: 0x8 };
export const TRACES_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** @param {number} type @param {number} flags @param {number} id @param {Buffer} [payload] */
export function frame(type, flags, id, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(id, 5);
  return Buffer.concat([head, payload]);
}

/** An empty SETTINGS frame, which follows the preface. */
export const SETTINGS_FRAME = frame(TYPE.SETTINGS, 0, 0);

/** The preface and an empty SETTINGS frame: what every client sends first. */
export const CLIENT_START = Buffer.concat([PREFACE, SETTINGS_FRAME]);

/** A gRPC call's request headers, HPACK-encoded. @param {string} [path] @param {string} [authority] */
export const requestBlock = (path = TRACES_EXPORT, authority = 'test') =>
  encodeHeaders({ ':method': 'POST', ':scheme': 'http', ':path': path, ':authority': authority, 'content-type': 'application/grpc', te: 'trailers' });
