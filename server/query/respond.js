// Sends a page as JSON, built while it is sent: items are turned into their views and text in slices, as
// the socket takes them, so a large page neither holds the event loop nor becomes one huge string.
import { Readable } from 'node:stream';
import { nextCursor } from './engine.js';
import { Slicer } from './scan.js';

const CHUNK_CHARS = 64 * 1024;

/**
 * @param {import('fastify').FastifyReply} reply
 * @param {import('./engine.js').Listing} listing @param {import('./engine.js').Page} page
 * @param {{ status?: number, error?: string }} [options] `error`: why a wait ran out (408)
 */
export function sendPage(reply, listing, page, { status = 200, error } = {}) {
  /** @type {Record<string, any>} */
  const tail = { total: page.total, ...page.extra };
  const cursor = nextCursor(page);
  if (cursor) tail.nextCursor = cursor;
  if (error !== undefined) tail.error = error;
  const { items } = page;
  async function* body() {
    let text = `{"${listing.field}":[`;
    const slicer = new Slicer();
    for (let i = 0; i < items.length; i++) {
      text += (i ? ',' : '') + JSON.stringify(listing.view(items[i]));
      if (text.length >= CHUNK_CHARS) {
        yield text;
        text = '';
      }
      if (slicer.due()) await slicer.pause();
    }
    yield `${text}],${JSON.stringify(tail).slice(1)}`;
  }
  return reply.code(status).type('application/json; charset=utf-8').send(Readable.from(body(), { objectMode: false }));
}
