// The server side of an HTTP/2 connection (RFC 9113) on the gRPC port, written for what gRPC clients do: many short
// streams, each a HEADERS block, a message in DATA frames and an answer of headers, a message and trailers.
//
// A server that only read each message and answered OK cost 153-220 us of CPU a call on Node's own HTTP/2 server under
// versus-collector.sh's load (its header objects, its duplex streams and their events), 59-66 us a logs or metrics call
// and 89-123 us a traces call on this one: Node's had cost more than otlp-mock's decoding and storing of a 100-item
// request. A stream here is the part of Node's ServerHttp2Stream that the gRPC receivers use (grpc-unary.js,
// otap/stream.js): its events, respond, write, end, trailers, pause and resume, close with a code, and an idle timeout.
import { EventEmitter } from 'node:events';
import { CompressionError, HpackDecoder, encodeHeaders } from './hpack.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;

const DATA = 0x0;
const HEADERS = 0x1;
const PRIORITY = 0x2;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;

const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;

/** Error codes (RFC 9113, 7). */
export const CODES = Object.freeze({
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
});

const SETTING = { HEADER_TABLE_SIZE: 0x1, ENABLE_PUSH: 0x2, MAX_CONCURRENT_STREAMS: 0x3, INITIAL_WINDOW_SIZE: 0x4, MAX_FRAME_SIZE: 0x5 };
const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 2 ** 31 - 1;
/** The largest frame either side sends: the protocol's default, which the server never raises. */
const MAX_FRAME = 16_384;
/** What `read` joins of a chunk to a frame the one before began: enough to finish any frame, or the preface and one. */
const JOIN_AT_MOST = PREFACE.length + FRAME_HEADER + MAX_FRAME;
const TABLE_SIZE = 4096;
/** Header octets a stream may send, as SETTINGS_MAX_HEADER_LIST_SIZE counts them: Node's default for its server. */
const MAX_HEADER_LIST = 64 * 1024;
/** A header block's octets on the wire, HEADERS and CONTINUATION frames together: past this the connection is cut. */
const MAX_HEADER_BLOCK = 2 * MAX_HEADER_LIST;
/**
 * A client that goes on sending calls (or PINGs, at under the limit below) while it reads none of the answers is held:
 * its socket is not read while this much of the server's frames wait unsent.
 */
const MAX_UNSENT = 1024 * 1024;
/**
 * Streams a client may reset in a second: a gRPC client cancels the calls whose deadline passed (at most its 100 open
 * streams at once), a rapid-reset attack (CVE-2023-44487) thousands, each costing the server a stream opened for
 * nothing. Past this the connection is cut (ENHANCE_YOUR_CALM). In `npm run soak`, 20 connections allowed 1,000 a
 * second each took the server's normal ingest to 0.88 of what it was without them (five rounds: 0.76-0.98).
 */
const MAX_RESETS_PER_SECOND = 200;
/**
 * PING and SETTINGS frames a client may send in a second, each asking for an answer: gRPC clients send a few (keepalive,
 * a bandwidth probe), a flood tens of thousands, each an answer for the server to make and send. Past this the
 * connection is cut (ENHANCE_YOUR_CALM). A PING after a call was opened or answered is not counted: grpc-go's clients
 * probe bandwidth with a PING after reading an answer, over 1,000 a second under versus-collector.sh's load, and its
 * servers count only PINGs with nothing sent between them ("ping strikes").
 */
const MAX_ASKS_PER_SECOND = 1000;
/** How long a connection may be silent before TCP asks whether its client is still there. */
const KEEPALIVE_MS = 60_000;
/** How long a connection the server ended for an error may stay half-open. */
const CLOSE_GRACE_MS = 1000;

/**
 * @typedef {import('./hpack.js').HeaderObject} HeaderObject
 * @typedef {{ maxConcurrentStreams: number, initialWindowSize: number, connectionWindow: number, idleTimeoutMs: number }} SessionOptions
 *   `idleTimeoutMs`: how long a connection may take to send its preface and SETTINGS
 */

