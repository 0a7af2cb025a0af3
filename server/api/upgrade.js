// A WebSocket upgrade on the UI port: whether it is refused and why, and how a refusal is written on its socket. The
// live feed's upgrade handler (live.js) and the front door (front-door.js) both decide with this, so that an upgrade
// the front door lets through is one the feed would take, and a refusal reads the same from either.
import { STATUS_CODES } from 'node:http';
import { refusalBody, splitTarget } from './access-check.js';
import { answerAndClose } from '../transport/last-answer.js';

export const LIVE_PATH = '/api/live';

/**
 * @typedef {import('./access-check.js').Refusal & { body?: object }} WrittenRefusal `body`: what is written, when not
 *   refusalBody's
 */

/**
 * Why an upgrade is refused, or null when the feed takes it. Every upgrade is the admin API's: who may ask is decided
 * before where it goes, so no spelling of the path reaches the feed without the token. The path is then read as the
 * router reads one (escapes decoded, an absolute-form target's path), and only /api/live is upgraded.
 * @param {ReturnType<typeof import('./access-check.js').accessCheck>} check
 * @param {import('./access-check.js').RequestHead} req @param {number} clients live clients connected @param {number} maxClients
 * @returns {WrittenRefusal|null}
 */
export function upgradeRefusal(check, req, clients, maxClients) {
  const refusal = check(req, 'live');
  if (refusal) return refusal;
  const target = req.url ?? '';
  if (!isLivePath(target)) {
    const message = `no WebSocket at ${splitTarget(target).path}; the live feed is at ${LIVE_PATH}`;
    return { status: 404, message, body: { statusCode: 404, error: 'Not Found', message } };
  }
  if (clients >= maxClients) {
    return { status: 503, message: `${clients} live clients are connected, the most this server serves` };
  }
  return null;
}

/** @param {string} target an upgrade's request target */
export function isLivePath(target) {
  try {
    // decodeURI keeps encoded separators (%2F, %3F) as the router does
    return decodeURI(splitTarget(target).path) === LIVE_PATH;
  } catch {
    return false;
  }
}

/**
 * Answers a refused upgrade, or a refused request without a body, and lets the socket go (last-answer.js).
 * @param {import('node:stream').Duplex} socket @param {WrittenRefusal} refusal
 */
export function refuseAndClose(socket, refusal) {
  if (!socket.writable) return socket.destroy();
  const { status, headers = {}, body = refusalBody(refusal) } = refusal;
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  answerAndClose(
    socket,
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n${extra}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
}
