// Large OTLP/JSON bodies are transcoded to protobuf on a worker thread. The transcoder reads the text in one pass
// that cannot be cut into slices, and a 10 MB body held the event loop for about 90 ms; off the loop, the other
// clients are served meanwhile, and on a machine with a core to spare the JSON is read there.
import { Worker } from 'node:worker_threads';

/** Bodies from this size on go to the worker; a smaller one is transcoded sooner than it could be posted. */
export const OFF_THREAD_AT = 1024 * 1024;

/** @typedef {{ resolve: (wire: Buffer|null) => void, reject: (err: Error) => void }} Pending */

/** @type {Worker|null} */
let worker = null;
/** @type {Map<number, Pending>} */
const pending = new Map();
let nextId = 0;
let done = 0;

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
  thread.on('message', (/** @type {{ id: number, wire?: Uint8Array|null, error?: string }} */ { id, wire, error }) => {
    const job = pending.get(id);
    if (!job) return;
    pending.delete(id);
    if (pending.size === 0) thread.unref();
    done++;
    if (error !== undefined) job.reject(new Error(error));
    else job.resolve(wire ? Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength) : null);
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
 * The protobuf encoding of the OTLP/JSON `body`, as jsonToProto makes it, made on the worker thread: null when
 * the transcoder declines the text. The body is copied to the worker, and the caller keeps its own.
 * @param {import('./signals.js').Signal} signal @param {Buffer} body @returns {Promise<Buffer|null>}
 */
export function transcodeOffThread(signal, body) {
  const thread = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    thread.ref();
    thread.postMessage({ id, signal: signal.name, body });
  });
}

/** Ends the worker, if one was started (tests and shutdown); one is started again when next needed. */
export async function stopTranscodingThread() {
  const thread = worker;
  if (!thread) return;
  failAll(new Error('the JSON transcoding thread was stopped'));
  await thread.terminate();
}
