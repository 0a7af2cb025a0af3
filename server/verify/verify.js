// POST /api/verify: expectations checked on the server, waiting until all hold or the time runs out, and
// answered with a message that reads as a test failure: per expectation met or not, the nearest candidates
// and what differs, and what else arrived. Waiting re-checks only after something of the plan's signals
// arrived or left, and no more often than a few times a second: a check reads everything stored.
import { Slicer } from '../query/scan.js';
import { MAX_WAIT_MS } from '../query/params.js';
import { plainValue, attributesObject } from '../query/views.js';
import { compileSelector, VerifyError, ITEM_KINDS, isObject, MAX_CRITERIA } from './select.js';
import { itemWords } from '../query/engine.js';
import { signalByListKind } from '../otlp/signals.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('../store/store.js').Store} Store
 * @typedef {import('./select.js').ItemKind} ItemKind
 * @typedef {import('./select.js').Selector} Selector
 * @typedef {{ min: number, max: number, text: string }} Count
 * @typedef {{ index: number, name: string|null, signal: ItemKind, selector: Selector, count: Count, description: string }} Expectation
 * @typedef {{ timeoutMs: number, expectations: Expectation[], nothingElse: string[] }} Plan
 *
 * @typedef {object} ExpectationResult
 * @property {number} index
 * @property {string|null} name
 * @property {ItemKind} signal
 * @property {string} description e.g. `spans with service=checkout, name=POST /pay`
 * @property {string} count e.g. `exactly 1`
 * @property {number} found
 * @property {boolean} met
 * @property {string[]} matches a few of the matching items, described
 * @property {{ item: string, differs: { wanted: string, got: string }[] }[]} candidates unmet: the nearest misses
 *
 * @typedef {object} VerifyResult
 * @property {boolean} ok
 * @property {string} message
 * @property {number} elapsedMs
 * @property {ExpectationResult[]} expectations
 * @property {{ service: string, signal: ItemKind, item: string }[]} unexpected items of a nothingElse service no expectation matched
 * @property {Record<string, { total: number, byService: Record<string, number> }>} others what no expectation matched, per signal
 */

const SHOWN = 3;
/** The most expectations one request may hold: each is checked against every stored item of its signal. */
export const MAX_EXPECTATIONS = 100;
/**
 * While waiting, how soon a plan is checked again after something arrived: at least this long after the
 * last check ended, and at least RECHECK_FACTOR times as long as that check took, so a plan over a full
 * store re-reads it a few times a second at most whatever the arrival rate.
 */
export const RECHECK_MS = 50;
const RECHECK_FACTOR = 4;
const EXPECTATION_FIELDS = new Set(['signal', 'count', 'name']);
/** The store ring a kind of item lives in: its signal's. @param {ItemKind} kind */
const feedOf = (kind) => /** @type {import('../otlp/signals.js').Signal} */ (signalByListKind(kind)).name;
const COUNT_WORDS = ['exactly', 'atLeast', 'atMost', 'none'];

/**
 * @param {unknown} body @param {{ store: Store, journal: import('../store/journal.js').Journal }} sources
 * @returns {Promise<Plan>} @throws {VerifyError}
 */
