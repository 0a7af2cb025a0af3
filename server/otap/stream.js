// One OTAP stream (ArrowTraces, ArrowLogs, ArrowMetrics): BatchArrowRecords messages in, one BatchStatus per batch
// out, in order. Each batch becomes the OTLP request of its signal and takes the OTLP/gRPC path (decode, faults,
// budgets, store, forward, journal), so a batch is stored exactly as the same data sent over OTLP.
import { CODES } from '../transport/h2/session.js';
import { status as CODE } from '@grpc/grpc-js';
import { planOf } from '../faults/wire.js';
import { journalHeaders } from '../transport/receive.js';
import { grpcMessage } from '../otlp/text.js';
import { earnWindow } from '../transport/grpc-windows.js';
import { decodeBatch, encodeStatus, MessageError } from './messages.js';
import { ArrowState, ArrowError, Inflation } from './arrow.js';
import { otlpOf, BatchError, AT_ONCE_BYTES } from './batch.js';
import { ValueError } from './any-value.js';

const PREFIX = 5;
/** Batches read but not yet answered: past this the stream stops reading, and HTTP/2 flow control holds the client. */
const MAX_PENDING = 16;
/** Values all of a stream's Arrow dictionaries may hold: a producer's dictionaries reset long before this. */
const MAX_DICTIONARY_VALUES = 1_000_000;

const BAD_INPUT = [MessageError, ArrowError, BatchError, ValueError];

/** Where a stream came from, as host:port. @param {import('../transport/h2/session.js').H2Stream} stream */
function peerOf(stream) {
  const socket = stream.session?.socket;
  const host = socket?.remoteAddress ?? '';
  return host.includes(':') ? `[${host}]:${socket?.remotePort}` : `${host}:${socket?.remotePort}`;
}

/** How a stream the server did not end was ended by its client. @param {import('../transport/h2/session.js').H2Stream} stream */
function cancelled(stream) {
  const code = stream.rstCode;
  return {
    cause: /** @type {const} */ ('cancel'),
    status: null,
    message: code ? `the client reset the stream (RST_STREAM ${code})` : 'the client closed its connection',
  };
}

/** Streams opened so far: each stream's number in the journal. */
let opened = 0;