/** @param {number} length @param {number} type @param {number} flags @param {number} id @param {number} [extra] */
function frame(length, type, flags, id, extra = 0) {
  const buf = Buffer.allocUnsafe(FRAME_HEADER + extra);
  buf[0] = (length >>> 16) & 0xff;
  buf[1] = (length >>> 8) & 0xff;
  buf[2] = length & 0xff;
  buf[3] = type;
  buf[4] = flags;
  buf.writeUInt32BE(id, 5);
  return buf;
}

/** @param {number} id @param {number} increment */
function windowUpdate(id, increment) {
  const buf = frame(4, WINDOW_UPDATE, 0, id, 4);
  buf.writeUInt32BE(increment, FRAME_HEADER);
  return buf;
}

/** A connection error: the connection ends with a GOAWAY carrying `code`. */
class ConnectionError extends Error {
  /** @param {number} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Encoded header blocks of the frozen header objects a server sends again and again (OK_HEADERS, OK_TRAILERS). */
const blocks = new WeakMap();
/** @param {Record<string, string|number>} headers */
function blockOf(headers) {
  if (!Object.isFrozen(headers)) return encodeHeaders(headers);
  let block = blocks.get(headers);
  if (!block) {
    block = encodeHeaders(headers);
    blocks.set(headers, block);
  }
  return block;
}

/** No 'timeout' listener is needed for `setTimeout(0)`. */
function noop() {}

export class H2Stream extends EventEmitter {
  /** @param {H2Session} session @param {number} id @param {HeaderObject} headers */
  constructor(session, id, headers) {
    super();
    this.session = session;
    this.id = id;
    this.headers = headers;
    /** What the client may still send before the server returns window. */
    this.recvWindow = session.localWindow;
    /** Octets read (or, when paused, held) whose window is not yet returned. */
    this.consumed = 0;
    /** What the server may still send. */
    this.sendWindow = session.peerWindow;
    this.paused = false;
    /** @type {Buffer[]} DATA read while paused, and whether the client's END_STREAM came after it */
    this.held = [];
    this.heldEnd = false;
    this.endReceived = false;
    this.readableEnded = false;
    this.headersSent = false;
    this.waitForTrailers = false;
    /** Whether the server has ended its side, or asked to (end() with DATA still waiting for window). */
    this.ending = false;
    this.endSent = false;
    /** @type {Buffer[]} DATA waiting for window */
    this.unsent = [];
    this.unsentBytes = 0;
    this.blocked = false;
    this.closed = false;
    this.destroyed = false;
    this.rstCode = 0;
    this.timeoutMs = 0;
    /** @type {NodeJS.Timeout|null} */
    this.timer = null;
    this.lastActive = 0;
  }

  /** Node's `stream.setTimeout`: 'timeout' once nothing was read or written for `ms`; 0 turns it off. */
  setTimeout(/** @type {number} */ ms, /** @type {() => void} */ onTimeout = noop) {
    this.timeoutMs = ms;
    if (onTimeout !== noop) this.on('timeout', onTimeout);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (ms > 0 && !this.closed) {
      this.lastActive = Date.now();
      this.timer = setTimeout(() => this.checkIdle(), ms);
      this.timer.unref();
    }
    return this;
  }

  checkIdle() {
    this.timer = null;
    if (this.closed || this.timeoutMs === 0) return;
    const idle = Date.now() - this.lastActive;
    if (idle >= this.timeoutMs) {
      this.emit('timeout');
      return;
    }
    this.timer = setTimeout(() => this.checkIdle(), this.timeoutMs - idle);
    this.timer.unref();
  }

  active() {
    if (this.timeoutMs > 0) this.lastActive = Date.now();
  }

  /** @param {Buffer} chunk a DATA frame's data, read as it arrived */
  received(chunk) {
    this.active();
    if (this.paused || this.held.length > 0) {
      this.held.push(chunk);
      return;
    }
    this.consume(chunk.length);
    if (chunk.length > 0) this.emit('data', chunk);
  }

  /** The client's END_STREAM: 'end' once all it sent before is read. */
  receivedEnd() {
    this.endReceived = true;
    if (this.paused || this.held.length > 0) this.heldEnd = true;
    else this.ended();
  }

  ended() {
    if (this.readableEnded) return;
    this.readableEnded = true;
    this.emit('end');
    this.closeIfDone();
  }

