// The UI port's front door: a thread of its own accepts the port's connections (front-door-worker.js), so that what a
// connection costs the event loop that receives telemetry is paid only for the ones the API serves. A client that
// connects, is refused and connects again a thousand times a second cost the loop a quarter of its ingest in socket
// work alone, whatever the answer; the same refusals answered from a thread cost it nothing measurable (soak,
// docs/security.md). The thread answers what needs only a request's head (a live feed upgrade refused; a Host,
// Origin, content type or token refused on a method no open route serves; a Host or Origin refused on any other)
// with the same decision and the same words as the API (access-check.js, upgrade.js), and hands every other
// connection on, unchanged, over a local socket, behind a line with this process's secret. Everything handed on is
// checked again by the API, so the door can refuse more quickly but never let more in.
import { Worker } from 'node:worker_threads';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Linux's default cap on a listening socket's backlog (net.core.somaxconn); a larger number is cut to the cap. */
const INNER_BACKLOG = 4096;
/** The line that names the client, in front of what it sent: secret, family, address, port. */
const INTRODUCTION_LIMIT = 256;

/**
 * @typedef {{ host: string, port: number, access: import('./access-check.js').AccessOptions, tokenPace: BigInt64Array,
 *   liveClients: Int32Array, maxLiveClients: number, idleTimeoutMs: number, openMethods: string[] }} FrontDoorOptions
 */

/**
 * The API's socket for the door: one no other machine can reach, and the secret on its first line keeps out any
 * other process of this one's. On Linux a socket of the abstract namespace, which needs no directory (a read-only
 * container has none to write); elsewhere a Unix socket in a directory of its own, or a named pipe on Windows.
 */
function innerAddress() {
  const name = `otlp-mock-${randomBytes(16).toString('hex')}`;
  if (process.platform === 'linux') return { path: `\0${name}`, dir: null };
  if (process.platform === 'win32') return { path: `\\\\?\\pipe\\${name}`, dir: null };
  const dir = mkdtempSync(join(tmpdir(), 'otlp-mock-'));
  return { path: join(dir, 'ui.sock'), dir };
}

/**
 * Opens the UI port with `server` (the API's HTTP server, which listens on nothing itself) behind it. Resolves once
 * the port listens, or rejects with the listening error (EADDRINUSE, EACCES) as the server's own listen would.
 * @param {import('node:http').Server} server @param {FrontDoorOptions} options
 */
export async function openFrontDoor(server, options) {
  const secret = randomBytes(16).toString('hex');
  const expected = Buffer.from(secret);
  const inner = innerAddress();
  const innerServer = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => introduced(socket));

  /**
   * Reads the door's line and gives the connection to the HTTP server as the client's own: its address is the
   * client's, and what follows the line is read first.
   * @param {net.Socket} socket
   */
  function introduced(socket) {
    /** @type {Buffer|null} */
    let got = null;
    const gone = () => socket.destroy();
    socket.on('error', gone);
    /** @param {Buffer} chunk */
    const read = (chunk) => {
      got = got ? Buffer.concat([got, chunk]) : chunk;
      const end = got.indexOf(10);
      if (end < 0) {
        if (got.length > INTRODUCTION_LIMIT) socket.destroy();
        return;
      }
      socket.off('data', read);
      socket.off('error', gone);
      socket.pause();
      const [given = '', family, address, port] = got.subarray(0, end).toString('latin1').split(' ');
      const key = Buffer.from(given);
      if (key.length !== expected.length || !timingSafeEqual(key, expected)) return socket.destroy();
      Object.defineProperties(socket, {
        remoteAddress: { value: address || undefined },
        remoteFamily: { value: family || undefined },
        remotePort: { value: Number(port) || undefined },
      });
      const rest = got.subarray(end + 1);
      // Closing after an answer ends only this side: the door closes the connection once it has read that end. Closed
      // here with what the client sent still unread, the door's next write of it failed, and the failure closed the
      // door's end before it had read the answer, which the client then never got (a refused body, or a fetch that
      // failed, on a busy machine).
      socket.destroySoon = () => socket.end();
      server.emit('connection', socket);
      // What came after the line is handed to the HTTP server once the socket has resumed, not put back to be read
      // as it resumes: a request answered while that read is under way (a refusal) that pauses the socket would be
      // resumed by the 'resume' that follows it, and its whole body read while its answer waits.
      if (rest.length) socket.once('resume', () => socket.emit('data', rest));
      socket.resume();
    };
    socket.on('data', read);
    socket.resume();
  }

  await new Promise((resolve, reject) => {
    innerServer.once('error', reject);
    // As deep a backlog as the kernel allows (somaxconn): the door hands bursts on faster than a busy loop accepts.
    innerServer.listen({ path: inner.path, backlog: INNER_BACKLOG }, () => {
      innerServer.off('error', reject);
      resolve(undefined);
    });
  });
  // A connection the kernel could not hand over (out of file descriptors) is the door's client's loss, not the process's.
  innerServer.on('error', (err) => process.stderr.write(`otlp-mock: the UI port's inner socket: ${err.message}\n`));

  const workerData = { ...options, inner: inner.path, secret };
  /** @type {Worker|undefined} */
  let worker;
  let closing = false;
  /** @type {number} */
  let port;

  /**
   * Starts the door's thread, resolving with the port it listens on. @param {number} wanted
   * @returns {Promise<number>}
   */
  const start = (wanted) =>
    new Promise((resolve, reject) => {
      const thread = new Worker(new URL('./front-door-worker.js', import.meta.url), { workerData: { ...workerData, port: wanted } });
      worker = thread;
      thread.on('message', (/** @type {any} */ message) => {
        if (message.type === 'listening') resolve(message.port);
        if (message.type === 'error') reject(Object.assign(new Error(message.error.message), message.error));
      });
      thread.on('error', reject);
      thread.once('exit', () => {
        reject(new Error('the UI port front door stopped before it listened'));
        if (closing) return;
        // A failure of the door's own must not leave the UI port closed while the store keeps running.
        process.stderr.write('otlp-mock: the UI port front door stopped; opening it again\n');
        start(port).catch((err) => process.stderr.write(`otlp-mock: the UI port could not be opened again: ${err.message}\n`));
      });
    });

  const removeInner = () => {
    innerServer.close();
    if (inner.dir) rmSync(inner.dir, { recursive: true, force: true });
  };
  try {
    port = await start(options.port);
  } catch (err) {
    closing = true;
    await worker?.terminate();
    removeInner();
    throw err;
  }

  /** @param {string} message @param {string} reply */
  const ask = (message, reply) =>
    new Promise((resolve) => {
      const thread = /** @type {Worker} */ (worker);
      const answered = (/** @type {any} */ m) => m.type === reply && done();
      const done = () => {
        thread.off('message', answered);
        thread.off('exit', done);
        resolve(undefined);
      };
      thread.on('message', answered);
      thread.once('exit', done);
      thread.postMessage(message);
    });

  return {
    port,
    /** Where the API takes the connections the door hands on. */
    inner: inner.path,
    /** Stops taking connections; those handed on stay open until the API closes them. */
    stop: () => ask('stop', 'stopped'),
    /** Closes every connection the door holds and ends its thread. */
    close: async () => {
      closing = true;
      await ask('close', 'closed');
      await worker?.terminate();
      removeInner();
    },
  };
}
