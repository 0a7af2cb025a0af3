// The front door's thread (front-door.js): it owns the UI port's listening socket, reads each connection's first
// request head, answers the refusals that need nothing but that head, and hands every other connection on to the
// API, byte for byte, behind a line that says who the client is.
import { parentPort, workerData } from 'node:worker_threads';
import net from 'node:net';
import { accessCheck, splitTarget, tokenPaced } from './access-check.js';
import { upgradeRefusal, refuseAndClose } from './upgrade.js';
import { Pacer, TOKEN_REFUSALS_PER_SECOND } from '../transport/pace.js';

/**
 * @typedef {{ host: string, port: number, inner: string, secret: string, access: import('./access-check.js').AccessOptions,
 *   tokenPace: BigInt64Array, liveClients: Int32Array, maxLiveClients: number, idleTimeoutMs: number, openMethods: string[] }} FrontDoorData
 */

/** Node's own limit on a request head: a longer one is the API's to refuse (431). */
const HEAD_LIMIT = 16 * 1024;
/**
 * A body the door reads before it refuses: a refusal closes the connection, and one closed with a body unread is
 * reset, which can throw the answer away before the client reads it. A longer body is the API's to refuse.
 */
const BODY_LIMIT = 64 * 1024;
/** A request not whole by then is handed on undecided, and the API's timeouts take over. */
const HEAD_WAIT_MS = 1000;
const HEAD_END = Buffer.from('\r\n\r\n');
/**
 * Once the API has closed its end and its last bytes are written, what the client still sends is read and let go for
 * as long and as much as this, then its connection is closed. A client that writes its whole request before it reads
 * (a refused body) gets its answer and a close: closed with what it sent unread, its connection would be reset, and a
 * reset can throw the answer away before the client reads it. A client that stops sending once answered costs nothing
 * more.
 */
const LINGER_MS = 2000;
const LINGER_BYTES = 8 * 1024 * 1024;
const REQUEST_LINE = /^([A-Z]+) ([\x21-\x7e]+) HTTP\/1\.1$/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*((?:\t|[^\p{Cc}])*?)[ \t]*$/u;
/** Headers a decision reads: when one comes twice, the head is not read here, since Node may join or pick either. */
const READ = new Set(['host', 'origin', 'authorization', 'x-otlp-mock-token', 'connection', 'upgrade', 'content-length', 'transfer-encoding']);

const data = /** @type {FrontDoorData} */ (workerData);
/** An upgrade the live feed has room for: handed on, and counted in `joining` until the API answers it. */
const JOIN = 'join';
/**
 * Upgrades handed on and not yet answered. They count with the live clients: in a burst of upgrades, the API's count
 * rises only as each is answered, and until then the door handed on every one of them, each costing the API's loop a
 * handshake or a refusal (208 of a burst of 2,000, with room for 128).
 */
let joining = 0;
/**
 * Upgrades refused for room while others were joining, to be decided again once none is: the API counts an upgrade as
 * a live client as it writes its 101, and the door until it reads it, so in a burst one upgrade may be counted twice
 * for a moment, and the last one the feed had room for was refused (127 of a burst of 328 answered 101, with room
 * for 128). With none joining, the count is exact.
 * @type {Set<() => void>}
 */
const waitingForRoom = new Set();
const check = accessCheck(data.access);
const tokenPace = new Pacer(TOKEN_REFUSALS_PER_SECOND, data.tokenPace);
/** @type {Set<net.Socket>} */
const open = new Set();

/**
 * The request's method, target and headers, or null when the head is anything but plain HTTP/1.1 (folded lines,
 * bare line feeds, control characters, a header read twice): such a head is the API's to read.
 * @param {Buffer} head without its blank line
 * @returns {{ method: string, url: string, headers: Record<string, string> }|null}
 */
function readHead(head) {
  const lines = head.toString('latin1').split('\r\n');
  const request = REQUEST_LINE.exec(lines[0]);
  if (!request) return null;
  /** @type {Record<string, string>} */
  const headers = Object.create(null);
  for (let i = 1; i < lines.length; i++) {
    const header = HEADER_LINE.exec(lines[i]);
    if (!header) return null;
    const name = header[1].toLowerCase();
    if (name in headers && READ.has(name)) return null;
    headers[name] ??= header[2];
  }
  return { method: request[1], url: request[2], headers };
}