  /** Returns window for `n` octets read once half the window is used, as Node's server does. @param {number} n */
  consume(n) {
    this.consumed += n;
    if (this.consumed >= this.session.localWindow / 2 && !this.endReceived && !this.closed) {
      this.session.queue(windowUpdate(this.id, this.consumed));
      this.recvWindow += this.consumed;
      this.consumed = 0;
    }
  }

  pause() {
    this.paused = true;
    return this;
  }

  resume() {
    if (!this.paused) return this;
    this.paused = false;
    if (this.held.length > 0 || this.heldEnd) process.nextTick(() => this.flushHeld());
    return this;
  }

  flushHeld() {
    while (!this.paused && this.held.length > 0 && !this.closed) {
      const chunk = /** @type {Buffer} */ (this.held.shift());
      this.consume(chunk.length);
      if (chunk.length > 0) this.emit('data', chunk);
    }
    if (!this.paused && this.held.length === 0 && this.heldEnd) {
      this.heldEnd = false;
      this.ended();
    }
    this.session.flush();
  }

  /**
   * @param {Record<string, string|number>} headers
   * @param {{ endStream?: boolean, waitForTrailers?: boolean }} [options]
   */
  respond(headers, options = {}) {
    if (this.closed || this.headersSent) return;
    this.headersSent = true;
    this.waitForTrailers = options.waitForTrailers === true;
    const endStream = options.endStream === true;
    this.session.sendHeaders(this.id, blockOf(headers), endStream);
    if (endStream) this.sentEnd();
  }

  /** @param {Uint8Array} chunk @returns {boolean} false when it waits for window: 'drain' comes when it is sent */
  write(chunk) {
    if (this.closed || this.ending) return false;
    this.active();
    if (chunk.length > 0) {
      this.unsent.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.unsentBytes += chunk.length;
    }
    this.sendData();
    this.blocked = this.unsentBytes > 0;
    return !this.blocked;
  }

  /** @param {Uint8Array} [chunk] */
  end(chunk) {
    if (this.closed || this.ending) return;
    if (chunk) this.write(chunk);
    this.ending = true;
    this.sendData();
  }

  /** @param {Record<string, string|number>} trailers */
  sendTrailers(trailers) {
    if (this.closed || this.endSent) return;
    this.session.sendHeaders(this.id, blockOf(trailers), true);
    this.sentEnd();
  }

  /** Sends what window allows; once all is sent after end(), the trailers or an empty DATA with END_STREAM. */
  sendData() {
    const session = this.session;
    // DATA before any headers gets the default ones first, as Node's streams do.
    if (!this.headersSent && (this.unsentBytes > 0 || this.ending)) this.respond({ ':status': 200 });
    while (this.unsentBytes > 0) {
      const room = Math.min(this.sendWindow, session.sendWindow, session.peerMaxFrame);
      if (room <= 0) return;
      let chunk = this.unsent[0];
      if (chunk.length > room) {
        this.unsent[0] = chunk.subarray(room);
        chunk = chunk.subarray(0, room);
      } else this.unsent.shift();
      this.unsentBytes -= chunk.length;
      this.sendWindow -= chunk.length;
      session.sendWindow -= chunk.length;
      session.queue(frame(chunk.length, DATA, 0, this.id));
      session.queue(chunk);
    }
    if (this.blocked) {
      this.blocked = false;
      process.nextTick(() => this.emit('drain'));
    }
    if (!this.ending || this.endSent) return;
    if (this.waitForTrailers) {
      this.waitForTrailers = false;
      this.emit('wantTrailers');
      if (this.endSent) return;
      // No trailers were sent: the stream ends with an empty DATA frame, as Node's does.
    }
    session.queue(frame(0, DATA, END_STREAM, this.id));
    this.sentEnd();
  }

  sentEnd() {
    this.endSent = true;
    this.ending = true;
    this.unsent = [];
    this.unsentBytes = 0;
    this.closeIfDone();
  }

  closeIfDone() {
    if (this.endSent && this.endReceived && this.held.length === 0) this.session.closeStream(this, 0, false);
  }

