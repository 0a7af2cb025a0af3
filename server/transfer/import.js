// POST /api/import and `--import FILE`: OTLP/JSON lines (as GET /api/export writes them) stored as if
// they had been received, each with a journal entry of transport "import".
import { readFile } from 'node:fs/promises';
import { decodeBody } from '../otlp/decode-body.js';
import { DecodeError } from '../otlp/errors.js';
import { perSignal, SIGNAL_LIST, signalByName, signalWords } from '../otlp/signals.js';
import { keptBytes } from '../store/budget.js';
import { journalTime } from '../store/journal.js';
import { servicesOf } from '../store/store.js';

/**
 * @typedef {import('../otlp/signals.js').Signal} Signal
 * @typedef {{ signal: Signal, request: any, bytes: number, stored: number, json: boolean }} ImportedRequest
 *   `bytes`: the line's; `stored`: what the store keeps of it, the protobuf it is written into (as OTLP/JSON
 *   received on 4318 is), or the line when only decodeJson can read it (`json`)
 */

export class ImportError extends Error {
  /** @param {string} message @param {number} [line] 1-based line of the input, when one is to blame */
  constructor(message, line) {
    super(message);
    this.name = 'ImportError';
    this.line = line;
  }
}

/** Root fields in both spellings OTLP/JSON allows, to tell which signal a line holds. */
const ROOTS = SIGNAL_LIST.flatMap((s) => s.jsonRoots.map((field) => [field, s]));

/** @param {string} text @param {number} line @returns {Signal} */
function signalOfLine(text, line) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ImportError(`line ${line}: invalid JSON: ${/** @type {Error} */ (err).message}`, line);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ImportError(`line ${line}: expected an Export*ServiceRequest object`, line);
  const found = ROOTS.filter(([field]) => json[/** @type {string} */ (field)] !== undefined);
  if (found.length !== 1)
    throw new ImportError(
      `line ${line}: cannot tell the signal: expected exactly one of ${signalWords('or', (s) => s.rootField)} ` +
        `(or give ?signal=${SIGNAL_LIST.map((s) => s.name).join('|')})`,
      line,
    );
  return /** @type {Signal} */ (found[0][1]);
}

/**
 * Decodes every line before anything is stored, so that a bad line leaves the store untouched.
 * @param {string} text OTLP/JSON lines; blank lines are skipped
 * @param {{ signal?: string }} [options] the signal of every line, when the lines do not say
 * @returns {ImportedRequest[]}
 * @throws {ImportError} naming the first bad line
 */
export function parseLines(text, { signal: forced } = {}) {
  const fixed = forced ? signalByName(forced) : undefined;
  if (forced && !fixed) throw new ImportError(`unknown signal "${forced}"; use ${signalWords('or')}`);
  /** @type {ImportedRequest[]} */
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const signal = fixed ?? signalOfLine(line, i + 1);
    try {
      const body = Buffer.from(line);
      const { request, wire } = decodeBody(signal, body, true);
      out.push({ signal, request, bytes: body.length, stored: wire ? wire.length : body.length, json: !wire });
    } catch (err) {
      if (err instanceof DecodeError) throw new ImportError(`line ${i + 1}: ${err.message}`, i + 1);
      throw err;
    }
  }
  return out;
}

/**
 * Stores decoded requests as if received: the store's observers and the journal see them like any other.
 * Fault rules do not apply: an import replays what was already accepted once.
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} target
 * @param {ImportedRequest[]} requests
 * @param {{ path: string, userAgent?: string }} origin where they came from, for the journal
 */
export function storeImported({ store, journal }, requests, { path, userAgent = '' }) {
  /** @type {Record<string, number>} */
  const items = perSignal(() => 0);
  for (const { signal, request, bytes, stored, json } of requests) {
    const id = journal.nextId();
    const started = Date.now();
    const count = signal.countItems(request);
    store.addRequest(signal.name, request, id, keptBytes(signal.name, stored, count, json));
    items[signal.name] += count;
    /** @type {import('../store/journal.js').JournalEntry} */
    const entry = {
      id,
      time: journalTime(started),
      transport: 'import',
      signal: signal.name,
      services: servicesOf(signal, request),
      path,
      contentType: 'application/json',
      contentEncoding: '',
      bytes,
      items: count,
      userAgent,
      headers: {},
      fault: null,
      response: { status: 200, message: 'OK' },
      outcome: 'accepted',
      durationMs: Date.now() - started,
    };
    journal.record(entry);
  }
  return { requests: requests.length, items };
}

/**
 * @param {{ store: import('../store/store.js').Store, journal: import('../store/journal.js').Journal }} target
 * @param {string} file
 */
export async function importFile(target, file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ImportError(`import file ${file}: ${/** @type {Error} */ (err).message}`);
  }
  try {
    return storeImported(target, parseLines(text), { path: file });
  } catch (err) {
    if (err instanceof ImportError) throw new ImportError(`import file ${file}, ${err.message}`, err.line);
    throw err;
  }
}