export async function parsePlan(body, sources) {
  if (!isObject(body)) throw new VerifyError('body', 'must be {"timeoutMs": 5000, "expectations": [{"signal": "spans", "where": {...}, "count": {"exactly": 1}}]}');
  for (const key of Object.keys(body))
    if (!['timeoutMs', 'expectations', 'nothingElse'].includes(key)) throw new VerifyError(key, 'unknown field; the body takes timeoutMs, expectations, nothingElse');
  const timeoutMs = body.timeoutMs ?? 0;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_WAIT_MS)
    throw new VerifyError('timeoutMs', `must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}`);
  if (!Array.isArray(body.expectations) || body.expectations.length === 0) throw new VerifyError('expectations', 'must be a list of at least one expectation');
  if (body.expectations.length > MAX_EXPECTATIONS)
    throw new VerifyError(
      'expectations',
      `holds ${body.expectations.length} expectations; at most ${MAX_EXPECTATIONS} in one request, the limit: split them over several requests`,
    );
  const budget = { criteriaLeft: MAX_CRITERIA, slicer: new Slicer(1) };
  /** @type {Expectation[]} */
  const expectations = [];
  for (const [index, spec] of body.expectations.entries()) {
    const path = `expectations[${index}]`;
    if (!isObject(spec)) throw new VerifyError(path, 'must be an object: {"signal": "spans", "where": {...}, "count": {...}}');
    if (!ITEM_KINDS.includes(spec.signal)) throw new VerifyError(`${path}.signal`, `must be one of ${ITEM_KINDS.join(', ')}, got ${JSON.stringify(spec.signal)}`);
    if (spec.name !== undefined && typeof spec.name !== 'string')
      throw new VerifyError(`${path}.name`, 'must be a string: what the expectation is called in the message');
    const signal = /** @type {ItemKind} */ (spec.signal);
    const selector = await compileSelector(signal, spec, path, sources, budget, EXPECTATION_FIELDS);
    const count = parseCount(spec.count, `${path}.count`);
    const noun = signalByListKind(signal)?.item.many;
    const description = `${spec.name ? `${spec.name}: ` : ''}${noun}${selector.label ? ` with ${selector.label}` : ''}`;
    expectations.push({ index, name: spec.name ?? null, signal, selector, count, description });
  }
  const nothingElse = body.nothingElse === undefined ? [] : [body.nothingElse].flat();
  if (!nothingElse.every((s) => typeof s === 'string' && s !== ''))
    throw new VerifyError('nothingElse', 'must be a service name or a list of them: their items must all be matched by some expectation');
  return { timeoutMs, expectations, nothingElse };
}

/** @param {unknown} spec @param {string} path @returns {Count} */
function parseCount(spec, path) {
  if (spec === undefined) return { min: 1, max: Infinity, text: 'at least 1' };
  if (typeof spec === 'number') spec = { exactly: spec };
  if (!isObject(spec)) throw new VerifyError(path, 'must be {"exactly": n}, {"atLeast": n}, {"atMost": n}, both of those, or {"none": true}');
  for (const key of Object.keys(spec)) if (!COUNT_WORDS.includes(key)) throw new VerifyError(`${path}.${key}`, `unknown; count takes ${COUNT_WORDS.join(', ')}`);
  /** @param {string} key */
  const n = (key) => {
    const v = spec[key];
    if (v === undefined) return undefined;
    if (!Number.isInteger(v) || v < 0) throw new VerifyError(`${path}.${key}`, `must be a whole number, got ${JSON.stringify(v)}`);
    return /** @type {number} */ (v);
  };
  if (spec.none !== undefined) {
    if (spec.none !== true || Object.keys(spec).length > 1) throw new VerifyError(`${path}.none`, 'is {"none": true} alone');
    return { min: 0, max: 0, text: 'none' };
  }
  const exactly = n('exactly');
  if (exactly !== undefined) {
    if (Object.keys(spec).length > 1) throw new VerifyError(path, 'exactly goes alone; atLeast and atMost go together');
    return { min: exactly, max: exactly, text: `exactly ${exactly}` };
  }
  const min = n('atLeast') ?? 0;
  const max = n('atMost') ?? Infinity;
  if (min > max) throw new VerifyError(path, `atLeast ${min} is more than atMost ${max}`);
  const text = max === Infinity ? `at least ${min}` : min === 0 ? `at most ${max}` : `${min} to ${max}`;
  return { min, max, text };
}