  /** Node's `stream.close(code)`: resets the stream (RST_STREAM with `code`); no-op once closed. @param {number} [code] */
  close(code = CODES.NO_ERROR) {
    if (this.closed) return;
    this.session.closeStream(this, code, true);
  }
}

export class H2Session extends EventEmitter {
  /** @param {import('node:net').Socket} socket @param {SessionOptions} options */
  constructor(socket, options) {
    super();
    this.socket = socket;
    this.maxConcurrentStreams = options.maxConcurrentStreams;
    /**
     * The stream window the server's INITIAL_WINDOW_SIZE gives the client, from when it is sent: it is only ever
     * raised, and a client may use a raised window before its acknowledgement arrives.
     */
    this.localWindow = options.initialWindowSize;
    this.connectionWindow = options.connectionWindow;
    /** What the client may still send on the connection, and what it sent since window was last returned. */
    this.recvWindow = DEFAULT_WINDOW;
    this.recvUnacked = 0;
    /** The client's settings: its streams' window and largest frame. */
    this.peerWindow = DEFAULT_WINDOW;
    this.peerMaxFrame = MAX_FRAME;
    this.sendWindow = DEFAULT_WINDOW;
    this.decoder = new HpackDecoder(TABLE_SIZE);
    /** @type {Map<number, H2Stream>} */
    this.streams = new Map();
    this.lastStreamId = 0;
    /** @type {Buffer|null} input not yet a whole frame */
    this.rest = null;
    this.prefaceSeen = false;
    this.settingsSeen = false;
    /** @type {Buffer[]|null} a header block under way: HEADERS, then CONTINUATION frames */
    this.blockParts = null;
    this.blockBytes = 0;
    this.blockStream = 0;
    this.blockFlags = 0;
    /** @type {Buffer[]} */
    this.out = [];
    this.flushQueued = false;
    this.goawaySent = false;
    this.peerGoaway = false;
    this.destroyed = false;
    this.closed = false;
    this.held = false;
    this.resets = new RateCount(MAX_RESETS_PER_SECOND);
    this.asks = new RateCount(MAX_ASKS_PER_SECOND);
    /** Whether a stream was opened or answered since the last PING: then the next PING is not counted. */
    this.callSincePing = false;

    socket.setNoDelay(true);
    // The server sends no PINGs of its own (nor did grpc-js's server by default): TCP's keepalive finds a client that
    // vanished without closing, whose connection would otherwise be kept for ever.
    socket.setKeepAlive(true, KEEPALIVE_MS);
    // A connection that never starts HTTP/2 holds a socket for nothing; once it has, an idle connection is the
    // client's to keep, as gRPC clients keep theirs between exports.
    if (options.idleTimeoutMs > 0) socket.setTimeout(options.idleTimeoutMs, () => this.settingsSeen || this.destroy());
    this.queue(this.settingsFrame({ [SETTING.MAX_CONCURRENT_STREAMS]: this.maxConcurrentStreams, [SETTING.INITIAL_WINDOW_SIZE]: options.initialWindowSize }));
    if (this.connectionWindow > DEFAULT_WINDOW) {
      this.queue(windowUpdate(0, this.connectionWindow - DEFAULT_WINDOW));
      this.recvWindow = this.connectionWindow;
    }
    this.flush();
    socket.on('data', (chunk) => this.read(chunk));
    socket.on('error', noop);
    socket.on('close', () => this.gone());
    socket.on('drain', () => this.drained());
  }

  /**
   * Node's `session.settings`, for the one setting the server changes: its streams' window, only ever raised.
   * @param {{ initialWindowSize?: number }} settings
   */
  settings(settings) {
    const window = settings.initialWindowSize;
    if (this.destroyed || window === undefined || window <= this.localWindow) return;
    this.queue(this.settingsFrame({ [SETTING.INITIAL_WINDOW_SIZE]: window }));
    const delta = window - this.localWindow;
    this.localWindow = window;
    for (const stream of this.streams.values()) stream.recvWindow += delta;
  }

