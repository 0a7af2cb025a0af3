// A node:test reporter for `npm test`: a line per test file as it finishes, then every failed, skipped or todo
// test by name with its reason, then the runner's own closing counts (`# tests N` ...) as the last lines, which
// is what CI reads. The full TAP goes to a file beside it (test/run.js names it in OTLP_MOCK_TAP_FILE).
import { relative } from 'node:path';
import { inspect } from 'node:util';

/**
 * @typedef {{ file: string, pass: number, fail: number, skip: number, todo: number, durationMs: number|null,
 *   names: string[], stderr: string[] }} FileState
 * @typedef {{ file: string, name: string, reason: string, line?: number }} Listed
 */

const LAST_STDERR_LINES = 12;

/** @param {string} file */
const shown = (file) => relative(process.cwd(), file) || file;

/** @param {number} ms */
function seconds(ms) {
  return ms < 100 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** @param {unknown} value */
const short = (value) => inspect(value, { depth: 2, breakLength: Infinity, maxArrayLength: 4, maxStringLength: 60 });

/**
 * What went wrong, on one line: an equality assertion's two values (its generated first line is only
 * "Expected values to be strictly equal:"), otherwise the message's first line. The diff and stack are in the TAP.
 * @param {any} error
 */
function reasonOf(error) {
  const cause = error?.cause ?? error;
  const firstLine = (String(cause?.message ?? cause ?? 'failed').split('\n').find((l) => l.trim()) ?? 'failed').trim();
  let text = firstLine;
  if (cause?.code === 'ERR_ASSERTION' && /equal/i.test(cause.operator ?? ''))
    text = `${cause.generatedMessage ? cause.operator : firstLine}: got ${short(cause.actual)}, expected ${short(cause.expected)}`;
  else if (cause?.name && cause.name !== 'Error' && cause.name !== 'AssertionError') text = `${cause.name}: ${firstLine}`;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** @param {FileState} f */
function fileLine(f) {
  const counts = [`${f.pass} passed`];
  if (f.fail) counts.push(`${f.fail} failed`);
  if (f.skip) counts.push(`${f.skip} skipped`);
  if (f.todo) counts.push(`${f.todo} todo`);
  const mark = f.fail ? 'FAIL' : f.skip || f.todo ? 'skip' : 'ok  ';
  return `${mark} ${shown(f.file).padEnd(44)} ${counts.join(', ').padEnd(34)} ${f.durationMs === null ? '' : seconds(f.durationMs)}\n`;
}

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* summaryReporter(source) {
  /** @type {Map<string, FileState>} */
  const files = new Map();
  /** @type {Listed[]} */
  const failed = [];
  /** @type {Listed[]} */
  const skipped = [];
  /** @type {string[]} */
  const closing = [];

  /** @param {string} file */
  const stateOf = (file) => {
    let f = files.get(file);
    if (!f) {
      f = { file, pass: 0, fail: 0, skip: 0, todo: 0, durationMs: null, names: [], stderr: [] };
      files.set(file, f);
    }
    return f;
  };

  for await (const { type, data } of source) {
    if (type === 'test:diagnostic' && !data.file) {
      closing.push(`# ${data.message}\n`);
      continue;
    }
    if (!data?.file) continue;
    const f = stateOf(data.file);
    const isFile = data.nesting === 0 && data.name === data.file;
    if (type === 'test:stderr') {
      f.stderr.push(...String(data.message).split('\n').filter(Boolean));
      f.stderr.splice(0, Math.max(0, f.stderr.length - LAST_STDERR_LINES));
    } else if (type === 'test:start' && !isFile) {
      f.names.length = data.nesting;
      f.names.push(data.name);
    } else if (type === 'test:complete' && isFile) {
      f.durationMs = data.details?.duration_ms ?? null;
      if (data.details?.error && !f.fail) {
        // The file failed outside any test (it did not load, or exited badly); node counts it as one failed test.
        f.fail++;
        const why = f.stderr.filter((l) => !/^\s+at |^\s*\^+\s*$|^Node\.js v/.test(l)).slice(-2).join(' | ');
        failed.push({ file: data.file, name: '(outside any test)', reason: why || reasonOf(data.details.error) });
      }
      yield fileLine(f);
    } else if (isFile) {
      continue;
    } else if (type === 'test:pass' || type === 'test:fail') {
      if (data.details?.type === 'suite') continue;
      const name = [...f.names.slice(0, data.nesting), data.name].join(' › ');
      const entry = { file: data.file, name, line: data.line };
      if (type === 'test:fail') {
        f.fail++;
        if (data.details?.error?.failureType !== 'subtestsFailed') failed.push({ ...entry, reason: reasonOf(data.details?.error) });
      } else if (data.skip !== undefined) {
        f.skip++;
        skipped.push({ ...entry, reason: `skipped: ${data.skip === true ? 'no reason given' : data.skip}` });
      } else if (data.todo !== undefined) {
        f.todo++;
        skipped.push({ ...entry, reason: `todo: ${data.todo === true ? 'no reason given' : data.todo}` });
      } else f.pass++;
    }
  }

  /** @param {Listed} t */
  const listed = (t) => `  ${shown(t.file)}${t.line ? `:${t.line}` : ''}  ${t.name}\n      ${t.reason}\n`;
  if (failed.length) yield `\nFailed (${failed.length}):\n${failed.map(listed).join('')}`;
  if (skipped.length) yield `\nSkipped (${skipped.length}):\n${skipped.map(listed).join('')}`;
  if (failed.length && process.env.OTLP_MOCK_TAP_FILE)
    yield `\nEvery failure's diff and stack: ${process.env.OTLP_MOCK_TAP_FILE} (or OTLP_MOCK_TEST_VERBOSE=1 npm test)\n`;
  yield '\n';
  yield* closing;
}
