// Regular expressions that clients send (verify's `matches`, snapshot's `mask`) run on RE2's engine, whose
// time is linear in the text: `(a+)+$` cannot backtrack. Linear is not free, though: a pattern that
// compiles to many instructions costs that many steps per character, so the compiled size is capped and
// each pattern is run only on texts short enough that one test stays well under a millisecond's slice.
import { RE2JS, RE2JSException } from 're2js';

/** The longest pattern taken, in characters. */
export const MAX_PATTERN_CHARS = 1000;
/** The most instructions a pattern may compile to (`a{1000}` is a thousand; `(\w|\d){1,300}` twelve hundred). */
export const MAX_PATTERN_INSTRUCTIONS = 2000;
/**
 * Instructions × characters one test may cost. Measured on RE2's slowest path (texts that keep many
 * threads alive): 10–100 ns per instruction and character, so a test stays within a few milliseconds.
 */
export const WORK_PER_TEST = 1 << 17;
/** The longest text a pattern is run on, however small it is. */
export const MAX_TEXT_CHARS = 64 * 1024;

export class PatternError extends Error {}

/**
 * @typedef {object} Pattern
 * @property {string} source as the client wrote it
 * @property {number} maxChars texts longer than this are not run on and never match
 * @property {(text: string) => boolean} test whether the pattern matches somewhere in the text
 */

/** What RE2 leaves out of JavaScript's syntax, with what to write instead. */
const UNSUPPORTED = [
  { found: /\\[1-9]|\\k</, why: 'backreferences (\\1, \\k<name>) are not supported: patterns run on a linear-time engine (RE2)' },
  { found: /\(\?<?[=!]/, why: 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported: patterns run on a linear-time engine (RE2)' },
  { found: /\\u/, why: 'write a code point as \\x{2603}, not \\u2603 (RE2 syntax)' },
  { found: /\\c/, why: 'write a control character as \\x01, not \\cA (RE2 syntax)' },
  { found: /\[\^?\]/, why: 'an empty class ([] or [^]) is not RE2 syntax: write (?s:.) for any character' },
];

/**
 * @param {string} source a regular expression in RE2 syntax (JavaScript's, less backreferences and lookaround)
 * @returns {Pattern} @throws {PatternError} naming the pattern and why it is refused
 */
export function compilePattern(source) {
  const known = compiled.get(source);
  if (known) return known;
  const pattern = compile(source);
  if (compiled.size >= KEPT) compiled.delete(/** @type {string} */ (compiled.keys().next().value));
  compiled.set(source, pattern);
  return pattern;
}

/** Patterns compiled lately: a test polling verify sends the same ones again and again. @type {Map<string, Pattern>} */
const compiled = new Map();
const KEPT = 256;

/** @param {string} source @returns {Pattern} */
function compile(source) {
  const named = `/${source}/`;
  if (source.length > MAX_PATTERN_CHARS) throw new PatternError(`pattern ${shorten(named)} is ${source.length} characters; at most ${MAX_PATTERN_CHARS}`);
  let re;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    const known = UNSUPPORTED.find((u) => u.found.test(source));
    throw new PatternError(`pattern ${named} is refused: ${known ? known.why : err.message.replace(/^error parsing regexp: /, '')}`);
  }
  const instructions = re.re2Input.prog.numInst();
  if (instructions > MAX_PATTERN_INSTRUCTIONS)
    throw new PatternError(
      `pattern ${named} is too large: it compiles to ${instructions} instructions, at most ${MAX_PATTERN_INSTRUCTIONS} (use smaller counted repeats {n,m})`,
    );
  const maxChars = Math.min(MAX_TEXT_CHARS, Math.floor(WORK_PER_TEST / instructions));
  return { source, maxChars, test: (text) => text.length <= maxChars && re.test(text) };
}

/** @param {string} text */
const shorten = (text) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);