  /** @param {Record<number, number>} values */
  settingsFrame(values) {
    const ids = Object.keys(values);
    const buf = frame(6 * ids.length, SETTINGS, 0, 0, 6 * ids.length);
    let at = FRAME_HEADER;
    for (const id of ids) {
      buf.writeUInt16BE(Number(id), at);
      buf.writeUInt32BE(values[Number(id)], at + 2);
      at += 6;
    }
    return buf;
  }

  /** @param {Buffer} buf */
  queue(buf) {
    this.out.push(buf);
    if (!this.flushQueued) {
      this.flushQueued = true;
      process.nextTick(flushSession, this);
    }
  }

  flush() {
    this.flushQueued = false;
    if (this.out.length === 0 || this.destroyed) {
      this.out = [];
      return;
    }
    const out = this.out.length === 1 ? this.out[0] : Buffer.concat(this.out);
    this.out = [];
    this.socket.write(out);
    if (!this.held && this.socket.writableLength > MAX_UNSENT) {
      this.held = true;
      this.socket.pause();
    }
  }

  drained() {
    if (!this.held) return;
    this.held = false;
    if (!this.destroyed) this.socket.resume();
  }

  /** @param {number} id @param {Buffer} block @param {boolean} endStream */
  sendHeaders(id, block, endStream) {
    this.callSincePing = true;
    const flags = endStream ? END_STREAM : 0;
    if (block.length <= this.peerMaxFrame) {
      this.queue(frame(block.length, HEADERS, flags | END_HEADERS, id));
      this.queue(block);
      return;
    }
    for (let at = 0; at < block.length; at += this.peerMaxFrame) {
      const part = block.subarray(at, at + this.peerMaxFrame);
      const last = at + this.peerMaxFrame >= block.length;
      this.queue(frame(part.length, at === 0 ? HEADERS : CONTINUATION, (at === 0 ? flags : 0) | (last ? END_HEADERS : 0), id));
      this.queue(part);
    }
  }

  /** @param {Buffer} chunk */
  read(chunk) {
    if (this.destroyed) return;
    let buf = chunk;
    let at;
    const rest = this.rest;
    this.rest = null;
    if (rest) {
      // Only what finishes the frame begun in `rest` is joined to it; the rest of the chunk is read where it lies.
      // Joining whole chunks copied everything a busy connection sent once more, into a fresh buffer each read: twenty
      // connections sending stalled messages held the loop 60-100 ms a turn, most of it allocating those buffers.
      const joined = Buffer.concat([rest, chunk.subarray(0, JOIN_AT_MOST)]);
      at = this.parse(joined, 0);
      if (chunk.length > JOIN_AT_MOST) at = this.parse(chunk, at - rest.length);
      else buf = joined;
    } else {
      at = this.parse(chunk, 0);
    }
    if (at < 0) return;
    if (at < buf.length && !this.destroyed) this.rest = at === 0 ? buf : buf.subarray(at);
    if (this.rest && this.rest.length > FRAME_HEADER + MAX_FRAME) this.fail(CODES.FRAME_SIZE_ERROR);
    this.flush();
  }

  /**
   * Reads the preface and every whole frame of `buf` from `at`.
   * @param {Buffer} buf @param {number} at
   * @returns {number} where the first frame not yet whole begins, or -1 once the connection has failed
   */
  parse(buf, at) {
    if (at < 0) return at;
    try {
      if (!this.prefaceSeen) {
        const have = Math.min(buf.length, PREFACE.length);
        if (buf.compare(PREFACE, 0, have, 0, have) !== 0) {
          this.destroy();
          return -1;
        }
        if (buf.length < PREFACE.length) return 0;
        this.prefaceSeen = true;
        at = PREFACE.length;
      }
      while (buf.length - at >= FRAME_HEADER && !this.destroyed) {
        const length = (buf[at] << 16) | (buf[at + 1] << 8) | buf[at + 2];
        if (length > MAX_FRAME) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, `a frame of ${length} octets, past the ${MAX_FRAME} allowed`);
        if (buf.length - at < FRAME_HEADER + length) break;
        const type = buf[at + 3];
        const flags = buf[at + 4];
        const id = buf.readUInt32BE(at + 5) & 0x7fffffff;
        const start = at + FRAME_HEADER;
        at = start + length;
        this.frame(type, flags, id, buf, start, at);
      }
    } catch (err) {
      // A failure of otlp-mock's own ends this connection, not the process and every other client's.
      if (!(err instanceof ConnectionError)) process.emitWarning(`an HTTP/2 connection on the gRPC port failed: ${err instanceof Error ? err.stack : String(err)}`);
      this.fail(err instanceof ConnectionError ? err.code : CODES.INTERNAL_ERROR);
      return -1;
    }
    return at;
  }

