// The console's last words on exit: a line per client saying what it sent and how (GET /api/clients has the rest).
import { visible } from './escape.js';

/** @param {number} n */
function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * "alpha a-1 (OTel-OTLP-Exporter-JavaScript/0.223.1, http/protobuf): 4 requests, 14 items, 2.1 KiB on the wire
 * (gzip, 3.41×), 153 B/item, batches 1–7 (median 2), every 1.2 s, 1 at once, answered in 2 ms (median), 0 faults, 0 retries"
 * @param {import('../query/clients.js').ClientReport[]} rows @returns {string} empty when nothing was received
 */
export function clientSummary(rows) {
  if (!rows.length) return '';
  const lines = rows.map((r) => {
    const who = `${r.service || '(no service.name)'}${r.instance ? ` ${r.instance}` : ''} (${r.userAgent || 'no user agent'}, ${r.wires.join('+')})`;
    const encodings = Object.keys(r.compression.encodings).join('+');
    const interval = r.intervalMs ? `, every ${(r.intervalMs / 1000).toFixed(1)} s` : '';
    return (
      `  ${visible(who)}: ${r.requests} requests, ${r.items} items, ${bytes(r.bytes.wire)} on the wire (${encodings}, ${r.compression.ratio}×), ` +
      `${Math.round(r.bytes.perItem)} B/item, batches ${r.batch.min}–${r.batch.max} (median ${r.batch.median})${interval}, ` +
      `${r.concurrency} at once, answered in ${r.answerMs.median} ms (median), ${r.faults} faults, ${r.retries} retries\n`
    );
  });
  return `Clients    ${rows.length}\n${lines.join('')}`;
}