/** Whether Node's parser sees an upgrade in these headers: an Upgrade header, and `upgrade` among Connection's tokens. @param {Record<string, string|undefined>} headers */
function upgrading(headers) {
  return headers.upgrade !== undefined && (headers.connection ?? '').split(',').some((token) => token.trim().toLowerCase() === 'upgrade');
}

/**
 * The length of the request's body, or -1 when the door does not read it: chunked, or longer than BODY_LIMIT.
 * @param {Record<string, string>} headers
 */
function bodyLength(headers) {
  if (headers['transfer-encoding'] !== undefined) return -1;
  const length = headers['content-length'] ?? '0';
  return /^\d{1,6}$/.test(length) && Number(length) <= BODY_LIMIT ? Number(length) : -1;
}

/** Whether the router can read the target's path: one it cannot is answered 400 before any check. @param {string} target */
function routable(target) {
  try {
    decodeURI(splitTarget(target).path);
    return true;
  } catch {
    return false;
  }
}

/**
 * What is refused here: an upgrade for any reason the live feed refuses one; a request of a method no open route
 * serves (only GET and HEAD are: the UI's files and /api/health), which is the admin API's whatever its path, for
 * anything the API's check refuses; and a request of another method whose Host or Origin is refused, which is
 * refused whatever its route. Everything else, refusals that depend on the route included, is the API's.
 * @param {{ method: string, url: string, headers: Record<string, string> }} req @param {boolean} withBody
 */
function refusalOf(req, withBody) {
  if (upgrading(req.headers)) {
    if (req.method !== 'GET' || withBody) return null;
    return upgradeRefusal(check, req, Atomics.load(data.liveClients, 0) + joining, data.maxLiveClients) ?? JOIN;
  }
  // An answer to HEAD has no body, which the refusal writer always writes.
  if (req.method === 'HEAD' || !routable(req.url)) return null;
  return check(req, data.openMethods.includes(req.method) ? 'page' : 'api');
}

/**
 * The refusal of a request, or null to hand it on (also while its body is still on its way: `wait`; an upgrade the
 * live feed has room for: JOIN). A failure of the door's own hands it on too: the API reads it again, and the door's
 * other connections are not lost with its thread.
 * @param {Buffer} got what the client has sent so far @param {number} end where its head ends
 * @returns {import('./upgrade.js').WrittenRefusal|null|'wait'|typeof JOIN}
 */
function decision(got, end) {
  try {
    const req = readHead(got.subarray(0, end));
    if (!req) return null;
    const length = bodyLength(req.headers);
    if (length < 0) return null;
    if (got.length < end + HEAD_END.length + length) return 'wait';
    return refusalOf(req, length > 0);
  } catch {
    return null;
  }
}

/** @param {net.Socket} client */
function welcome(client) {
  open.add(client);
  client.on('error', () => client.destroy());
  client.once('close', () => open.delete(client));
  /** @type {Buffer|null} */
  let got = null;
  const waited = setTimeout(() => decided(), HEAD_WAIT_MS);
  client.once('close', () => clearTimeout(waited));
  /** @param {Buffer} chunk */
  function read(chunk) {
    got = got ? Buffer.concat([got, chunk]) : chunk;
    const end = got.indexOf(HEAD_END);
    if (end < 0) {
      if (got.length >= HEAD_LIMIT) decided();
      return;
    }
    const refusal = decision(got, end);
    if (refusal === 'wait') return;
    if (refusal === JOIN) return decided(true);
    if (!refusal) return decided();
    clearTimeout(waited);
    client.off('data', read);
    client.pause();
    if (refusal.status === 503 && joining > 0) {
      waitingForRoom.add(decideAgain);
      return;
    }
    const answer = () => refuseAndClose(client, refusal);
    if (!tokenPaced(refusal)) return answer();
    // Failed token checks share the API's pace: a client that loops them waits, and a token is guessed no faster.
    void tokenPace.turn(client).then((due) => (due ? answer() : client.destroy()));
  }
  function decideAgain() {
    waitingForRoom.delete(decideAgain);
    if (!client.destroyed) read(Buffer.alloc(0));
  }
  client.once('close', () => waitingForRoom.delete(decideAgain));
  function decided(joins = false) {
    clearTimeout(waited);
    handOn(client, got, read, joins);
  }
  client.on('data', read);
}

/**
 * Waits before each new try when the API's socket refuses a connection because its backlog is full (EAGAIN): a Unix
 * socket refuses at once where a TCP client's kernel would try again, and a burst of connections handed on while the
 * API's loop is busy outgrows any backlog. 1.9 s in all, then the client is let go unanswered.
 */
