// Patterns from clients run on RE2: what it accepts means what RegExp means, in time linear in the text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePattern, PatternError, MAX_TEXT_CHARS, WORK_PER_TEST } from '../../server/query/pattern.js';

test('accepted patterns give the verdicts RegExp gives', () => {
  const texts = ['', 'POST /pay', 'GET /api/v2/users/42', 'a'.repeat(30) + '!', 'Ünïcödé 東京', 'line one\nline two', 'x.y*z', 'tab\there', '2026-01-15T09:30:00Z'];
  const patterns = [
    '^POST',
    'pay$',
    '/api/v\\d+/users/\\d+',
    '(a+)+$',
    '^(a+)+!$',
    '\\bone\\b',
    '^line two$',
    '(?i)post',
    '(?m)^line two$',
    'x\\.y\\*z',
    '[[:alpha:]]+',
    '\\p{L}+',
    '東京',
    '^\\S+\\s\\S+$',
    'a{2,5}!',
    '(?:GET|POST) /',
    '(?<verb>GET) ',
    '\\t',
    '^\\d{4}-\\d{2}-\\d{2}T',
    '.',
    '^$',
    '[^a-z]',
    'x\\x2ey',
  ];
  for (const p of patterns) {
    const re2 = compilePattern(p);
    // (?i) and (?m) as RegExp flags, (?<name>) as RegExp writes it.
    const flags = p.startsWith('(?i)') ? 'i' : p.startsWith('(?m)') ? 'm' : '';
    const js = new RegExp(p.replace(/^\(\?[im]\)/, '').replace('[[:alpha:]]', '[A-Za-z]'), `${flags}u`);
    for (const t of texts) assert.equal(re2.test(t), js.test(t), `/${p}/ on ${JSON.stringify(t)}`);
  }
});

test('a catastrophic pattern runs in linear time', () => {
  const evil = compilePattern('(a+)+$');
  const started = performance.now();
  assert.equal(evil.test(`${'a'.repeat(evil.maxChars - 1)}!`), false);
  assert.ok(performance.now() - started < 1000);
});

test('each pattern is run on texts as long as its size allows, and a longer text never matches', () => {
  const small = compilePattern('a');
  assert.ok(small.maxChars > 40_000 && small.maxChars <= MAX_TEXT_CHARS, `a plain pattern runs on ${small.maxChars} characters`);
  const large = compilePattern('(?:ab|cd){1,300}');
  assert.ok(large.maxChars < MAX_TEXT_CHARS && large.maxChars >= Math.floor(WORK_PER_TEST / 2000));
  assert.equal(large.test('ab'.repeat(10)), true);
  assert.equal(large.test('ab' + 'x'.repeat(large.maxChars)), false);
});

test('what RE2 cannot run is refused naming the pattern and why', () => {
  for (const [p, why] of /** @type {[string, RegExp][]} */ ([
    ['(a)\\1', /backreferences/],
    ['(?<n>a)\\k<n>', /backreferences/],
    ['a(?!b)', /lookahead and lookbehind/],
    ['(?<=a)b', /lookahead and lookbehind/],
    ['\\u0041', /\\x\{2603\}/],
    ['\\cA', /\\x01/],
    ['[^]', /empty class/],
    ['a{1001}', /invalid repeat count/],
  ])) {
    assert.throws(
      () => compilePattern(p),
      (/** @type {any} */ err) => err instanceof PatternError && err.message.startsWith(`pattern /${p}/ is refused: `) && why.test(err.message),
      p,
    );
  }
});
