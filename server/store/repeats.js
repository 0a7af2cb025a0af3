// What the journal keeps of each request that the requests before it already gave: one copy for them all.
//
// The journal keeps 10,000 entries, and a client sends the same path, content type, user agent, headers and
// services with every request, so each of those was kept 10,000 times over. Over gRPC, when Node's HTTP/2 server read
// the headers, each header text was an external string holding a buffer of its library, which every garbage
// collection walks. Each entry
// outlives several scavenges, so all of it was moved to the old generation and marked there until the journal let
// it go: with `--max-requests 100` instead of 10,000, the gRPC metrics blast took 2-7 % more points per server
// CPU-second (four runs, each server beside the other under the same load).

/** Texts longer than this are rare enough (a long user agent, a custom header) to be kept as they come. */
const LONGEST_KEPT_TEXT = 256;
/** Distinct texts kept at once: past this many (a client that varies a header), the copies start over. */
const MOST_KEPT_TEXTS = 1024;

/** @type {Map<string, string>} */
const texts = new Map();

/**
 * The one copy of a text requests repeat, in the heap's own memory.
 * @param {string} text
 */
export function keptText(text) {
  if (text.length > LONGEST_KEPT_TEXT) return text;
  const kept = texts.get(text);
  if (kept !== undefined) return kept;
  if (texts.size >= MOST_KEPT_TEXTS) texts.clear();
  // A copy through a buffer: the text itself may be a view of memory outside the heap, kept alive by the text.
  const own = Buffer.from(text, 'utf8').toString('utf8');
  texts.set(own, own);
  return own;
}

/** @type {readonly string[]} */
let lastList = Object.freeze([]);

/**
 * The same list as the last request's, when it is equal to it (frozen: lists are shared between entries).
 * @param {string[]} list @returns {readonly string[]}
 */
export function keptList(list) {
  const last = lastList;
  if (list.length === last.length && list.every((text, i) => text === last[i])) return last;
  lastList = Object.freeze(list.map(keptText));
  return lastList;
}