  /** @param {number} type @param {number} flags @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  frame(type, flags, id, buf, start, end) {
    if (!this.settingsSeen && type !== SETTINGS) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
    if (this.blockParts !== null && (type !== CONTINUATION || id !== this.blockStream)) {
      throw new ConnectionError(CODES.PROTOCOL_ERROR, 'a frame inside a header block');
    }
    switch (type) {
      case DATA:
        this.data(flags, id, buf, start, end);
        break;
      case HEADERS:
        this.headersFrame(flags, id, buf, start, end);
        break;
      case CONTINUATION:
        if (this.blockParts === null) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
        this.blockPart(buf.subarray(start, end));
        if (flags & END_HEADERS) this.blockDone();
        break;
      case PRIORITY:
        if (id === 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        if (end - start !== 5) this.reset(id, CODES.FRAME_SIZE_ERROR);
        break;
      case RST_STREAM:
        this.rstStream(id, buf, start, end);
        break;
      case SETTINGS:
        this.settingsReceived(flags, id, buf, start, end);
        break;
      case PUSH_PROMISE:
        throw new ConnectionError(CODES.PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      case PING:
        if (id !== 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'PING on a stream');
        if (end - start !== 8) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'PING of other than 8 octets');
        if (!(flags & ACK)) {
          if (!this.callSincePing && this.asks.over()) throw new ConnectionError(CODES.ENHANCE_YOUR_CALM, 'PING frames faster than the limit');
          this.callSincePing = false;
          const pong = frame(8, PING, ACK, 0, 8);
          buf.copy(pong, FRAME_HEADER, start, end);
          this.queue(pong);
        }
        break;
      case GOAWAY:
        if (id !== 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'GOAWAY on a stream');
        this.peerGoaway = true;
        if (this.streams.size === 0) this.end();
        break;
      case WINDOW_UPDATE:
        this.windowUpdate(id, buf, start, end);
        break;
      default:
      // Frames of unknown types are ignored (RFC 9113, 4.1).
    }
  }

  /** @param {number} flags @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  data(flags, id, buf, start, end) {
    if (id === 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'DATA on stream 0');
    const length = end - start;
    this.recvWindow -= length;
    if (this.recvWindow < 0) throw new ConnectionError(CODES.FLOW_CONTROL_ERROR, 'DATA past the connection window');
    this.recvUnacked += length;
    if (this.recvUnacked >= this.connectionWindow / 2) {
      this.queue(windowUpdate(0, this.recvUnacked));
      this.recvWindow += this.recvUnacked;
      this.recvUnacked = 0;
    }
    if (id > this.lastStreamId) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'DATA on a stream not opened');
    const stream = this.streams.get(id);
    if (!stream || stream.endReceived) {
      // A stream the server reset may still have DATA in flight; the window it took is returned above.
      if (!stream) return;
      this.reset(id, CODES.STREAM_CLOSED);
      return;
    }
    stream.recvWindow -= length;
    if (stream.recvWindow < 0) {
      this.closeStream(stream, CODES.FLOW_CONTROL_ERROR, true);
      return;
    }
    let from = start;
    let to = end;
    if (flags & PADDED) {
      if (length < 1 || buf[start] >= length) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'padding past the end of a DATA frame');
      to -= buf[start];
      from++;
      // The padding counts against the window but is never read: its window is returned as if read.
      stream.consume(length - (to - from));
    }
    stream.received(buf.subarray(from, to));
    if (flags & END_STREAM) stream.receivedEnd();
  }

  /** @param {number} flags @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  headersFrame(flags, id, buf, start, end) {
    if (id === 0 || id % 2 === 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, `HEADERS on stream ${id}`);
    let from = start;
    let to = end;
    if (flags & PADDED) {
      if (end - start < 1 || buf[start] >= end - start) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'padding past the end of a HEADERS frame');
      to -= buf[start];
      from++;
    }
    if (flags & PRIORITY_FLAG) from += 5;
    if (from > to) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'a HEADERS frame shorter than its priority fields');
    this.blockStream = id;
    this.blockFlags = flags;
    this.blockParts = [];
    this.blockBytes = 0;
    this.blockPart(buf.subarray(from, to));
    if (flags & END_HEADERS) this.blockDone();
  }

  /** @param {Buffer} part */
  blockPart(part) {
    this.blockBytes += part.length;
    if (this.blockBytes > MAX_HEADER_BLOCK) throw new ConnectionError(CODES.ENHANCE_YOUR_CALM, 'a header block past its limit');
    /** @type {Buffer[]} */ (this.blockParts).push(part);
  }

