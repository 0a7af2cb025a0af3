// The one scheduler of sliced work (server/turns.js) and the turns requests on the UI port take with it: at once on
// an idle server; while telemetry arrives, a request counts as at least REQUEST_COST_MS, so together they take about
// BUSY_SHARE of the loop (the admin API's scans ADMIN_SHARE), and a slice counts whether or not a pause ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_SHARE, BUSY_SHARE, REQUEST_COST_MS, Turn, noteArrival, requestTurn } from '../../server/turns.js';
import { Slicer } from '../../server/query/scan.js';

const TURNS = 10;
/** What TURNS request turns wait at least while telemetry arrives (the first owes nothing), less a fifth for the timers' leeway. */
const PACED_MS = (TURNS - 1) * REQUEST_COST_MS * ((1 - BUSY_SHARE) / BUSY_SHARE) * 0.8;

/** Takes TURNS request turns one after another, calling `between` after each ends; resolves with how long they took. @param {() => void} between */
async function turns(between) {
  const started = performance.now();
  for (let i = 0; i < TURNS; i++) {
    const end = await requestTurn();
    end();
    between();
  }
  return performance.now() - started;
}

test('on an idle server, request turns come one after another without waiting', async () => {
  await new Promise((resolve) => setTimeout(resolve, 150));
  const ms = await turns(() => {});
  assert.ok(ms < PACED_MS, `${TURNS} turns took ${ms.toFixed(1)} ms`);
});

test('while telemetry is stored between them, request turns wait their share, however little time passed', async () => {
  const ms = await turns(noteArrival);
  assert.ok(ms >= PACED_MS, `${TURNS} turns took ${ms.toFixed(1)} ms, at least ${PACED_MS.toFixed(0)} expected`);
});

/**
 * How long after a last slice of `sliceMs` by `work` the next turn comes, while telemetry arrives: counted from the
 * slice's end, as the rest it owes is (a loaded machine may run the next pass of the loop late, and that counts).
 * @param {Turn} work @param {number} sliceMs
 */
async function waitAfter(work, sliceMs) {
  await new Promise((resolve) => setTimeout(resolve, 150));
  await work.pause();
  const until = performance.now() + sliceMs;
  while (performance.now() < until);
  const sliceEnded = performance.now();
  // The work is done: what follows runs in a later pass of the event loop, as another request's work would.
  await new Promise((resolve) => setTimeout(resolve, 0));
  noteArrival();
  await new Turn().pause();
  return performance.now() - sliceEnded;
}

test('work that ends without a last pause has its last slice counted, and the next turn waits for it', async () => {
  const waited = await waitAfter(new Turn(), 5);
  const owed = 5 * ((1 - BUSY_SHARE) / BUSY_SHARE) * 0.8;
  assert.ok(waited >= owed, `the next turn came ${waited.toFixed(1)} ms after a last slice of 5 ms, at least ${owed.toFixed(0)} expected`);
});

test("after a slice of the admin API's work the next turn waits longer than after a decoder's, by its smaller share", async () => {
  // one slice's length: a longer one would owe more than the 50 ms a slice that ran long may hold the next turn back
  const sliceMs = 1;
  const waited = await waitAfter(new Slicer(), sliceMs);
  const owed = sliceMs * ((1 - ADMIN_SHARE) / ADMIN_SHARE) * 0.8;
  assert.ok(owed > 2 * sliceMs * ((1 - BUSY_SHARE) / BUSY_SHARE));
  assert.ok(waited >= owed, `the next turn came ${waited.toFixed(1)} ms after a query's slice of ${sliceMs} ms, at least ${owed.toFixed(0)} expected`);
});
