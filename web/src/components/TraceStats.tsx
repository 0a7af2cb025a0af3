import { useMemo } from 'react';
import { markBidi } from '../text';
import { formatDuration } from '../format';
import { ServiceDot } from './Service';
import { operationStats } from './traceStats';
import type { Tree } from './traceTree';

/** The trace's statistics: per operation, how many spans, their total time and their self time (less their children's). */
export function TraceStats({ tree }: { tree: Tree }) {
  const rows = useMemo(() => operationStats(tree), [tree]);
  const selfSum = rows.reduce((n, r) => n + r.selfMs, 0);
  return (
    <div className="scroll trace-stats">
      <table className="grid-table" aria-label="Trace statistics">
        <thead>
          <tr>
            <th>Service</th>
            <th>Operation</th>
            <th className="num">Spans</th>
            <th className="num">Errors</th>
            <th className="num">Total</th>
            <th className="num">Avg</th>
            <th className="num">Max</th>
            <th className="num">Self</th>
            <th className="num">Self %</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.service}\u0000${r.name}`} data-operation={r.name} data-service-name={r.service}>
              <td>
                <ServiceDot service={r.service} />
                {markBidi(r.service)}
              </td>
              <td>{markBidi(r.name)}</td>
              <td className="num" data-stat="count">
                {r.count}
              </td>
              <td className="num">{r.errors ? <span className="badge error">{r.errors}</span> : ''}</td>
              <td className="num" data-stat="total">
                {formatDuration(r.totalMs)}
              </td>
              <td className="num">{formatDuration(r.totalMs / r.count)}</td>
              <td className="num">{formatDuration(r.maxMs)}</td>
              <td className="num" data-stat="self">
                {formatDuration(r.selfMs)}
              </td>
              <td className="num">{selfSum > 0 ? `${((r.selfMs / selfSum) * 100).toFixed(1)}%` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
