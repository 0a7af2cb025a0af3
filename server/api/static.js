// Serves the built web UI (web/dist) on the API's port, with a fallback to index.html for the UI's own
// routes (/traces/abc, /logs?…) so every view can be linked and reloaded.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, posix, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPEN_ROUTE } from './access.js';
import { splitTarget } from './access-check.js';

export const DIST_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES = /** @type {Record<string, string>} */ ({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
});

// Telemetry is rendered as text by the UI; the policy is a second line of defence should any of it ever
// reach the page as markup: no inline or foreign scripts, no plugins, no framing.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

// Vite names built assets after their content (index-B1d9SAGV.js), so they never change under one name.
const HASHED = /^\/assets\/.+-[A-Za-z0-9_-]{6,}\.[a-z0-9]+$/;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>otlp-mock</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}code{background:#eee;padding:.1em .3em;border-radius:3px}</style>
</head><body><h1>otlp-mock</h1>
<p>The collector is running, but the web UI has not been built. Run <code>npm run build</code> (or start with <code>npm start</code>, which builds it), then reload.</p>
<p>The REST API works without it: <a href="/api/health">/api/health</a>, <a href="/api/spans">/api/spans</a>, <a href="/api/openapi.json">/api/openapi.json</a>.</p>
</body></html>
`;

/**
 * @param {string} root directory ending in a separator @param {string} urlPath decoded path
 * @returns {string | null} the file under root, or null when the path tries to leave it
 */
function resolveIn(root, urlPath) {
  const file = normalize(join(root, urlPath));
  return file.startsWith(root) ? file : null;
}

/**
 * Whether a decoded path names the API in any spelling the router does not serve (`/API/x`, `/./api/x`,
 * `/x/../api/x`, `/api;v=1/x`): it is answered as an unknown API route, never with the page, so that no spelling
 * of an API path is a 200.
 * @param {string} path
 */
function namesApi(path) {
  return /^\/api(;[^/]*)?(\/|$)/i.test(posix.normalize(path));
}

/** @param {string} file */
async function fileStat(file) {
  try {
    const st = await stat(file);
    return st.isFile() ? st : null;
  } catch {
    return null;
  }
}

/** The compressed copies scripts/build-web.js writes next to each built text file, best first. */
const PRECOMPRESSED = /** @type {const} */ ([
  ['br', '.br'],
  ['gzip', '.gz'],
]);

/** @param {string | string[] | undefined} header @param {string} coding */
function accepts(header, coding) {
  return String(header ?? '')
    .split(',')
    .some((part) => {
      const [name, ...params] = part.trim().split(';');
      return name.trim().toLowerCase() === coding && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    });
}

/**
 * @param {import('fastify').FastifyRequest} request @param {import('fastify').FastifyReply} reply
 * @param {string} file @param {import('node:fs').Stats} st @param {string} cacheControl
 */
async function sendFile(request, reply, file, st, cacheControl) {
  let body = file;
  let size = st.size;
  let coding = '';
  for (const [name, ext] of PRECOMPRESSED) {
    if (!accepts(request.headers['accept-encoding'], name)) continue;
    const cst = await fileStat(file + ext);
    if (!cst) continue;
    [body, size, coding] = [file + ext, cst.size, name];
    break;
  }
  const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}${coding ? `-${coding}` : ''}"`;
  reply
    .header('content-type', TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream')
    .header('cache-control', cacheControl)
    .header('etag', etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff');
  if (coding) reply.header('content-encoding', coding);
  if (file.endsWith('.html')) reply.header('content-security-policy', CSP);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  reply.header('content-length', size);
  return reply.send(createReadStream(body));
}

/**
 * Registers `GET /*`: files from web/dist, index.html for the UI's routes, 404 for unknown /api paths.
 * @param {import('fastify').FastifyInstance} app
 * @param {{ root?: string }} [options] the built UI's directory (tests point it elsewhere)
 */
export function registerStatic(app, { root = DIST_DIR } = {}) {
  const dist = root.endsWith(sep) ? root : root + sep;
  app.get('/*', { config: OPEN_ROUTE }, async (request, reply) => {
    let path;
    try {
      // The path the router read: an absolute-form target's too
      path = decodeURIComponent(splitTarget(request.url).path.replace(/\/+/g, '/'));
    } catch {
      return reply.code(400).type('text/plain; charset=utf-8').send('Bad Request: malformed path\n');
    }
    if (namesApi(path)) {
      return reply.code(404).send({ error: 'Not Found', message: `no API route GET ${path}`, statusCode: 404 });
    }
    const file = path === '/' ? null : resolveIn(dist, path);
    if (file) {
      const st = await fileStat(file);
      if (st) return sendFile(request, reply, file, st, HASHED.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
    }
    // A missing script or stylesheet must be a 404, not the page: the UI's own routes may contain dots
    // (/metrics/frontend/http.server.request.duration), so only known file types and /assets/ count as files.
    if (path.startsWith('/assets/') || Object.hasOwn(TYPES, extname(path).toLowerCase())) {
      return reply.code(404).type('text/plain; charset=utf-8').send('Not Found\n');
    }
    const index = join(dist, 'index.html');
    const st = await fileStat(index);
    if (!st) return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(NOT_BUILT);
    // index.html names the current hashed assets: the browser must revalidate it on every load.
    return sendFile(request, reply, index, st, 'no-cache');
  });
}
