// The retry report of a fault rule: what the exporter did after each fault, read from the journal and judged
// by the OTLP specification's retry rules (DESIGN.md, "Protocol facts"): retry what is retryable, wait at
// least what Retry-After / RetryInfo asked, never retry what is not retryable; giving up is allowed.
//
// A retry is recognised as the next request of the same signal, transport, user agent and item count that
// started after the faulted one was answered: exporters resend the same batch, and the journal keeps no body.
//
// No retry yet is not "did not retry" until the exporter's wait has passed: until then a batch is "waiting",
// with the time it becomes final (`finalAt`). The wait is the Retry-After / RetryInfo given, else the exporter's
// own backoff, which the OTLP exporter specification leaves to each SDK ("exponential back-off with jitter").
// The longest first backoff among them: the Go SDK's exporters and the Collector's exporterhelper start at 5 s
// with a randomisation factor of 0.5, so up to 7.5 s (and wait the longer of that and a Retry-After); the JS
// exporters 1 s ± 20 % (a Retry-After as given), Java at most 1 s, Python 1 s (± 20 % in recent releases).
// Hence 7.5 s, plus 1 s for the retry to reach the server; `--retry-window-ms` changes it.
import { status as grpcStatus } from '@grpc/grpc-js';
import { FAULTED_OUTCOMES } from '../store/journal.js';
import { RETRYABLE_GRPC, RETRYABLE_HTTP } from './actions.js';

/** How long after a retryable answer a batch waits for its retry before "did not retry" is final, by default. */
export const RETRY_WINDOW_MS = 8_500;
/** Beyond a Retry-After / RetryInfo, for the exporter's timer and the retry's way to the server. */
const HINT_GRACE_MS = 1_000;

/**
 * @typedef {import('../store/journal.js').Journal} Journal
 * @typedef {import('../store/journal.js').JournalEntry} JournalEntry
 * @typedef {import('./rules.js').FaultRuleState} FaultRuleState
 *
 * @typedef {object} Attempt
 * @property {number} id the journal entry
 * @property {string} time when it arrived (ISO 8601)
 * @property {number|null} status HTTP status or gRPC code; null when nothing was sent (see `outcome`: reset, hang)
 * @property {JournalEntry['outcome']} outcome
 * @property {string|null} fault the rule that faulted it
 * @property {number} durationMs
 * @property {number|null} gapMs from the previous attempt's answer to this attempt's arrival
 *
 * @typedef {'honoured Retry-After'|'honoured RetryInfo'|'retried too soon'|'retried'|'did not retry'|
 *   'retried a non-retryable error'|'did not retry a non-retryable error'|'not an error'|'waiting'} Verdict
 *   `waiting`: a retryable answer with no retry yet, and the exporter's wait has not passed (see `finalAt`)
 *
 * @typedef {object} Chain one batch: the attempt the rule caught and the retries that followed
 * @property {Attempt[]} attempts
 * @property {boolean} retryable whether the first answer is retryable by the OTLP specification
 * @property {number|null} waitMs what Retry-After / RetryInfo asked for (Retry-After in whole seconds)
 * @property {number[]} gapsMs
 * @property {'delivered'|'gave up'|'not retried'|'waiting'} outcome `waiting`: the last attempt was answered with a
 *   retryable error and the exporter may still retry
 * @property {Verdict} verdict
 * @property {boolean} ok whether the exporter did as the specification says (a batch still waiting broke nothing yet)
 * @property {string|null} finalAt when a waiting batch's verdict and outcome become final (ISO 8601); null once final
 * @property {string} explanation
 *
 * @typedef {object} RetryReport
 * @property {FaultRuleState} rule
 * @property {Chain[]} chains
 * @property {Verdict|'not triggered'} verdict the worst chain's verdict (one that breaks the rules), else `waiting`
 *   while a batch waits, else the first's
 * @property {boolean} ok no batch broke the rules (so far, while one is waiting)
 * @property {boolean} final no batch is waiting: the verdict will not change unless the rule faults again
 * @property {string|null} finalAt when the last waiting batch becomes final (ISO 8601); null when final
 * @property {Partial<Record<Verdict, number>>} counts batches by verdict
 * @property {string} message
 *
 * @typedef {object} ReportOptions
 * @property {number} [now] the time to judge at (ms since the epoch)
 * @property {number} [windowMs] how long after a retryable answer to wait for a retry, at least (RETRY_WINDOW_MS)
 */

