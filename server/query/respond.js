// A page as what to send: items are turned into their views and text in slices, from the top of the sort
// down, until the answer would pass MAX_PAGE_BYTES: then it holds fewer items than asked, says so, and
// its nextCursor continues after the last one it holds, so nothing is skipped and the total stays exact.
// The API writes an answer to its reply; the query floor never sees one.
import { nextCursor } from './engine.js';
import { makeCursor } from './params.js';
import { Slicer } from './scan.js';

/**
 * @typedef {{ status: number, headers?: Record<string, string>, json?: unknown, text?: string, slices?: AsyncIterable<string> }} Answer
 *   what to send: `json`, a small body sent whole; `text`, a small body's JSON text, sent whole; or `slices`, the
 *   body's JSON text made a slice at a time while it is written, so a large page never holds the event loop
 * @typedef {(stop: () => void) => () => void} OnGone calls `stop` once the client has gone away (at once if it
 *   already has), and returns what stops listening
 */

/** The most bytes of items one answer holds: a hundred thousand spans are over a hundred megabytes. */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024;
const CHUNK_CHARS = 64 * 1024;

/**
 * @param {import('./engine.js').Listing} listing @param {import('./engine.js').Page} page
 * @param {{ status?: number, error?: string, maxBytes?: number }} [options] `error`: why a wait ran out (408)
 * @returns {Promise<Answer>}
 */
export async function pageAnswer(listing, page, { status = 200, error, maxBytes = MAX_PAGE_BYTES } = {}) {
  const { items } = page;
  /** @type {string[]} */
  const texts = [];
  let bytes = 0;
  const slicer = new Slicer();
  for (const item of items) {
    const text = JSON.stringify(listing.view(item));
    const size = Buffer.byteLength(text) + 1;
    if (texts.length > 0 && bytes + size > maxBytes) break;
    texts.push(text);
    bytes += size;
    if (slicer.due()) await slicer.pause();
  }
  /** @type {Record<string, any>} */
  const tail = { total: page.total, ...page.extra };
  const cut = texts.length < items.length;
  const cursor = cut ? makeCursor(page.positions[texts.length - 1]) : nextCursor(page);
  if (cursor) tail.nextCursor = cursor;
  if (cut)
    tail.truncated = `${texts.length} of the ${items.length} ${listing.field} asked for: an answer holds at most ${maxBytes} bytes of items; nextCursor continues after them`;
  if (error !== undefined) tail.error = error;
  if (page.reversed) texts.reverse();
  const headers = { 'content-type': 'application/json; charset=utf-8' };
  const opening = `{"${listing.field}":[`;
  const closing = `],${JSON.stringify(tail).slice(1)}`;
  // A page of one slice goes in one write with its length, where a stream took a write for the page, another for
  // the chunked body's end, and turns of the event loop between them (a UI list's ask, each second while it is live).
  if (bytes < CHUNK_CHARS) return { status, headers, text: opening + texts.join(',') + closing };
  async function* body() {
    let chunk = opening;
    for (let i = 0; i < texts.length; i++) {
      chunk += (i ? ',' : '') + texts[i];
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk + closing;
  }
  return { status, headers, slices: body() };
}
