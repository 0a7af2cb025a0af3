// Who may use the UI port: one origin for the admin API and its live feed (docs/security.md). A page on another
// site may send a browser to this port, and a rebinding domain may resolve to it: the Host header says which
// name the browser thinks it is talking to, the Origin header which page is asking, and a token (when set)
// who is asking. The decision alone, on a request's head: the API's hooks ask it (access.js), and so does the
// front door (front-door.js), which loads nothing heavier.
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * @typedef {{ host: string, allowedHosts: string[], adminToken: string, adminRate?: number, adminConcurrency?: number }} AccessOptions
 *   `adminRate`: admin requests a second per client address (0: no limit); `adminConcurrency`: admin requests
 *   worked on at once (admission.js)
 * @typedef {{ status: number, message: string, headers?: Record<string, string> }} Refusal
 * @typedef {{ method?: string, url?: string, headers: import('node:http').IncomingHttpHeaders }} RequestHead what the check reads of a
 *   request: an IncomingMessage, or a head the front door read
 */

export const TOKEN_HEADER = 'x-otlp-mock-token';
/** The live feed's query parameter: browsers cannot set headers on a WebSocket. */
export const TOKEN_PARAM = 'token';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const ANY_ADDRESS = new Set(['0.0.0.0', '::', '[::]']);
/** Content types a cross-site form or a no-cors fetch can send without asking first (CORS "simple" requests). */
const SIMPLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A request target split as the router reads it (find-my-way): an absolute-form target (`http://host/api/spans`,
 * which HTTP/1.1 servers must accept) names its authority and then its path; the query and fragment are left off.
 * The path keeps its escapes: decoding is the caller's, as it is the router's.
 * @param {string} target
 * @returns {{ authority: string|null, path: string }}
 */
export function splitTarget(target) {
  let authority = null;
  let rest = target;
  const scheme = /^https?:\/\//i.exec(target);
  if (scheme) {
    const end = target.slice(scheme[0].length).search(/[/?#]/);
    authority = end < 0 ? target.slice(scheme[0].length) : target.slice(scheme[0].length, scheme[0].length + end);
    rest = target.slice(scheme[0].length + authority.length);
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const stop = rest.search(/[?#]/);
  return { authority, path: stop < 0 ? rest : rest.slice(0, stop) };
}

/** `name` or `[v6]` without its port, lower case. @param {string} host */
function hostname(host) {
  const h = host.toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** @param {string} name */
function loopback(name) {
  return LOOPBACK.has(name) || name.endsWith('.localhost');
}

/** @param {string} token */
const digest = (token) => createHash('sha256').update(token).digest();

/**
 * @param {AccessOptions} options
 * @returns {(req: RequestHead, kind: 'api'|'live'|'page') => Refusal|null}
 */
export function accessCheck({ host, allowedHosts, adminToken }) {
  const bound = hostname(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  const anyHost = ANY_ADDRESS.has(bound) && allowedHosts.length === 0;
  const names = new Set([bound, ...allowedHosts.map(hostname)]);
  const wanted = adminToken ? digest(adminToken) : null;

  /** @param {string|undefined} given */
  const tokenMatches = (given) => wanted !== null && given !== undefined && timingSafeEqual(digest(given), wanted);

  return (req, kind) => {
    // The authority of an absolute-form target overrides the Host header (RFC 9112, 3.2.2).
    const hostHeader = splitTarget(req.url ?? '').authority ?? req.headers.host ?? '';
    const name = hostname(hostHeader);
    if (!anyHost && !loopback(name) && !names.has(name))
      return {
        status: 403,
        message: `this server is not reachable as "${hostHeader}" (a DNS rebinding guard); add the name with --allowed-hosts or OTLP_MOCK_ALLOWED_HOSTS`,
      };
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost = '';
      try {
        originHost = new URL(origin).host;
      } catch {
        // "null" and anything unparsable match no host
      }
      // A page served by this port has its Host as origin; a loopback dev server (npm run dev) proxies to a loopback Host.
      const same = originHost !== '' && (originHost.toLowerCase() === hostHeader.toLowerCase() || (loopback(hostname(originHost)) && loopback(name)));
      if (!same) return { status: 403, message: `requests from pages on ${origin} are not accepted: the admin API answers its own UI only` };
    }
    if (kind === 'page') return null;
    if (kind === 'api' && CHANGES.has(req.method ?? '')) {
      const type = String(req.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase();
      if (SIMPLE_TYPES.has(type))
        return {
          status: 415,
          message: `Content-Type "${type}" is refused on ${req.method} (a cross-site form can send it): use application/json, or application/x-ndjson for /api/import`,
        };
    }
    if (wanted === null) return null;
    const auth = String(req.headers.authorization ?? '');
    const given = auth.toLowerCase().startsWith('bearer ')
      ? auth.slice(7).trim()
      : (headerValue(req.headers[TOKEN_HEADER]) ?? (kind === 'live' ? tokenParam(req.url) : undefined));
    if (tokenMatches(given)) return null;
    return {
      status: 401,
      message: given === undefined ? `this server requires its admin token: send "Authorization: Bearer <token>"` : 'the admin token does not match',
      headers: { 'www-authenticate': 'Bearer realm="otlp-mock"' },
    };
  };
}

/** @param {string|string[]|undefined} v */
function headerValue(v) {
  return Array.isArray(v) ? v[0] : v;
}

/** @param {string|undefined} url */
function tokenParam(url) {
  return new URLSearchParams((url ?? '').split('?')[1] ?? '').get(TOKEN_PARAM) ?? undefined;
}

/**
 * Whether a refusal waits for the pace of failed token checks (../transport/pace.js): a client looping them waits,
 * which also bounds how fast a token can be guessed; other refusals have no pace. The API and the front door both ask.
 * @param {Refusal} refusal
 */
export function tokenPaced(refusal) {
  return refusal.status === 401;
}

/** @param {Refusal} refusal */
export function refusalBody(refusal) {
  return { statusCode: refusal.status, error: refusal.message, message: refusal.message };
}