export class OtapStream {
  /**
   * @param {import('../transport/h2/session.js').H2Stream} stream @param {import('../transport/h2/hpack.js').HeaderObject} headers
   * @param {import('./services.js').OtapService} service the stream's method
   * @param {import('../otlp/signals.js').Signal} signal its signal
   * @param {import('../transport/receive.js').Receiver} receiver
   * @param {(done: () => void) => () => void} holdRegister lets shutdown release a held status; returns the unregister
   * @param {number} idleTimeoutMs how long a message may stall half-received
   */
  constructor(stream, headers, service, signal, receiver, holdRegister, idleTimeoutMs) {
    this.stream = stream;
    this.id = ++opened;
    this.service = service;
    this.idleTimeoutMs = idleTimeoutMs;
    this.signal = signal;
    this.receiver = receiver;
    this.holdRegister = holdRegister;
    this.path = String(headers[':path']);
    this.userAgent = String(headers['user-agent'] ?? '');
    this.metadata = Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith(':') && k !== 'content-type' && k !== 'te'));
    this.journalHeaders = journalHeaders(/** @type {any} */ (this.metadata));
    this.state = new ArrowState({ maxDictionaryValues: MAX_DICTIONARY_VALUES });
    /** @type {Buffer[]} */
    this.chunks = [];
    this.buffered = 0;
    this.held = 0;
    this.pending = 0;
    this.blocked = false;
    this.gone = false;
    /** @type {Record<string, string>|null} set once the stream's end is decided */
    this.trailers = null;
    /** @type {(() => void)|null} */
    this.onGone = null;
    /** @type {Promise<void>} statuses go out in order: each batch waits for the one before */
    this.queue = Promise.resolve();
    /** @type {import('../store/otap-streams.js').StreamEnd|null} how the stream ends, once the server decides it */
    this.end = null;
    receiver.journal.openStream(this.id, {
      signal: signal.name,
      method: service.method,
      path: this.path,
      peer: peerOf(stream),
      userAgent: this.userAgent,
    });

    stream.on('error', () => {});
    // The gRPC port cancels a stream whose message stalls half-received.
    stream.on('timeout', () => (this.end ??= { cause: 'idle', status: null, message: 'a message stalled half-received past the idle timeout' }));
    stream.once('close', () => this.close());
    stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-encoding': 'identity' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers(this.trailers ?? { 'grpc-status': '0', 'grpc-message': '' }));
    // A stream waits between batches as long as its exporter has nothing to send: only a message that stalls
    // half-received is dropped, by the idle timeout the gRPC port set on the stream.
    stream.setTimeout(0);
    stream.on('data', (/** @type {Buffer} */ chunk) => {
      this.data(chunk);
      stream.setTimeout(this.buffered > 0 ? this.idleTimeoutMs : 0);
    });
    stream.once('end', () => {
      this.queue = this.queue.then(() => this.finish(CODE.OK, '', 'half-close'));
    });
  }

  /** @param {Buffer} chunk */
  data(chunk) {
    if (this.trailers) return;
    if (!this.receiver.reserve(chunk.length, this.held)) {
      this.fail(CODE.RESOURCE_EXHAUSTED, 'otlp-mock has too many bytes in flight; retry later (--max-inflight-bytes)');
      return;
    }
    this.held += chunk.length;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= PREFIX) {
      const head = this.chunks[0].length >= PREFIX ? this.chunks[0] : (this.chunks = [Buffer.concat(this.chunks)])[0];
      const length = head.readUInt32BE(1);
      if (length > this.receiver.maxRequestBytes) {
        this.fail(CODE.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${this.receiver.maxRequestBytes})`);
        return;
      }
      if (head[0] !== 0) {
        this.fail(CODE.UNIMPLEMENTED, 'OTAP streams take uncompressed messages; the Arrow records carry their own compression');
        return;
      }
      if (this.buffered < PREFIX + length) return;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      const message = all.subarray(PREFIX, PREFIX + length);
      const rest = all.subarray(PREFIX + length);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      const size = PREFIX + length;
      this.pending++;
      if (this.pending >= MAX_PENDING) this.stream.pause();
      this.queue = this.queue
        .then(() => this.batch(message, size))
        .catch((err) => this.fail(CODE.INTERNAL, `otlp-mock failed on this stream: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  /** @param {Buffer} message @param {number} size */
  async batch(message, size) {
    // What its compressed buffers decode to is held against the in-flight budget until the batch is answered.
    let inflated = 0;
    let holding = true;
    const letGo = () => {
      // A closed stream gave back everything it held.
      if (holding && this.held >= size) {
        this.receiver.release(size);
        this.held -= size;
      }
      holding = false;
    };
    try {
      if (this.gone || this.trailers) return;
      let batchId = 0n;
      let exchange = null;
      try {
        const decoded = decodeBatch(message);
        batchId = decoded.batchId;
        const room = this.receiver.roomFor(
          () => inflated,
          (n) => (inflated += n),
        );
        const inflation = new Inflation(this.receiver.maxRequestBytes, () => this.gone, room, message.length > AT_ONCE_BYTES);
        const { body, payloadTypes, arrowBytes } = await otlpOf(this.service, decoded, this.state, inflation, this.receiver.store.capacityOf(this.signal.name));
        exchange = this.begin(arrowBytes, payloadTypes, batchId);
        await this.answer(exchange, body, batchId);
      } catch (err) {
        if (!BAD_INPUT.some((type) => err instanceof type)) throw err;
        const text = err instanceof Error ? err.message : String(err);
        const code = /** @type {any} */ (err).code ?? CODE.INVALID_ARGUMENT;
        const refused = exchange ?? this.begin(size, [], batchId);
        const answered = !((err instanceof ArrowError || err instanceof BatchError) && err.paced) || (await this.pacedTurn(letGo));
        refused.finish(code, text, 'rejected');
        if (answered) this.status(batchId, code, text);
      }
    } finally {
      letGo();
      this.receiver.release(inflated);
      this.pending--;
      this.resume();
    }
  }

  /**
   * Waits for the turn of a batch whose compressed buffers were refused, at the pace of refused compressed bodies
   * over both OTLP ports: a client looping such batches waits for their answers. Its message is let go first, so that
   * the wait holds nothing of the in-flight budget. False when the stream is gone, or its turn would come too late:
   * then the stream is reset unanswered.
   * @param {() => void} letGo
   */
  async pacedTurn(letGo) {
    letGo();
    const due = await this.receiver.bodyRefusals.turn(this.stream);
    if (this.gone || this.trailers) return false;
    if (due) return true;
    this.end ??= { cause: 'reset', status: null, message: 'refused batches came faster than the pace they are answered at; the stream was reset' };
    this.gone = true;
    this.stream.close(CODES.CANCEL);
    return false;
  }

  /** @param {number} bytes @param {string[]} payloadTypes @param {bigint} batchId */
  begin(bytes, payloadTypes, batchId) {
    return this.receiver.begin({
      transport: 'otap',
      signal: this.signal,
      path: this.path,
      contentType: `application/vnd.apache.arrow.stream; batch=${batchId}; payloads=${payloadTypes.join(',')}`,
      contentEncoding: '',
      bytes,
      userAgent: this.userAgent,
      headers: this.journalHeaders,
      otap: { stream: this.id, batch: String(batchId) },
    });
  }

  /** @param {import('../transport/receive.js').Exchange} exchange @param {Buffer} body @param {bigint} batchId */
  async answer(exchange, body, batchId) {
    // A batch whose rows are its items had them counted before its request was written (batch.js). A large request is
    // decoded and stored in slices, as a large OTLP body is.
    let verdict = await exchange.decideInSlices(body, false, this.metadata, () => this.gone, this.service.itemRows !== null);
    if (exchange.forwarding) verdict = await exchange.forwarded(verdict);
    const plan = planOf(verdict, 'otap', this.signal, false, this.receiver.hangLimitMs);
    const { then } = plan;
    if (plan.paced && 'status' in then && !(await this.pacedTurn(() => {}))) {
      exchange.finish(then.status, then.message, 'rejected');
      return;
    }
    if (plan.holdMs > 0 && !this.gone) await this.hold(plan.holdMs);
    if (this.gone) {
      exchange.finish(null, '', plan.holdMs > 0 ? plan.ifGone : 'abandoned');
      return;
    }
    if ('drop' in then) {
      exchange.finish(null, '', then.outcome);
      this.end ??= { cause: 'reset', status: null, message: `fault rule ${exchange.fault?.id} reset the stream` };
      this.gone = true;
      this.stream.close(CODES.CANCEL);
      return;
    }
    exchange.finish(then.status, then.message, then.outcome, then.partial);
    this.status(batchId, then.status, then.message);
    if (then.status === CODE.OK) earnWindow(this.stream.session);
  }

  /** @param {number} ms */
  hold(ms) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unregister();
        this.onGone = null;
        resolve(undefined);
      };
      const timer = setTimeout(done, ms);
      const unregister = this.holdRegister(done);
      this.onGone = done;
    });
  }

  /** @param {bigint} batchId @param {number} code @param {string} message */
  status(batchId, code, message) {
    if (this.gone || this.trailers) return;
    const body = encodeStatus(batchId, code, message);
    const frame = Buffer.allocUnsafe(PREFIX + body.length);
    frame[0] = 0;
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, PREFIX);
    // A client that does not read its statuses fills the HTTP/2 window; reading stops until it drains.
    if (!this.stream.write(frame)) {
      this.blocked = true;
      this.stream.pause();
      this.stream.once('drain', () => {
        this.blocked = false;
        this.resume();
      });
    }
  }

  /** Reads again once fewer batches wait and the statuses have drained. */
  resume() {
    if (this.pending < MAX_PENDING && !this.blocked && !this.gone && !this.trailers) this.stream.resume();
  }

  /** Ends the stream with a status of its own (a broken frame, a limit), after the batch statuses already sent. @param {number} code @param {string} message */
  fail(code, message) {
    if (this.trailers || this.gone) return;
    this.chunks = [];
    this.stream.pause();
    this.finish(code, message, 'error');
  }

  /** @param {number} code @param {string} message @param {import('../store/otap-streams.js').StreamEndCause} cause */
  finish(code, message, cause) {
    if (this.trailers || this.gone) return;
    this.end ??= { cause, status: code, message };
    this.trailers = { 'grpc-status': String(code), 'grpc-message': grpcMessage(message) };
    this.stream.end();
  }

  /** The server is stopping: the stream ends with its connection. */
  shutdown() {
    this.end ??= { cause: 'shutdown', status: null, message: 'otlp-mock stopped' };
  }

  close() {
    this.receiver.journal.closeStream(this.id, this.end ?? cancelled(this.stream));
    this.gone = true;
    this.receiver.release(this.held);
    this.held = 0;
    this.onGone?.();
  }
}
