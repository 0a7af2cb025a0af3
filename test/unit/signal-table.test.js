// The signal table (server/otlp/signals.js) is the one place a signal is described: no other module of the
// server or the web app lists the signals one by one, in an object keyed by them, an array or a type union of
// their names, or a table of pairs. A fourth signal then changes the table, not every room that reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIGNAL_NAMES } from '../../server/otlp/signals.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TABLE = 'server/otlp/signals.js';

/** @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' || name === 'node_modules' ? [] : sources(path);
    return /\.(js|ts|tsx)$/.test(name) && !/\.generated\.|\.d\.ts$/.test(name) ? [path] : [];
  });
}

const OPEN = '([{';
const CLOSE = ')]}';
/** A signal's name as an object key (`traces:`, `'traces':`) or as a quoted string (`'traces'`). */
const NAME = new RegExp(`(?<![\\w.$])(['"]?)(${SIGNAL_NAMES.join('|')})\\1\\s*:(?!:)|(['"\`])(${SIGNAL_NAMES.join('|')})\\3`, 'g');

/**
 * Bracketed groups ({...}, [...], (...)) naming every signal: as keys or quoted names directly inside, or as
 * the first name of each of its [...] entries (a table of pairs). Comments count: a JSDoc type union of the
 * names is a table too.
 * @param {string} text @returns {number[]} the offsets of the groups' opening brackets
 */
export function tablesIn(text) {
  /** @type {Map<number, Set<string>>} */
  const groups = new Map();
  for (const m of text.matchAll(NAME)) {
    const name = m[2] ?? m[4];
    let depth = 0;
    let inner = -1;
    // walks back to the bracket the name is in
    for (let i = /** @type {number} */ (m.index) - 1; i >= 0; i--) {
      const c = text[i];
      if (CLOSE.includes(c)) depth++;
      else if (OPEN.includes(c)) {
        if (depth > 0) {
          depth--;
          continue;
        }
        note(groups, i, name);
        // the first name of a [...] entry counts for the group around it too: a table of pairs
        if (inner >= 0 || c !== '[' || text.slice(i + 1, m.index).trim() !== '') break;
        inner = i;
      }
    }
  }
  return [...groups].filter(([, names]) => names.size === SIGNAL_NAMES.length).map(([at]) => at);
}

/** @param {Map<number, Set<string>>} groups @param {number} at @param {string} name */
function note(groups, at, name) {
  let names = groups.get(at);
  if (!names) groups.set(at, (names = new Set()));
  names.add(name);
}

test('the walk finds the shapes a per-signal table takes', () => {
  const names = SIGNAL_NAMES.map((n) => `'${n}'`);
  assert.equal(tablesIn(`const a = { ${SIGNAL_NAMES.map((n) => `${n}: 1`).join(', ')} };`).length, 1, 'an object keyed by the signals');
  assert.equal(tablesIn(`const a = {\n  ${SIGNAL_NAMES.map((n) => `${n}: new Set()`).join(',\n  ')},\n  requests: 0 };`).length, 1, 'over several lines, with more keys');
  assert.equal(tablesIn(`for (const s of [${names.join(', ')}]) f(s);`).length, 1, 'an array of the names');
  assert.equal(tablesIn(`/** @typedef {${names.join('|')}} Name */`).length, 1, 'a type union');
  assert.equal(tablesIn(`const a = [${names.map((n, i) => `[${n}, ${i}]`).join(', ')}];`).length, 1, 'a table of pairs');
  assert.equal(tablesIn(`const a = { ${names.map((n, i) => `k${i}: ${n}`).join(', ')} };`).length, 1, 'an object whose values are the names');
  assert.equal(tablesIn(`if (s === ${names[0]}) f(); else g(${names[1]});`).length, 0, 'a branch is not a table');
  assert.equal(tablesIn(`// POST /v1/{${SIGNAL_NAMES.join(',')}}`).length, 0, 'prose is not a table');
});

test('no per-signal table outside the signal table', () => {
  const files = [...sources(join(root, 'server')), ...sources(join(root, 'web/src'))];
  /** @type {string[]} */
  const where = [];
  for (const file of files) {
    const path = relative(root, file).split(sep).join('/');
    if (path === TABLE) continue;
    const text = readFileSync(file, 'utf8');
    const tables = tablesIn(text);
    for (const at of tables) where.push(`${path}:${text.slice(0, at).split('\n').length}`);
  }
  assert.deepEqual(where, [], `per-signal tables (read ${TABLE} instead): ${where.join(', ')}`);
});

/**
 * What names the profiles signal or its model: the word itself (profile, Profiles, profileId), its item class and
 * views (LazySample, sampleItemView), a sample's stack, the `samples` its row stores, and the dictionary's tables.
 * Arrow's dictionaries (server/otap/) and the CPU samples of `otlp-mock measure` are other things and do not match.
 */
const PROFILES_MODEL = /profil|LazySample|sampleItem|stackIndex|['"`]samples?['"`]|(string|attribute|function|location|stack|link|mapping)Table\b/i;
/** A signal lives in at most this many server files (docs/internals.md, "A signal"). */
const MAX_SIGNAL_FILES = 10;

test(`the profiles signal lives in at most ${MAX_SIGNAL_FILES} server files, generated ones aside`, () => {
  const files = sources(join(root, 'server'))
    .filter((file) => PROFILES_MODEL.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file).split(sep).join('/'))
    .sort();
  assert.ok(files.length > 0 && files.includes(TABLE), 'the pattern finds the signal table itself');
  assert.ok(files.length <= MAX_SIGNAL_FILES, `${files.length} server files name profiles or their model:\n  ${files.join('\n  ')}`);
});
