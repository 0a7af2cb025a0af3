// What `otlp-mock measure` prints and writes: a terminal table of medians with their spread, the JSON document
// (docs/measure.md names every field) and a page of plots drawn as inline SVG, so it opens offline.
import { round } from '../query/clients.js';

/**
 * @typedef {import('./run.js').RunRecord} RunRecord
 * @typedef {import('./run.js').RunResult} RunResult
 * @typedef {{ cpuPercent: number, p99LatencyMs: number, rssMb: number }|null} Overhead
 */

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** @param {RunResult[]} runs @param {string} label */
const ofLabel = (runs, label) => runs.filter((r) => r.label === label);

/**
 * What telemetry costs: the instrumented runs' medians less the baseline's; null without a baseline.
 * @param {RunResult[]} runs @returns {Overhead}
 */
export function overheadOf(runs) {
  const base = ofLabel(runs, 'baseline');
  const inst = ofLabel(runs, 'instrumented');
  if (!base.length || !inst.length) return null;
  const m = (/** @type {RunResult[]} */ list, /** @type {(r: RunResult) => number} */ f) => median(list.map(f));
  const baseCpu = m(base, (r) => r.cpu.seconds);
  return {
    cpuPercent: baseCpu ? round(((m(inst, (r) => r.cpu.seconds) - baseCpu) / baseCpu) * 100, 1) : 0,
    p99LatencyMs: round(m(inst, (r) => r.latencyMs.p99) - m(base, (r) => r.latencyMs.p99)),
    rssMb: round(m(inst, (r) => r.rssMb.mean) - m(base, (r) => r.rssMb.mean), 1),
  };
}

/** The `--json` document. @param {RunResult[]} runs */
export function jsonReport(runs) {
  return { runs, overhead: overheadOf(runs) };
}

/** "12.3 (11.9–13.0)": the median and, over several runs, the range. @param {number[]} values @param {number} [digits] */
function spread(values, digits = 1) {
  const text = (/** @type {number} */ v) => v.toFixed(digits);
  if (values.length < 2) return text(values[0] ?? 0);
  return `${text(median(values))} (${text(Math.min(...values))}–${text(Math.max(...values))})`;
}

/** The terminal table: one row per label, medians with their range across runs. @param {RunResult[]} runs @param {number} durationMs */
export function tableText(runs, durationMs) {
  const columns = ['', 'runs', 'req/s', 'errors', 'p50 ms', 'p99 ms', 'CPU s', 'CPU ms/req', 'RSS MB', 'RSS max', 'OTLP req', 'items/s', 'B/item'];
  const rows = [columns];
  for (const label of ['baseline', 'instrumented']) {
    const list = ofLabel(runs, label);
    if (!list.length) continue;
    const v = (/** @type {(r: RunResult) => number} */ f) => list.map(f);
    rows.push([
      label,
      String(list.length),
      spread(
        v((r) => r.requests / (durationMs / 1000)),
        0,
      ),
      spread(
        v((r) => r.errors),
        0,
      ),
      spread(
        v((r) => r.latencyMs.p50),
        2,
      ),
      spread(
        v((r) => r.latencyMs.p99),
        2,
      ),
      spread(
        v((r) => r.cpu.seconds),
        2,
      ),
      spread(
        v((r) => r.cpu.perRequestMs),
        3,
      ),
      spread(v((r) => r.rssMb.mean)),
      spread(v((r) => r.rssMb.max)),
      spread(
        v((r) => r.telemetry.requests),
        0,
      ),
      spread(
        v((r) => r.telemetry.itemsPerSecond),
        0,
      ),
      spread(
        v((r) => r.telemetry.bytesPerItem),
        0,
      ),
    ]);
  }
  const widths = columns.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (/** @type {string[]} */ r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const out = rows.map(line);
  const overhead = overheadOf(runs);
  if (overhead)
    out.push(
      '',
      `overhead (medians, instrumented − baseline): CPU ${overhead.cpuPercent >= 0 ? '+' : ''}${overhead.cpuPercent} %, ` +
        `p99 latency ${overhead.p99LatencyMs >= 0 ? '+' : ''}${overhead.p99LatencyMs} ms, RSS ${overhead.rssMb >= 0 ? '+' : ''}${overhead.rssMb} MB`,
    );
  return out.join('\n') + '\n';
}

/** @param {string} text */
const escape = (text) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

const COLORS = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2'];

/**
 * One plot: a line per series over seconds, axes with their extremes. Each polyline says what it draws
 * (`data-series`, and its point count in `data-points`), so a test can tell a drawn plot from an empty one.
 * @param {string} title @param {string} unit @param {{ label: string, points: { x: number, y: number }[] }[]} series
 */
function plot(title, unit, series) {
  const W = 560;
  const H = 180;
  const pad = { l: 48, r: 12, t: 24, b: 24 };
  const all = series.flatMap((s) => s.points);
  const x1 = Math.max(1, ...all.map((p) => p.x));
  const y1 = Math.max(1e-9, ...all.map((p) => p.y)) * 1.1;
  const X = (/** @type {number} */ x) => pad.l + (x / x1) * (W - pad.l - pad.r);
  const Y = (/** @type {number} */ y) => H - pad.b - (y / y1) * (H - pad.t - pad.b);
  const lines = series
    .map(
      (s, i) =>
        `<polyline data-series="${escape(s.label)}" data-points="${s.points.length}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.5" points="${s.points
          .map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`)
          .join(' ')}"/>`,
    )
    .join('');
  const legend = series.map((s, i) => `<tspan fill="${COLORS[i % COLORS.length]}">■ ${escape(s.label)}</tspan>`).join(' ');
  return `<svg class="plot" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escape(title)}">
<text x="${pad.l}" y="14" font-size="12" font-weight="600">${escape(title)} (${escape(unit)})</text>
<text x="${W - pad.r}" y="14" font-size="11" text-anchor="end">${legend}</text>
<line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="#999"/><line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${H - pad.b}" stroke="#999"/>
<text x="${pad.l - 4}" y="${pad.t + 4}" font-size="10" text-anchor="end">${round(y1, 1)}</text><text x="${pad.l - 4}" y="${H - pad.b}" font-size="10" text-anchor="end">0</text>
<text x="${pad.l}" y="${H - 8}" font-size="10">0 s</text><text x="${W - pad.r}" y="${H - 8}" font-size="10" text-anchor="end">${round(x1 / 1000, 1)} s</text>
${lines}</svg>`;
}

