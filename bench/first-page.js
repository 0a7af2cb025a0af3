#!/usr/bin/env node
/**
 * What a view's ask for its first page costs while telemetry arrives (`npm run bench:first-page`): a full store
 * (100,000 spans of the span benchmark's requests, 12,500 traces, or 100,000 traces of one span; 100,000 log
 * records), then, in turn, N new items and one ask of the Traces (sort=start) or Logs (sort=time) list's first 100,
 * as a tab open on it asks once a second. Each ask is answered from the page kept between asks (query/kept-page.js, kept-traces.js) and, in the
 * same run, by a scan of everything stored (what a waiter does), with N as a second's worth at 20,000 items/s
 * (12,000 spans, 6,000 records), a tenth and a hundredth of it; medians of 25 asks, in one process, nothing else
 * running. The scan between two kept asks reads every new item's key first, which a tab asking alone does not have
 * done for it: the last column asks the kept page alone, in a store of its own.
 */
import { Store } from '../server/store/store.js';
import { listing } from '../server/query/engine.js';
import { decodeProto } from '../server/otlp/items.js';
import { encodeRequest } from '../server/otlp/schema.js';
import { signalByName } from '../server/otlp/signals.js';
import { newTraceRequests, TRACES } from './workload.js';
import { logRequest } from './fill.js';

const ASKS = 25;
const LOGS = /** @type {import('../server/otlp/signals.js').Signal} */ (signalByName('logs'));

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** @param {boolean} [alone] a trace of each span */
function spanSender(alone = false) {
  const next = newTraceRequests(8, alone);
  return () => {
    const { body } = next();
    return { request: decodeProto(TRACES, body, { lazy: true }), bytes: body.length };
  };
}

function logSender() {
  let next = 0;
  return () => {
    const body = encodeRequest('logs', logRequest(next++));
    return { request: decodeProto(LOGS, body, { lazy: true }), bytes: body.length };
  };
}

const LISTS = [
  { kind: 'traces', signal: 'traces', query: { sort: 'start', order: 'desc', limit: '100' }, perSecond: 12_000, make: spanSender },
  { kind: 'traces', signal: 'traces', query: { sort: 'start', order: 'desc', limit: '100' }, perSecond: 12_000, make: () => spanSender(true) },
  { kind: 'logs', signal: 'logs', query: { sort: 'time', order: 'desc', limit: '100' }, perSecond: 6_000, make: logSender },
];

/**
 * A full store of `list`'s items, and the medians of ASKS asks of each of `hows` in turn, `between` new items before
 * each ask. @param {typeof LISTS[number]} list @param {number} between @param {('kept'|'scanned')[]} hows
 */
async function measure(list, between, hows) {
  const store = new Store({});
  const send = list.make();
  let requestId = 0;
  /** @param {number} items */
  const add = (items) => {
    for (let n = 0; n < items;) {
      const { request, bytes } = send();
      n += store.addRequest(/** @type {any} */ (list.signal), request, ++requestId, bytes);
    }
  };
  add(120_000);
  return { store, ...(await asks(store, add, list, between, hows)) };
}

/**
 * @param {Store} store @param {(items: number) => void} add @param {typeof LISTS[number]} list @param {number} between
 * @param {('kept'|'scanned')[]} hows
 */
async function asks(store, add, list, between, hows) {
  /** @type {Record<string, number[]>} */
  const times = { kept: [], scanned: [] };
  for (let i = 0; i < ASKS; i++) {
    for (const how of i % 2 ? hows : [...hows].reverse()) {
      add(between / hows.length);
      const asked = listing(/** @type {any} */ (list.kind), list.query, { store, journal: /** @type {any} */ (null) });
      const t0 = performance.now();
      // A waiter's page (with its progress) always scans; a view's is kept.
      await (how === 'kept' ? asked.page() : asked.page({ lowest: Infinity }));
      times[how].push(performance.now() - t0);
    }
  }
  return { kept: median(times.kept), scanned: median(times.scanned) };
}

const rows = [];
for (const list of LISTS) {
  for (const between of [list.perSecond, list.perSecond / 10, list.perSecond / 100]) {
    const { store, kept, scanned } = await measure(list, between, ['kept', 'scanned']);
    // Asked alone, as one tab asks: nothing else reads the new items' keys before the kept page does.
    const { kept: alone } = await measure(list, between, ['kept']);
    rows.push({
      list: `${list.kind} (${store.ring(/** @type {any} */ (list.signal)).size.toLocaleString('en')} stored${list.kind === 'traces' ? `, ${store.traces.size.toLocaleString('en')} traces` : ''})`,
      between,
      kept,
      scanned,
      alone,
    });
  }
}

console.log('\nfirst page of 100, asked between arrivals (median ms of %d asks)\n', ASKS);
console.log('list                                        new items between asks    kept    scan   scan/kept   kept, asked alone');
for (const r of rows) {
  console.log(
    `${r.list.padEnd(44)}${String(r.between).padStart(22)}${r.kept.toFixed(2).padStart(8)}${r.scanned.toFixed(2).padStart(8)}${(r.scanned / r.kept).toFixed(1).padStart(11)}${r.alone.toFixed(2).padStart(20)}`,
  );
}