  blockDone() {
    const parts = /** @type {Buffer[]} */ (this.blockParts);
    this.blockParts = null;
    const block = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    const id = this.blockStream;
    let headers;
    try {
      headers = this.decoder.decode(block, 0, block.length, MAX_HEADER_LIST);
    } catch (err) {
      if (err instanceof CompressionError) throw new ConnectionError(CODES.COMPRESSION_ERROR, err.message);
      throw err;
    }
    const endStream = (this.blockFlags & END_STREAM) !== 0;
    const existing = this.streams.get(id);
    if (existing) {
      // Trailers: they end the stream, and nothing in them is read.
      if (!endStream || existing.endReceived) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'a second header block that does not end its stream');
      existing.receivedEnd();
      return;
    }
    if (id <= this.lastStreamId) throw new ConnectionError(CODES.STREAM_CLOSED, `HEADERS on closed stream ${id}`);
    this.lastStreamId = id;
    if (this.goawaySent) return;
    if (this.streams.size >= this.maxConcurrentStreams) {
      this.reset(id, CODES.REFUSED_STREAM);
      return;
    }
    if (this.decoder.listSize > MAX_HEADER_LIST) {
      this.answerAndReset(id, { ':status': 431 });
      return;
    }
    const stream = new H2Stream(this, id, headers);
    this.streams.set(id, stream);
    this.callSincePing = true;
    this.emit('stream', stream, headers);
    if (endStream && !stream.closed) stream.receivedEnd();
  }

  /** Answers a stream the server will not read with `headers`, then resets it. @param {number} id @param {Record<string, string|number>} headers */
  answerAndReset(id, headers) {
    this.sendHeaders(id, encodeHeaders(headers), true);
    this.reset(id, CODES.NO_ERROR);
  }

  /** @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  rstStream(id, buf, start, end) {
    if (id === 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    if (end - start !== 4) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'RST_STREAM of other than 4 octets');
    if (id > this.lastStreamId) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'RST_STREAM on a stream not opened');
    if (this.resets.over()) throw new ConnectionError(CODES.ENHANCE_YOUR_CALM, 'streams reset faster than the limit');
    const stream = this.streams.get(id);
    if (stream) this.closeStream(stream, buf.readUInt32BE(start), false);
  }

  /** @param {number} flags @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  settingsReceived(flags, id, buf, start, end) {
    if (id !== 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & ACK) {
      if (end !== start) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'a SETTINGS acknowledgement with settings');
      return;
    }
    if ((end - start) % 6 !== 0) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'SETTINGS of a length not a multiple of 6');
    if (this.asks.over()) throw new ConnectionError(CODES.ENHANCE_YOUR_CALM, 'SETTINGS frames faster than the limit');
    if (!this.settingsSeen) {
      this.settingsSeen = true;
      this.socket.setTimeout(0);
    }
    for (let at = start; at < end; at += 6) {
      const key = buf.readUInt16BE(at);
      const value = buf.readUInt32BE(at + 2);
      if (key === SETTING.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(CODES.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE past 2^31-1');
        const delta = value - this.peerWindow;
        this.peerWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW) throw new ConnectionError(CODES.FLOW_CONTROL_ERROR, 'a stream window past 2^31-1');
        }
      } else if (key === SETTING.MAX_FRAME_SIZE) {
        if (value < MAX_FRAME || value > 0xffffff) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
        this.peerMaxFrame = value;
      } else if (key === SETTING.ENABLE_PUSH && value > 1) {
        throw new ConnectionError(CODES.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH other than 0 or 1');
      }
    }
    this.queue(frame(0, SETTINGS, ACK, 0));
    for (const stream of this.streams.values()) stream.sendData();
  }

  /** @param {number} id @param {Buffer} buf @param {number} start @param {number} end */
  windowUpdate(id, buf, start, end) {
    if (end - start !== 4) throw new ConnectionError(CODES.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of other than 4 octets');
    const increment = buf.readUInt32BE(start) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW) throw new ConnectionError(CODES.FLOW_CONTROL_ERROR, 'the connection window past 2^31-1');
      for (const stream of this.streams.values()) if (stream.unsentBytes > 0 || stream.ending) stream.sendData();
      return;
    }
    const stream = this.streams.get(id);
    if (!stream) {
      if (id > this.lastStreamId) throw new ConnectionError(CODES.PROTOCOL_ERROR, 'WINDOW_UPDATE on a stream not opened');
      return;
    }
    if (increment === 0) {
      this.closeStream(stream, CODES.PROTOCOL_ERROR, true);
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) {
      this.closeStream(stream, CODES.FLOW_CONTROL_ERROR, true);
      return;
    }
    stream.sendData();
  }

  /** @param {number} id @param {number} code */
  reset(id, code) {
    const buf = frame(4, RST_STREAM, 0, id, 4);
    buf.writeUInt32BE(code, FRAME_HEADER);
    this.queue(buf);
  }

  /**
   * Ends a stream: reset with `code` when `send` (the server's reset), or as the client left it. 'close' follows.
   * @param {H2Stream} stream @param {number} code @param {boolean} send
   */
  closeStream(stream, code, send) {
    if (stream.closed) return;
    stream.closed = true;
    stream.destroyed = true;
    stream.rstCode = code;
    stream.held = [];
    if (stream.timer) {
      clearTimeout(stream.timer);
      stream.timer = null;
    }
    this.streams.delete(stream.id);
    if (send && !this.destroyed) this.reset(stream.id, code);
    process.nextTick(emitClose, stream);
    if (this.peerGoaway && this.streams.size === 0) this.end();
  }

  /** A connection error: GOAWAY with `code`, then the connection ends. @param {number} code */
  fail(code) {
    if (this.destroyed) return;
    const buf = frame(8, GOAWAY, 0, 0, 8);
    buf.writeUInt32BE(this.lastStreamId, FRAME_HEADER);
    buf.writeUInt32BE(code, FRAME_HEADER + 4);
    this.goawaySent = true;
    this.queue(buf);
    this.flush();
    // Nothing more is read: a client that goes on sending after the GOAWAY (a flood) is held by TCP, not read and
    // thrown away; and one that never closes its side is not waited for.
    this.socket.pause();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
    this.gone();
  }

  /** Ends the connection once what is queued is sent, its streams already done. */
  end() {
    if (this.destroyed) return;
    this.flush();
    this.socket.end();
  }

  /** Ends the connection at once: every stream closes as cancelled. */
  destroy() {
    if (this.destroyed) return;
    this.socket.destroy();
    this.gone();
  }

  gone() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.closed = true;
    this.out = [];
    // As Node's streams do when their connection goes: closed with no code, since the client reset none.
    for (const stream of [...this.streams.values()]) this.closeStream(stream, CODES.NO_ERROR, false);
    this.emit('close');
  }
}

/** Counts events in the current second, to tell when there are more than `limit` of them. */
class RateCount {
  /** @param {number} limit */
  constructor(limit) {
    this.limit = limit;
    this.count = 0;
    this.since = 0;
  }

  /** Counts one more: whether this second now holds more than the limit. */
  over() {
    const now = Date.now();
    if (now - this.since >= 1000) {
      this.since = now;
      this.count = 0;
    }
    return ++this.count > this.limit;
  }
}

/** @param {H2Session} session */
function flushSession(session) {
  if (session.flushQueued) session.flush();
}

/** @param {H2Stream} stream */
function emitClose(stream) {
  stream.emit('close');
}