/** The `--html` page: for each run, CPU, RSS and latency over time. @param {RunRecord[]} records @param {string} title */
export function htmlReport(records, title) {
  const sections = records
    .map((rec, i) => {
      const r = rec.result;
      const cpu = [{ label: 'CPU', points: rec.samples.map((s) => ({ x: s.t, y: s.cpuPercent })) }];
      const rss = [{ label: 'RSS', points: rec.samples.map((s) => ({ x: s.t, y: s.rssMb })) }];
      const latency = [
        { label: 'p50', points: rec.latency.map((l) => ({ x: l.t, y: l.p50 })) },
        { label: 'p99', points: rec.latency.map((l) => ({ x: l.t, y: l.p99 })) },
      ];
      return `<section class="run" data-label="${escape(r.label)}">
<h2>Run ${i + 1}: ${escape(r.label)}</h2>
<p><code>${escape(r.command)}</code><br>${r.requests} requests, ${r.errors} errors; p99 ${r.latencyMs.p99} ms; CPU ${r.cpu.seconds} s (${r.cpu.perRequestMs} ms per request); RSS mean ${r.rssMb.mean} MB, max ${r.rssMb.max} MB; telemetry ${r.telemetry.requests} requests, ${r.telemetry.items} items, ${r.telemetry.bytes} bytes</p>
${plot('CPU', '% of one core', cpu)}
${plot('RSS', 'MB', rss)}
${rec.latency.length ? plot('Latency', 'ms, by the second answered', latency) : '<p class="muted">No load: no latency to plot (--url not given).</p>'}
</section>`;
    })
    .join('\n');
  const overhead = overheadOf(records.map((r) => r.result));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#111}svg.plot{display:inline-block;margin:4px 8px 4px 0;border:1px solid #ddd;background:#fff}code{background:#f3f3f3;padding:1px 4px}.muted{color:#666}</style>
</head><body>
<h1>${escape(title)}</h1>
${overhead ? `<p id="overhead">Overhead (medians, instrumented − baseline): CPU ${overhead.cpuPercent} %, p99 latency ${overhead.p99LatencyMs} ms, RSS ${overhead.rssMb} MB</p>` : ''}
${sections}
</body></html>
`;
}