/** The journal's times are whole milliseconds, taken on the server. */
const TOLERANCE_MS = 5;

/** @param {JournalEntry} e */
const startOf = (e) => Date.parse(e.time);
/** @param {JournalEntry} e */
const endOf = (e) => startOf(e) + e.durationMs;
/** @param {JournalEntry} e */
export const batchKey = (e) => `${e.signal}\u0000${e.transport}\u0000${e.userAgent}\u0000${e.items}`;

/**
 * What the exporter was told, by the specification's rules.
 * @param {JournalEntry} e @param {FaultRuleState} rule @returns {{ retryable: boolean, waitMs: number|null, why: string }}
 */
export function judgeAnswer(e, rule) {
  const hinted = rule.retryAfterMs !== undefined && rule.retryAfterMs !== null;
  if (e.outcome === 'reset')
    return {
      retryable: true,
      waitMs: null,
      why:
        e.transport === 'grpc' || e.transport === 'otap'
          ? 'connection reset: clients see UNAVAILABLE, which is retryable'
          : 'connection reset (ECONNRESET): a transient network error, retryable',
    };
  if (e.outcome === 'hang' && !e.response)
    return { retryable: true, waitMs: null, why: 'no answer (hang): a timeout for the client, retryable while the export has time left' };
  if (e.outcome === 'abandoned')
    return { retryable: true, waitMs: null, why: 'the client gave up before the answer: a timeout for the client, retryable while the export has time left' };
  const status = /** @type {NonNullable<JournalEntry['response']>} */ (e.response).status;
  // An OTAP batch's status uses gRPC's codes but has no details: the retry hint is only words in its message, so no
  // exporter can be held to it, and RESOURCE_EXHAUSTED comes without the RetryInfo that would make it retryable
  // (otel-arrow's exporter gives the batch up as a permanent error).
  if (e.transport === 'otap') {
    if (status === grpcStatus.RESOURCE_EXHAUSTED) {
      return { retryable: false, waitMs: null, why: 'RESOURCE_EXHAUSTED in an OTAP BatchStatus, which carries no RetryInfo: not retryable' };
    }
    const retryable = RETRYABLE_GRPC.has(status);
    return { retryable, waitMs: null, why: `OTAP status code ${status}${retryable ? ': retryable' : ': not retryable'}` };
  }
  if (e.transport === 'grpc') {
    const waitMs = hinted ? /** @type {number} */ (rule.retryAfterMs) : null;
    if (status === grpcStatus.RESOURCE_EXHAUSTED)
      return hinted
        ? { retryable: true, waitMs, why: 'RESOURCE_EXHAUSTED with RetryInfo: retryable' }
        : { retryable: false, waitMs: null, why: 'RESOURCE_EXHAUSTED without RetryInfo: not retryable' };
    const retryable = RETRYABLE_GRPC.has(status);
    return {
      retryable,
      waitMs: retryable ? waitMs : null,
      why: `gRPC code ${status}${retryable ? ': retryable' : ': not retryable'}${retryable && hinted ? `, RetryInfo ${waitMs} ms` : ''}`,
    };
  }
  const retryable = RETRYABLE_HTTP.has(status);
  // Retry-After carries whole seconds, rounded up: that is what the exporter can honour.
  const waitMs = retryable && hinted ? Math.ceil(/** @type {number} */ (rule.retryAfterMs) / 1000) * 1000 : null;
  return { retryable, waitMs, why: `HTTP ${status}${retryable ? ': retryable' : ': not retryable'}${waitMs !== null ? `, Retry-After ${waitMs / 1000} s` : ''}` };
}