const JOIN_RETRY_MS = [5, 10, 20, 50, 100, 200, 500, 1000];

/**
 * Hands the client on to the API: stops reading it here, and joins it to a connection of the API's. An upgrade the
 * feed has room for (`joins`) counts in `joining` until the API's first answer to it, or the end of either side.
 * @param {net.Socket} client @param {Buffer|null} head @param {(chunk: Buffer) => void} read @param {boolean} joins
 */
function handOn(client, head, read, joins) {
  client.off('data', read);
  client.pause();
  /** @type {(api: net.Socket) => void} */
  let answered = () => {};
  if (joins) {
    joining++;
    let counted = true;
    const settled = () => {
      if (counted && --joining === 0) for (const again of [...waitingForRoom]) again();
      counted = false;
    };
    client.once('close', settled);
    answered = (api) => {
      api.once('data', settled);
      api.once('close', settled);
    };
  }
  join(client, head, 0, answered);
}

/**
 * Joins the client to a new connection of the API's: the line that names the client first, then what it has sent,
 * then both ways as it comes. The API's end closing ends the client's once its last bytes are written.
 * @param {net.Socket} client @param {Buffer|null} head @param {number} tries
 * @param {(api: net.Socket) => void} joined called with the API's connection once it is made
 */
function join(client, head, tries, joined) {
  if (client.destroyed) return;
  const api = net.connect(data.inner);
  /** @param {NodeJS.ErrnoException} err */
  const refused = (err) => {
    api.destroy();
    if (err.code !== 'EAGAIN' || tries >= JOIN_RETRY_MS.length) return client.destroy();
    const again = setTimeout(() => join(client, head, tries + 1, joined), JOIN_RETRY_MS[tries]);
    client.once('close', () => clearTimeout(again));
  };
  api.once('error', refused);
  api.once('connect', () => {
    api.off('error', refused);
    // The API's end reset (a refusal that closed with a body unread): what it answered before is still written to
    // the client, by the 'close' that follows, as it was when the client's socket was the API's own.
    api.on('error', () => {});
    client.on('error', () => api.destroy());
    client.once('close', () => api.destroy());
    let ended = false;
    const apiEnded = () => {
      if (ended) return;
      ended = true;
      linger(client, api);
    };
    api.once('end', apiEnded);
    api.once('close', apiEnded);
    api.write(`${data.secret} ${client.remoteFamily ?? ''} ${client.remoteAddress ?? ''} ${client.remotePort ?? 0}\n`);
    if (head) api.write(head);
    client.pipe(api);
    api.pipe(client);
    joined(api);
  });
}

/**
 * Ends the client's connection after the API's end: what the API wrote goes first, then the end. What the client
 * still sends meanwhile, and for LINGER_MS after, is read and let go, up to LINGER_BYTES; a client that ends its side
 * is let go at once.
 * @param {net.Socket} client @param {net.Socket} api
 */
function linger(client, api) {
  if (client.destroyed) return;
  client.unpipe(api);
  let left = LINGER_BYTES;
  client.on('data', (chunk) => {
    left -= chunk.length;
    if (left < 0) client.destroy();
  });
  client.resume();
  // A client that reads nothing more would keep its socket waiting for the end to be written.
  client.setTimeout(data.idleTimeoutMs, () => client.destroy());
  client.end(() => {
    const done = setTimeout(() => client.destroy(), LINGER_MS);
    client.once('close', () => clearTimeout(done));
  });
}

const server = net.createServer({ allowHalfOpen: true, noDelay: true }, welcome);
server.on('error', (/** @type {NodeJS.ErrnoException & { address?: string, port?: number }} */ err) =>
  parentPort?.postMessage({ type: 'error', error: { message: err.message, code: err.code, syscall: err.syscall, address: err.address, port: err.port } }),
);
server.listen({ host: data.host, port: data.port }, () => parentPort?.postMessage({ type: 'listening', port: /** @type {net.AddressInfo} */ (server.address()).port }));
parentPort?.on('message', (/** @type {string} */ message) => {
  if (message === 'stop') {
    // Listening ends at once; the connections handed on stay until the API ends them.
    server.close();
    parentPort?.postMessage({ type: 'stopped' });
  }
  if (message === 'close') {
    for (const socket of open) socket.destroy();
    parentPort?.postMessage({ type: 'closed' });
  }
});
