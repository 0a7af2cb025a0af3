// A node:test reporter for `npm test`, made to fit a green run on one screen: a line per test folder once all of
// its files have finished (test/run.js names how many each holds in OTLP_MOCK_TEST_FOLDERS; without it, a line per
// folder at the end), then every failed test, and every skipped test and suite, by name with its reason, then
// one closing line, `N passed, N failed, N skipped, ...`, which is what CI reads. The full TAP goes to a file
// beside it (test/run.js names it in OTLP_MOCK_TAP_FILE).
import { dirname, relative } from 'node:path';
import { inspect } from 'node:util';

/**
 * @typedef {{ pass: number, fail: number, skip: number, todo: number }} Counts
 * @typedef {Counts & { file: string, durationMs: number|null, names: string[], stderr: string[] }} FileState
 * @typedef {Counts & { files: number, done: number, durationMs: number, printed: boolean }} FolderState
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
  const firstLine = (
    String(cause?.message ?? cause ?? 'failed')
      .split('\n')
      .find((l) => l.trim()) ?? 'failed'
  ).trim();
  let text = firstLine;
  if (cause?.code === 'ERR_ASSERTION' && /equal/i.test(cause.operator ?? ''))
    text = `${cause.generatedMessage ? cause.operator : firstLine}: got ${short(cause.actual)}, expected ${short(cause.expected)}`;
  else if (cause?.name && cause.name !== 'Error' && cause.name !== 'AssertionError') text = `${cause.name}: ${firstLine}`;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** @param {Counts} c */
function countsText(c) {
  const counts = [`${c.pass} passed`];
  if (c.fail) counts.push(`${c.fail} failed`);
  if (c.skip) counts.push(`${c.skip} skipped`);
  if (c.todo) counts.push(`${c.todo} todo`);
  return counts.join(', ');
}

/** @param {string} folder @param {FolderState} f */
function folderLine(folder, f) {
  const mark = f.fail ? 'FAIL' : f.skip || f.todo ? 'skip' : 'ok  ';
  const files = `${f.done} file${f.done === 1 ? '' : 's'}`;
  return `${mark} ${shown(folder).padEnd(22)} ${files.padStart(8)}  ${countsText(f).padEnd(40)} ${seconds(f.durationMs)}\n`;
}

/** How many test files each folder holds, as test/run.js passes them; {} when run some other way. @returns {Record<string, number>} */
function expectedFolders() {
  try {
    return JSON.parse(process.env.OTLP_MOCK_TEST_FOLDERS ?? '{}');
  } catch {
    return {};
  }
}

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* summaryReporter(source) {
  const started = Date.now();
  const expected = expectedFolders();
  /** @type {Map<string, FileState>} */
  const files = new Map();
  /** @type {Map<string, FolderState>} */
  const folders = new Map();
  /** @type {Listed[]} */
  const failed = [];
  /** @type {Listed[]} */
  const skipped = [];
  const total = { pass: 0, fail: 0, skip: 0, todo: 0 };

  /** @param {string} file */
  const stateOf = (file) => {
    let f = files.get(file);
    if (!f) {
      f = { file, pass: 0, fail: 0, skip: 0, todo: 0, durationMs: null, names: [], stderr: [] };
      files.set(file, f);
    }
    return f;
  };
  /** @param {string} folder */
  const folderOf = (folder) => {
    let f = folders.get(folder);
    if (!f) {
      f = { files: expected[shown(folder)] ?? 0, done: 0, pass: 0, fail: 0, skip: 0, todo: 0, durationMs: 0, printed: false };
      folders.set(folder, f);
    }
    return f;
  };
  /** @param {FileState} f @param {'pass'|'fail'|'skip'|'todo'} kind */
  const count = (f, kind) => {
    f[kind]++;
    total[kind]++;
  };

  for await (const { type, data } of source) {
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
        count(f, 'fail');
        const why = f.stderr
          .filter((l) => !/^\s+at |^\s*\^+\s*$|^Node\.js v/.test(l))
          .slice(-2)
          .join(' | ');
        failed.push({ file: data.file, name: '(outside any test)', reason: why || reasonOf(data.details.error) });
      }
      const folder = folderOf(dirname(data.file));
      folder.done++;
      folder.durationMs += f.durationMs ?? 0;
      for (const kind of /** @type {const} */ (['pass', 'fail', 'skip', 'todo'])) folder[kind] += f[kind];
      if (folder.files && folder.done >= folder.files) {
        folder.printed = true;
        yield folderLine(dirname(data.file), folder);
      }
    } else if (isFile) {
      continue;
    } else if (type === 'test:pass' || type === 'test:fail') {
      const suite = data.details?.type === 'suite';
      // A suite counts only when it is skipped as a whole: its tests never ran, so nothing else names it.
      if (suite && (type === 'test:fail' || data.skip === undefined)) continue;
      const name = [...f.names.slice(0, data.nesting), data.name].join(' › ');
      const entry = { file: data.file, name: suite ? `${name} (the whole suite)` : name, line: data.line };
      if (type === 'test:fail') {
        count(f, 'fail');
        if (data.details?.error?.failureType !== 'subtestsFailed') failed.push({ ...entry, reason: reasonOf(data.details?.error) });
      } else if (data.skip !== undefined) {
        count(f, 'skip');
        skipped.push({ ...entry, reason: data.skip === true ? 'no reason given' : String(data.skip) });
      } else if (data.todo !== undefined) {
        count(f, 'todo');
        skipped.push({ ...entry, reason: `todo: ${data.todo === true ? 'no reason given' : data.todo}` });
      } else count(f, 'pass');
    }
  }

  for (const [folder, state] of folders) if (!state.printed) yield folderLine(folder, state);
  /** @param {Listed} t */
  const listed = (t) => `  ${shown(t.file)}${t.line ? `:${t.line}` : ''}  ${t.name}\n      ${t.reason}\n`;
  /** @param {Listed} t */
  const oneLine = (t) => `  ${shown(t.file)}${t.line ? `:${t.line}` : ''}  ${t.name} — ${t.reason}\n`;
  if (failed.length) yield `\nFailed (${failed.length}):\n${failed.map(listed).join('')}`;
  if (skipped.length) yield `\nSkipped (${skipped.length}):\n${skipped.map(oneLine).join('')}`;
  const tap = process.env.OTLP_MOCK_TAP_FILE;
  if (failed.length && tap) yield `\nEvery failure's diff and stack: ${tap} (or OTLP_MOCK_TEST_VERBOSE=1 npm test)\n`;
  yield `\n${total.pass} passed, ${total.fail} failed, ${total.skip} skipped, ${total.todo} todo in ${files.size} file${files.size === 1 ? '' : 's'}, ${seconds(Date.now() - started)}${tap && !failed.length ? ` (TAP: ${tap})` : ''}\n`;
}