/** @param {JournalEntry} e @param {number|null} gapMs @returns {Attempt} */
const attemptOf = (e, gapMs) => ({
  id: e.id,
  time: e.time,
  status: e.response?.status ?? null,
  outcome: e.outcome,
  fault: e.fault?.id ?? null,
  durationMs: e.durationMs,
  gapMs,
});

/**
 * @param {Journal} journal @param {FaultRuleState} rule @param {ReportOptions} [options] @returns {RetryReport}
 */
export function retryReport(journal, rule, { now = Date.now(), windowMs = RETRY_WINDOW_MS } = {}) {
  const entries = journalByStart(journal);
  /** @type {Set<JournalEntry>} */
  const used = new Set();
  /** @type {Chain[]} */
  const chains = [];
  for (const first of entries) {
    if (first.fault?.id !== rule.id || used.has(first)) continue;
    chains.push(judgeChain(retriesAfter(first, entries, used), rule, { now, windowMs }));
  }
  const worst = chains.find((c) => !c.ok) ?? chains.find((c) => c.verdict === 'waiting') ?? chains[0];
  const verdict = worst ? worst.verdict : 'not triggered';
  const ok = chains.length > 0 && chains.every((c) => c.ok);
  const pending = chains
    .map((c) => c.finalAt)
    .filter((t) => t !== null)
    .sort();
  /** @type {Partial<Record<Verdict, number>>} */
  const counts = {};
  for (const c of chains) counts[c.verdict] = (counts[c.verdict] ?? 0) + 1;
  const message = chains.length
    ? chains.map((c, i) => `${chains.length > 1 ? `batch ${i + 1}: ` : ''}${c.verdict}: ${c.explanation}`).join('\n')
    : `no request was caught by fault rule ${rule.id} yet (matched ${rule.matched}, applied ${rule.applied})`;
  return { rule, chains, verdict, ok, final: pending.length === 0, finalAt: pending.at(-1) ?? null, counts, message };
}

/** @param {Journal} journal */
const journalByStart = (journal) => [...journal.entries].sort((a, b) => startOf(a) - startOf(b) || a.id - b.id);

/**
 * A batch's attempts from `first` on: each faulted attempt is followed by the next request of the same
 * batch that started once it was answered, until one is not faulted.
 * @param {JournalEntry} first @param {JournalEntry[]} entries by start @param {Set<JournalEntry>} used taken by other batches
 */
function retriesAfter(first, entries, used) {
  used.add(first);
  const list = [first];
  for (let current = first; FAULTED_OUTCOMES.has(current.outcome);) {
    const key = batchKey(current);
    const answered = endOf(current) - TOLERANCE_MS;
    // Only a request that arrived after this one can be its retry, however close their times are.
    const after = entries.indexOf(current) + 1;
    const next = entries.find((e, i) => i >= after && !used.has(e) && batchKey(e) === key && startOf(e) >= answered);
    if (!next) break;
    used.add(next);
    list.push(next);
    current = next;
  }
  return list;
}

/**
 * Every attempt of the batch one journal entry belongs to: the faulted attempts before it, it, and the
 * retries after it, with the gaps between them; what a request's page draws as a timeline.
 * @param {Journal} journal @param {number} id @returns {Attempt[]|null} null when the journal no longer holds it
 */
export function attemptsOf(journal, id) {
  const entries = journalByStart(journal);
  const at = entries.findIndex((e) => e.id === id);
  if (at < 0) return null;
  let first = entries[at];
  for (;;) {
    const key = batchKey(first);
    const start = startOf(first) + TOLERANCE_MS;
    let before = null;
    for (let i = entries.indexOf(first) - 1; i >= 0 && !before; i--) {
      const e = entries[i];
      if (FAULTED_OUTCOMES.has(e.outcome) && batchKey(e) === key && endOf(e) <= start) before = e;
    }
    if (!before) break;
    first = before;
  }
  const list = retriesAfter(first, entries, new Set());
  return list.map((e, i) => attemptOf(e, i === 0 ? null : startOf(e) - endOf(list[i - 1])));
}

/**
 * The time until which a retry of `last` may still come, or null when none is expected: the Retry-After /
 * RetryInfo with some grace, and never less than the window (the exporters' own first backoff).
 * @param {JournalEntry} last @param {FaultRuleState} rule @param {number} windowMs
 */
