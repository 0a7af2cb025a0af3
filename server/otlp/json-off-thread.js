// Large OTLP/JSON bodies are transcoded to protobuf on a worker thread. The transcoder reads the text in one pass
// that cannot be cut into slices, and a 10 MB body held the event loop for about 90 ms; off the loop, the other
// clients are served meanwhile, and on a machine with a core to spare the JSON is read there. The same thread
// writes large protobuf requests as OTLP/JSON for forward targets that take JSON.
import { Worker } from 'node:worker_threads';
import { DecodeError } from './errors.js';

/** Bodies from this size on go to the worker; a smaller one is transcoded sooner than it could be posted. */
export const OFF_THREAD_AT = 1024 * 1024;

/**
 * An idle worker is ended after this long, so that a burst of large bodies leaves nothing of the thread's behind:
 * an idle thread does not collect its garbage, and its allocator keeps what it freed. Starting one again takes tens
 * of ms.
 */
const IDLE_MS = 1000;

/** @typedef {{ resolve: (wire: Buffer) => void, reject: (err: Error) => void }} Pending */

/** @type {Worker|null} */
let worker = null;
/** @type {Map<number, Pending>} */
const pending = new Map();
let nextId = 0;
let done = 0;
/** @type {ReturnType<typeof setTimeout>|null} */
let idleTimer = null;

/** How many bodies the worker has transcoded since the process started. */
export const transcodedOffThread = () => done;

/** @param {Error} err */
function failAll(err) {
  for (const job of pending.values()) job.reject(err);
  pending.clear();
  worker = null;
}

function started() {
  if (worker) return worker;
  const thread = new Worker(new URL('./json-worker.js', import.meta.url));
  // An idle worker must not keep the process alive; one with work is kept alive by the request waiting for it.
  thread.unref();
  thread.on('message', (/** @type {{ id: number, wire?: Uint8Array, invalid?: string, error?: string }} */ { id, wire, invalid, error }) => {
    const job = pending.get(id);
    if (!job) return;
    pending.delete(id);
    if (pending.size === 0) {
      thread.unref();
      idleTimer = setTimeout(stop, IDLE_MS);
      idleTimer.unref();
    }
    done++;
    if (invalid !== undefined) job.reject(new DecodeError(invalid));
    else if (wire === undefined) job.reject(new Error(error));
    else job.resolve(Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength));
  });
  thread.on('error', (err) => {
    if (worker === thread) failAll(err);
  });
  thread.on('exit', (code) => {
    if (worker === thread) failAll(new Error(`the JSON transcoding thread exited (${code})`));
  });
  worker = thread;
  return thread;
}

/**
 * The protobuf encoding of the OTLP/JSON `body`, made on the worker thread: as jsonToProto makes it, or, for a text
 * the transcoder declines, of the request the reference decoder reads from it (a lone surrogate becoming U+FFFD);
 * rejected with a DecodeError, in the reference decoder's words, for a text that is not a valid request. `body` is moved to the worker: a copy the caller made for it, whose memory
 * it fills alone (its byteLength is its buffer's), not one the worker allocates itself: memory a thread
 * allocates is kept by that thread's allocator after it is freed, and the worker's would hold on to a body's
 * worth per job.
 * @param {import('./signals.js').Signal} signal @param {Buffer} body @returns {Promise<Buffer>}
 */
export function transcodeOffThread(signal, body) {
  return offThread({ signal: signal.name }, body);
}

/**
 * The OTLP/JSON of the protobuf request `body`, written on the worker thread (forward targets that take JSON):
 * 8 MB of protobuf written as JSON on the event loop held it 180-370 ms. `body` is moved, as transcodeOffThread's.
 * @param {import('./signals.js').Signal} signal @param {Buffer} body @returns {Promise<Buffer>}
 */
export function jsonOffThread(signal, body) {
  return offThread({ signal: signal.name, to: 'json' }, body);
}

/** @param {{ signal: string, to?: 'json' }} job @param {Buffer} body @returns {Promise<Buffer>} */
function offThread(job, body) {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  const thread = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    thread.ref();
    thread.postMessage({ id, ...job, body }, [/** @type {ArrayBuffer} */ (body.buffer)]);
  });
}

/** Ends the worker once idle (a new job cancels this), with no job waiting; one is started again when next needed. */
function stop() {
  const thread = worker;
  idleTimer = null;
  worker = null;
  void thread?.terminate();
}