/** @param {Entry} e @param {ItemKind} signal a short description of an item, for the message */
export function describeItem(e, signal) {
  const words = itemWords(signal);
  if (words) return words.describe(e);
  if (signal === 'spans') {
    const span = /** @type {import('../otlp/model.js').SpanEntry} */ (e);
    return `span ${JSON.stringify(span.outline().name)} (${e.ctx.service || 'no service'}, trace ${span.traceId.slice(0, 8)})`;
  }
  if (signal === 'logs') {
    const body = plainValue(e.item.body);
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return `log ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)} (${e.ctx.service || 'no service'}, severity ${e.item.severityNumber})`;
  }
  const attrs = JSON.stringify(attributesObject(e.item.attributes));
  return `data point of ${JSON.stringify(e.ctx.metric?.name)} (${e.ctx.service || 'no service'}${attrs === '{}' ? '' : `, ${attrs}`})`;
}

/** What an item is called in "what else arrived": its name, body or metric. @param {Entry} e @param {ItemKind} signal */
function shortName(e, signal) {
  const words = itemWords(signal);
  if (words) return words.name(e);
  if (signal === 'spans') return /** @type {import('../otlp/model.js').SpanEntry} */ (e).outline().name;
  if (signal === 'metrics') return e.ctx.metric?.name ?? '';
  const body = plainValue(e.item.body);
  return typeof body === 'string' ? body.slice(0, 40) : 'log';
}

/**
 * Checks every expectation against what is stored now, one scan per signal, in slices.
 * @param {Plan} plan @param {Store} store @param {number} elapsedMs @returns {Promise<VerifyResult>}
 */
export async function evaluate(plan, store, elapsedMs) {
  const results = plan.expectations.map((x) => ({ x, found: 0, matches: /** @type {string[]} */ ([]), near: /** @type {{ misses: number, e: Entry }[]} */ ([]) }));
  const elseServices = new Set(plan.nothingElse);
  /** @type {VerifyResult['unexpected']} */
  const unexpected = [];
  /** @type {VerifyResult['others']} */
  const others = {};
  const signals = [...new Set(plan.expectations.map((x) => x.signal))];
  // The clock is read every few criteria, or after each one where one may take long (a pattern, a walk up a trace).
  const slicer = new Slicer(plan.expectations.some((x) => x.selector.costly) ? 1 : 64);
  for (const signal of signals) {
    const mine = results.filter((r) => r.x.signal === signal);
    const other = (others[signal] = { total: 0, byService: /** @type {Record<string, number>} */ ({}) });
    /** @type {Map<string, Map<string, number>>} service → name → count, of what nothing matched */
    const names = new Map();
    /** @param {Entry} e @param {boolean} matchedAny */
    const counted = (e, matchedAny) => {
      if (matchedAny) return;
      other.total++;
      const service = e.ctx.service;
      other.byService[service] = (other.byService[service] ?? 0) + 1;
      const byName = names.get(service) ?? new Map();
      names.set(service, byName);
      const name = shortName(e, signal);
      byName.set(name, (byName.get(name) ?? 0) + 1);
      if (elseServices.has(service) && unexpected.length < 20) unexpected.push({ service, signal, item: describeItem(e, signal) });
    };
    await slicer.pause();
    const check = checker(store.ring(feedOf(signal))[Symbol.iterator](), mine, signal, slicer, counted);
    while (!check()) await slicer.pause();
    /** @type {any} */ (other).names = names;
  }
  /** @type {ExpectationResult[]} */
  const expectationResults = [];
  for (const { x, found, matches, near } of results) {
    const met = found >= x.count.min && found <= x.count.max;
    const candidates = [];
    if (!met && found === 0) {
      for (const { e } of near) {
        const differs = [];
        for (const c of x.selector.criteria) {
          if (!c.match(e)) differs.push({ wanted: c.label, got: c.actual(e) });
          if (slicer.due()) await slicer.pause();
        }
        candidates.push({ item: describeItem(e, x.signal), differs });
      }
    }
    expectationResults.push({ index: x.index, name: x.name, signal: x.signal, description: x.description, count: x.count.text, found, met, matches, candidates });
  }
  const ok = expectationResults.every((r) => r.met) && unexpected.length === 0;
  const message = messageOf(ok, expectationResults, unexpected, others, plan, elapsedMs);
  for (const o of Object.values(others)) delete (/** @type {any} */ (o).names);
  return { ok, message, elapsedMs, expectations: expectationResults, unexpected, others };
}

