// One unary call (an OTLP Export) on an HTTP/2 stream of the gRPC port (h2/session.js), read and answered here.
//
// grpc-js's server once ran these calls: its per-call machinery (interceptor chain, Metadata objects, a deadline
// timer, a message queue, a serializer and a status object per call) cost more server CPU than decoding and storing
// a 100-item request, and a unary Export needs none of it. The framing, compression and status rules followed are the
// gRPC over HTTP/2 protocol's, and the answers are the ones grpc-js gave (same headers, trailers and codes). Reading
// the message here also lets it take the Collector's zstd and snappy message compression, which grpc-js refuses.
import { CODES } from './h2/session.js';
import { status as CODE } from '@grpc/grpc-js';
import { decompress, DecompressError } from './decompress.js';
import { JOIN_AT_ONCE, Slicer, joinInSlices } from './slices.js';
import { grpcMessage } from '../otlp/text.js';
import { earnWindow } from './grpc-windows.js';
import { keptBuffer } from '../otlp/kept-bytes.js';

const { REFUSED_STREAM, CANCEL, NO_ERROR } = CODES;

/** Request headers that describe the call, not the caller: left out of the metadata, as grpc-js leaves them. */
const CALL_HEADERS = new Set(['grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'accept-encoding', 'te', 'content-type']);
/**
 * The message codecs a client may use: grpc-js's two, and the two more the Collector's gRPC receiver takes
 * (its exporters' `compression: zstd` and `snappy`), decoded as OTLP/HTTP bodies are, with the same limit.
 */
const MESSAGE_ENCODINGS = ['gzip', 'deflate', 'zstd', 'snappy'];
const ACCEPT_ENCODING = ['identity', ...MESSAGE_ENCODINGS].join(',');
/** grpc-timeout: at most 8 digits and a unit (gRPC over HTTP/2, "Requests"). */
const TIMEOUT = /^\d{1,8}[HMSmun]$/;
const PREFIX = 5;
/**
 * What an answer's HEADERS frames hold: shared between calls (Node copies them), and without the `date` header Node
 * adds by default, which gRPC does not use and the Collector does not send.
 */
const OK_HEADERS = Object.freeze({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': ACCEPT_ENCODING, 'grpc-encoding': 'identity' });
const OK_TRAILERS = Object.freeze({ 'grpc-status': '0', 'grpc-message': 'OK' });
const WITH_TRAILERS = Object.freeze({ waitForTrailers: true, sendDate: false });
const TRAILERS_ONLY = Object.freeze({ endStream: true, sendDate: false });

/**
 * The request's metadata as grpc-js's `Metadata.getMap()` gave it: the first value of each custom header,
 * binary (`-bin`) ones decoded from base64.
 * @param {import('./h2/hpack.js').HeaderObject} headers
 * @returns {Record<string, string|Buffer>}
 */
function metadataOf(headers) {
  /** @type {Record<string, string|Buffer>} */
  const map = {};
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* : */ || CALL_HEADERS.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    const first = Array.isArray(value) ? value[0] : value;
    map[name] = name.endsWith('-bin') ? Buffer.from(first.split(',')[0].trim(), 'base64') : first;
  }
  return map;
}

/**
 * The message after its prefix, in a buffer of its own: the store keeps the bytes of what it stores, and a view into
 * a larger buffer (the prefix's, a socket read's) would be copied again by the decoder to keep only what it needs.
 * A message kept as it is goes into kept-bytes.js's memory. A compressed one is dropped once it is inflated, and
 * memory there is freed only at a full collection, so it gets memory of its own, as an OTLP/HTTP body does.
 * @param {Buffer[]} chunks @param {number} length @param {boolean} compressed @param {string} kind the call's signal
 */
function messageOf(chunks, length, compressed, kind) {
  const message = compressed ? Buffer.allocUnsafeSlow(length) : keptBuffer(length, kind);
  let at = 0;
  for (const part of withoutPrefix(chunks)) at += part.copy(message, at);
  return message;
}

/** The message's pieces, after its 5-byte prefix. @param {Buffer[]} chunks */
function withoutPrefix(chunks) {
  const parts = [];
  let skip = PREFIX;
  for (const chunk of chunks) {
    const from = Math.min(skip, chunk.length);
    skip -= from;
    if (from < chunk.length) parts.push(chunk.subarray(from));
  }
  return parts;
}

export class UnaryCall {
  /**
   * Reads the call's one message and hands it to `onMessage`; a call that breaks the protocol or a limit is
   * answered here and reported to `onRefused` (code and message) instead.
   * @param {import('./h2/session.js').H2Stream} stream @param {import('./h2/hpack.js').HeaderObject} headers
   * @param {import('../otlp/signals.js').Signal} signal the signal whose Export method the path names
   * @param {import('./receive.js').Receiver} receiver its in-flight byte budget and request limit
   * @param {(call: UnaryCall, message: Buffer) => void} onMessage
   * @param {(call: UnaryCall, code: number, message: string) => void} onRefused
   */
  constructor(stream, headers, signal, receiver, onMessage, onRefused) {
    this.stream = stream;
    this.headers = headers;
    this.signal = signal;
    this.path = String(headers[':path']);
    this.encoding = String(headers['grpc-encoding'] ?? 'identity');
    this.metadata = metadataOf(headers);
    /** Bytes received on the wire, prefix included. */
    this.bytes = 0;
    this.answered = false;
    this.cancelled = false;
    /** @type {(() => void)|null} */
    this.onCancel = null;
    this.receiver = receiver;
    this.held = 0;
    /** @type {Buffer[]} */
    this.chunks = [];
    this.length = -1;
    this.onMessage = onMessage;
    this.onRefused = onRefused;

    // Listeners with `on`, not `once`: each of these events comes once, and `once` wraps every listener anew.
    stream.on('error', ignore);
    stream.on('close', () => this.closed());
    const timeout = headers['grpc-timeout'];
    if (timeout !== undefined && !TIMEOUT.test(String(timeout))) {
      this.refuse(CODE.INTERNAL, `Invalid grpc-timeout value "${timeout}"`);
      return;
    }
    stream.on('data', (/** @type {Buffer} */ chunk) => this.data(chunk));
    stream.on('end', () => {
      try {
        this.end();
      } catch (err) {
        this.failed(err);
      }
    });
  }

  /** @param {Buffer} chunk */
  data(chunk) {
    if (this.answered) return;
    this.bytes += chunk.length;
    this.chunks.push(chunk);
    if (this.length < 0 && this.bytes >= PREFIX) {
      const head = this.chunks[0].length >= PREFIX ? this.chunks[0] : Buffer.concat(this.chunks);
      this.length = head.readUInt32BE(1);
      if (this.length > this.receiver.maxRequestBytes) {
        this.refuse(CODE.RESOURCE_EXHAUSTED, `Received message larger than max (${this.length} vs. ${this.receiver.maxRequestBytes})`);
        return;
      }
    }
    // A message whose prefix declares more than a MiB takes room for all of it from its first chunk, as a body's
    // Content-Length does: while big messages fill the budget, a sender that reconnects to send one again is
    // refused at once, not after its first MiB.
    const whole = PREFIX + Math.max(0, this.length);
    const taken = this.receiver.reserveBody(this.bytes, this.held, whole);
    if (taken < 0) {
      this.refuseForRoom(this.receiver.busyPace(whole));
      return;
    }
    this.held += taken;
    if (this.length >= 0 && this.bytes > PREFIX + this.length) {
      this.refuse(CODE.UNIMPLEMENTED, `Received a second request message for unary method ${this.path}`);
    }
  }

  /**
   * Refuses a message the in-flight budget has no room for: the stream is reset with REFUSED_STREAM, which clients
   * retry, at `pace` when there is one. Meanwhile the stream is not read, so its client can send no more than the
   * stream's window.
   * @param {import('./pace.js').Pacer|null} pace
   */
  refuseForRoom(pace) {
    this.answered = true;
    this.chunks = [];
    this.receiver.release(this.held);
    this.held = 0;
    const stream = this.stream;
    if (!pace) {
      stream.close(REFUSED_STREAM);
      return;
    }
    stream.pause();
    // The wait is the server's: the client is not dropped as idle meanwhile.
    stream.setTimeout(0);
    // Past the pace's longest wait the stream is reset at once all the same: a reset costs no more than silence would.
    void pace.turn(stream).then(() => stream.destroyed || stream.close(REFUSED_STREAM));
  }

  end() {
    if (this.answered) return;
    if (this.bytes === 0) {
      this.refuse(CODE.UNIMPLEMENTED, `Received no request message for unary method ${this.path}`);
      return;
    }
    if (this.length < 0 || this.bytes < PREFIX + this.length) {
      this.refuse(CODE.INTERNAL, `the request message ends after ${Math.max(0, this.bytes - PREFIX)} of its ${Math.max(0, this.length)} bytes`);
      return;
    }
    // Everything has arrived: from here on, any wait is the server's (a delay or hang fault), not the client's.
    this.stream.setTimeout(0);
    const compressed = this.chunks[0][0] !== 0;
    const chunks = this.chunks;
    this.chunks = [];
    if (this.length <= JOIN_AT_ONCE) this.take(messageOf(chunks, this.length, compressed, this.signal.name), compressed);
    else this.joined(chunks, compressed).catch((err) => this.failed(err));
  }

  /**
   * Tens of MiB copied at once held every other client for as many milliseconds: a large message is joined in slices.
   * @param {Buffer[]} chunks @param {boolean} compressed
   */
  async joined(chunks, compressed) {
    let message;
    try {
      message = await joinInSlices(withoutPrefix(chunks), this.length, new Slicer(() => this.gone()));
    } catch (err) {
      if (this.gone()) return;
      throw err;
    }
    if (!this.answered) this.take(message, compressed);
  }

  /** @param {Buffer} message the whole message, without its prefix @param {boolean} compressed as its prefix flags it */
  take(message, compressed) {
    if (!compressed) {
      this.onMessage(this, message);
      return;
    }
    if (this.encoding === 'identity') {
      this.refuse(CODE.INTERNAL, 'the message is flagged compressed but the call has no grpc-encoding');
      return;
    }
    if (!MESSAGE_ENCODINGS.includes(this.encoding)) {
      this.refuse(CODE.UNIMPLEMENTED, `Received message compressed with unsupported encoding "${this.encoding}"`);
      return;
    }
    this.inflate(message).catch((err) => this.failed(err));
  }

  /** @param {Buffer} message */
  async inflate(message) {
    let plain;
    try {
      const room = this.receiver.roomFor(
        () => this.held,
        (n) => (this.held += n),
        () => !this.gone(),
      );
      plain = await decompress(message, this.encoding, this.receiver.maxRequestBytes, () => this.gone(), room);
    } catch (err) {
      if (!(err instanceof DecompressError)) throw err;
      // A client that left while its message waited or was decoded is journaled as cancelled when it closed.
      if (this.gone()) return;
      if (err.busy) {
        this.refuse(CODE.UNAVAILABLE, err.message);
        return;
      }
      // A client that left while its answer waited was journaled as cancelled when it closed.
      if (!(await this.pacedTurn(() => this.onRefused(this, CODE.RESOURCE_EXHAUSTED, err.message)))) return;
      // grpc-js's words where the output passed the limit; the codec's own where a frame, window or block count did.
      if (err.pastLimit) this.refuse(CODE.RESOURCE_EXHAUSTED, `Received message that decompresses to a size larger than ${this.receiver.maxRequestBytes}`);
      else if (err.tooLarge) this.refuse(CODE.RESOURCE_EXHAUSTED, err.message);
      else this.refuse(CODE.INTERNAL, `Failed to decompress message: ${err.message}`);
      return;
    }
    if (!this.gone()) this.onMessage(this, plain);
  }

  /**
   * A failure of otlp-mock's own while the message was read: answered INTERNAL, as the HTTP receiver answers 500,
   * rather than left as an unhandled rejection that ends the process.
   * @param {unknown} err
   */
  failed(err) {
    this.refuse(CODE.INTERNAL, `otlp-mock failed on this request: ${err instanceof Error ? err.message : String(err)}`);
  }

  /**
   * Waits for the turn of a refusal a client can loop on, answered at the pace of refused bodies; the message does
   * not hold the in-flight budget meanwhile. False when it is not to be answered: its client left, or its answer
   * would wait too long, and then the stream is closed unanswered, after `late` journals it.
   * @param {() => void} late @returns {Promise<boolean>}
   */
  async pacedTurn(late) {
    this.receiver.release(this.held);
    this.held = 0;
    const due = await this.receiver.bodyRefusals.turn(this.stream);
    if (this.gone()) return false;
    if (due) return true;
    this.answered = true;
    late();
    this.stream.close(CANCEL);
    return false;
  }

  /** @param {number} code @param {string} message */
  refuse(code, message) {
    if (this.answered) return;
    this.chunks = [];
    this.fail(code, message);
    // A client still sending is told to stop, after the answer (RST_STREAM NO_ERROR, RFC 9113 8.1, as grpc-go does):
    // else the rest of its message comes on, and the stream stays open until the idle timeout.
    if (!this.stream.readableEnded && !this.stream.destroyed) this.stream.close(NO_ERROR);
    this.onRefused(this, code, message);
  }

  closed() {
    this.receiver.release(this.held);
    this.held = 0;
    if (this.answered || this.cancelled) return;
    this.cancelled = true;
    this.onCancel?.();
  }

  /** Whether the client has gone (cancelled, reset, or its deadline passed and it said so): nothing can be sent. */
  gone() {
    if (!this.cancelled && (this.stream.destroyed || this.stream.closed)) this.closed();
    return this.cancelled;
  }

  /**
   * Answers OK with `response`, an Export*ServiceResponse; `details` goes in grpc-message.
   * @param {Uint8Array} response @param {string} details
   */
  ok(response, details) {
    if (this.answered || this.gone()) return;
    this.answered = true;
    const frame = Buffer.allocUnsafe(PREFIX + response.length);
    frame[0] = 0;
    frame.writeUInt32BE(response.length, 1);
    frame.set(response, PREFIX);
    const stream = this.stream;
    stream.respond(OK_HEADERS, WITH_TRAILERS);
    const trailers = details === 'OK' ? OK_TRAILERS : { 'grpc-status': '0', 'grpc-message': grpcMessage(details) };
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end(frame);
    earnWindow(stream.session);
  }

  /**
   * Answers with an error status and no message: a trailers-only response.
   * @param {number} code @param {string} details @param {Readonly<Record<string, string>>} [trailers]
   */
  fail(code, details, trailers) {
    if (this.answered || this.gone()) return;
    this.answered = true;
    this.stream.respond(
      { ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-status': String(code), 'grpc-message': grpcMessage(details), ...trailers },
      TRAILERS_ONLY,
    );
  }
}

function ignore() {
  // Every stream error is followed by 'close', which ends the call; there is nothing left to answer.
}