function retryDeadline(last, rule, windowMs) {
  if (!FAULTED_OUTCOMES.has(last.outcome)) return null;
  const answer = judgeAnswer(last, rule);
  if (!answer.retryable) return null;
  return endOf(last) + Math.max(windowMs, (answer.waitMs ?? 0) + HINT_GRACE_MS);
}

/** @param {number} ms */
const clockOf = (ms) => new Date(ms).toISOString().slice(11, 23);

/**
 * @param {JournalEntry[]} list @param {FaultRuleState} rule @param {{ now: number, windowMs: number }} when
 * @returns {Chain}
 */
function judgeChain(list, rule, { now, windowMs }) {
  const attempts = list.map((e, i) => attemptOf(e, i === 0 ? null : startOf(e) - endOf(list[i - 1])));
  const gapsMs = attempts.slice(1).map((a) => /** @type {number} */ (a.gapMs));
  const first = list[0];
  const last = list[list.length - 1];
  const retries = list.length - 1;
  const deadline = retryDeadline(last, rule, windowMs);
  const waiting = deadline !== null && now < deadline;
  /** @type {Chain['outcome']} */
  const outcome = !FAULTED_OUTCOMES.has(last.outcome) ? (retries ? 'delivered' : 'not retried') : waiting ? 'waiting' : retries ? 'gave up' : 'not retried';
  const answer = judgeAnswer(first, rule);
  const tried = `${list.length} attempt${list.length === 1 ? '' : 's'}${gapsMs.length ? `, gaps ${gapsMs.map((g) => `${g} ms`).join(', ')}` : ''}`;
  const ending =
    outcome === 'delivered'
      ? `delivered on attempt ${list.length}`
      : outcome === 'gave up'
        ? `gave up after ${list.length} attempts`
        : outcome === 'waiting'
          ? `waiting for attempt ${list.length + 1} until ${clockOf(/** @type {number} */ (deadline))} UTC (${Math.ceil((Number(deadline) - now) / 100) / 10} s)`
          : 'no further attempt';
  const finalAt = waiting ? new Date(/** @type {number} */ (deadline)).toISOString() : null;
  /** @param {Verdict} verdict @param {boolean} ok @param {string} why @returns {Chain} */
  const chain = (verdict, ok, why) => ({
    attempts,
    retryable: answer.retryable,
    waitMs: answer.waitMs,
    gapsMs,
    outcome,
    verdict,
    ok,
    finalAt,
    explanation: `${why}; ${tried}; ${ending}`,
  });
  if (!FAULTED_OUTCOMES.has(first.outcome)) return chain('not an error', true, `answered ${first.outcome} (${rule.action}): nothing to retry`);
  if (!answer.retryable) {
    return retries ? chain('retried a non-retryable error', false, `${answer.why}, yet it was retried`) : chain('did not retry a non-retryable error', true, answer.why);
  }
  if (!retries && waiting) return chain('waiting', true, `${answer.why}; no retry yet, and the exporter's wait has not passed`);
  if (!retries) {
    const within = deadline === null ? '' : ` within ${(deadline - endOf(last)) / 1000} s of the answer`;
    return chain('did not retry', false, `${answer.why}, yet it was not retried${within}`);
  }
  if (answer.waitMs === null) return chain('retried', true, answer.why);
  // Only the waits after this rule's own answers are judged against its Retry-After / RetryInfo.
  const short = gapsMs.filter((g, i) => list[i].fault?.id === rule.id && g < /** @type {number} */ (answer.waitMs) - TOLERANCE_MS);
  const hint = first.transport === 'grpc' ? 'RetryInfo' : 'Retry-After';
  if (short.length) return chain('retried too soon', false, `${answer.why}, but it waited only ${short.map((g) => `${g} ms`).join(', ')}`);
  return chain(hint === 'RetryInfo' ? 'honoured RetryInfo' : 'honoured Retry-After', true, `${answer.why}: waited at least ${answer.waitMs} ms each time`);
}