/**
 * Checks items against expectations until the slicer says the slice is used, criterion by criterion (a
 * request may hold a thousand criteria, some of them patterns), and takes up where it stopped when called
 * again. A plain function, not an async one: the loop runs a hundred million times for a large plan.
 * @param {Iterator<Entry>} items @param {{ x: Expectation, found: number, matches: string[], near: { misses: number, e: Entry }[] }[]} mine
 * @param {ItemKind} signal @param {Slicer} slicer @param {(e: Entry, matchedAny: boolean) => void} counted called once per item
 * @returns {() => boolean} true when every item is checked
 */
function checker(items, mine, signal, slicer, counted) {
  /** @type {Entry|null} */
  let e = null;
  let at = 0;
  let next = 0;
  let misses = 0;
  let matchedAny = false;
  return () => {
    for (;;) {
      if (e === null) {
        const step = items.next();
        if (step.done) return true;
        e = step.value;
        at = 0;
        next = 0;
        misses = 0;
        matchedAny = false;
      }
      while (at < mine.length) {
        const r = mine[at];
        const { criteria } = r.x.selector;
        while (next < criteria.length) {
          if (!criteria[next++].match(e)) misses++;
          if (slicer.due()) return false;
        }
        if (misses === 0) {
          matchedAny = true;
          r.found++;
          if (r.matches.length < 5) r.matches.push(describeItem(e, signal));
        } else if (misses < criteria.length || criteria.length === 1) keepNearest(r.near, misses, e);
        at++;
        next = 0;
        misses = 0;
      }
      counted(e, matchedAny);
      e = null;
    }
  };
}

/** Keeps the SHOWN items with the fewest failed criteria, the newest on a tie. @param {{ misses: number, e: Entry }[]} near @param {number} misses @param {Entry} e */
function keepNearest(near, misses, e) {
  if (near.length === SHOWN && near[SHOWN - 1].misses <= misses) return;
  near.push({ misses, e });
  near.sort((a, b) => a.misses - b.misses || b.e.seq - a.e.seq);
  if (near.length > SHOWN) near.pop();
}

/**
 * @param {boolean} ok @param {ExpectationResult[]} results @param {VerifyResult['unexpected']} unexpected
 * @param {VerifyResult['others']} others @param {Plan} plan @param {number} elapsedMs
 */
function messageOf(ok, results, unexpected, others, plan, elapsedMs) {
  const unmet = results.filter((r) => !r.met).length;
  const lines = [];
  if (ok) lines.push(`${results.length === 1 ? 'the expectation holds' : `all ${results.length} expectations hold`} (after ${elapsedMs} ms)`);
  else {
    const what = [];
    if (unmet) what.push(`${unmet} of ${results.length} expectation${results.length === 1 ? '' : 's'} not met`);
    if (unexpected.length) what.push(`unexpected items from ${plan.nothingElse.join(', ')}`);
    lines.push(`${what.join(' and ')} ${plan.timeoutMs ? `after ${plan.timeoutMs} ms` : '(checked once: timeoutMs is 0)'}`);
  }
  for (const r of results) {
    lines.push(`  ${r.met ? '✓' : '✗'} ${r.description}: expected ${r.count}, found ${r.found}`);
    if (r.met) continue;
    if (r.found > 0) {
      for (const m of r.matches) lines.push(`      found ${m}`);
      if (r.found > r.matches.length) lines.push(`      ... and ${r.found - r.matches.length} more`);
    } else if (r.candidates.length) {
      lines.push('      nearest:');
      for (const c of r.candidates) lines.push(`        ${c.item}: ${c.differs.map((d) => `${d.got}, wanted ${d.wanted}`).join('; ')}`);
    }
  }
  if (unexpected.length) {
    lines.push(`  ✗ nothing else from ${plan.nothingElse.join(', ')}, but:`);
    for (const u of unexpected) lines.push(`      ${u.item}`);
  }
  if (!ok) {
    const also = Object.entries(others)
      .filter(([, o]) => o.total > 0)
      .map(([signal, o]) => {
        /** @type {Map<string, Map<string, number>>} */
        const names = /** @type {any} */ (o).names;
        const bySize = [...names].sort((a, b) => sum(b[1]) - sum(a[1]));
        const services = bySize.slice(0, MAX_SERVICES_NAMED).map(([service, byName]) => {
          const top = [...byName].sort((a, b) => b[1] - a[1]);
          const shown = top.slice(0, 4).map(([name, n]) => `${JSON.stringify(name)}${n > 1 ? ` ×${n}` : ''}`);
          if (top.length > 4) shown.push(`${top.length - 4} more`);
          return `${service || '(no service)'}: ${shown.join(', ')}`;
        });
        // The line's total counts every service; the ones not named are counted too, so that it adds up.
        const rest = bySize.slice(MAX_SERVICES_NAMED);
        if (rest.length) services.push(`${rest.length} more service${rest.length === 1 ? '' : 's'} with ${rest.reduce((n, [, byName]) => n + sum(byName), 0)} ${signal}`);
        return `    ${o.total} ${signal} — ${services.join('; ')}`;
      });
    lines.push(also.length ? `  also stored, matched by no expectation:\n${also.join('\n')}` : '  nothing else is stored');
  }
  return lines.join('\n');
}

/** Services named on an "also stored" line, the largest first. */
const MAX_SERVICES_NAMED = 5;

/** @param {Map<string, number>} m */
const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);

/**
 * Evaluates the plan until it holds or `timeoutMs` passes, re-checking after items of its signals arrive or
 * leave: at most once per RECHECK_MS (longer when a check takes long), so that storing a request costs
 * the plan nothing but a flag. Resolves null when `gone` fires first (the client went away).
 * @param {Plan} plan @param {Store} store @param {{ onGone?: import('../query/respond.js').OnGone }} [options]
 * @returns {Promise<VerifyResult|null>}
 */
export async function verify(plan, store, { onGone } = {}) {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  let checkStarted = Date.now();
  let result = await evaluate(plan, store, 0);
  if (result.ok || plan.timeoutMs === 0) return result;
  let nextCheck = Date.now() + Math.max(RECHECK_MS, RECHECK_FACTOR * (Date.now() - checkStarted));
  const feeds = new Set(plan.expectations.map((x) => feedOf(x.signal)));
  return new Promise((resolve) => {
    let dirty = false;
    let running = false;
    let finished = false;
    /** @type {NodeJS.Timeout|undefined} */
    let recheck;
    const finish = (/** @type {VerifyResult|null} */ r) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(recheck);
      unsubscribe();
      stopWatchingClient();
      resolve(r);
    };
    const run = async () => {
      recheck = undefined;
      running = true;
      dirty = false;
      checkStarted = Date.now();
      result = await evaluate(plan, store, elapsed());
      nextCheck = Date.now() + Math.max(RECHECK_MS, RECHECK_FACTOR * (Date.now() - checkStarted));
      running = false;
      if (result.ok) return finish(result);
      schedule();
    };
    const schedule = () => {
      if (finished || !dirty || running || recheck) return;
      recheck = setTimeout(run, Math.max(0, nextCheck - Date.now()));
    };
    const unsubscribe = store.subscribe(({ signal }) => {
      if (finished || !feeds.has(signal)) return;
      dirty = true;
      schedule();
    });
    const timer = setTimeout(async () => {
      if (finished) return;
      const last = await evaluate(plan, store, elapsed());
      finish(last);
    }, plan.timeoutMs);
    const stopWatchingClient = onGone ? onGone(() => finish(null)) : () => {};
  });
}

export { VerifyError };
