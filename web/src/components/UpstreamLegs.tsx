import { answerStatus, formatBytes, formatDuration } from '../format';
import { Link } from '../router';
import type { UpstreamLeg } from '../generated/api';
import { Section } from './AttrTable';

function legStatus(leg: UpstreamLeg): string {
  if (leg.status === null) return leg.outcome === 'pending' ? '…' : 'no answer';
  return answerStatus(leg.status, leg.transport);
}

function legClass(leg: UpstreamLeg): string {
  if (leg.outcome === 'accepted') return 'ok';
  if (leg.outcome === 'partial') return 'warn';
  if (leg.outcome === 'pending') return '';
  return 'error';
}

/** The otlp-mock → upstream leg of a forwarded request: the primary target's call, then each tee's. */
export function UpstreamLegs({ upstream, tees = [], stored }: { upstream: UpstreamLeg; tees?: UpstreamLeg[]; stored?: boolean }) {
  const legs = [upstream, ...tees];
  return (
    <Section title="Forwarded (otlp-mock → upstream)" count={legs.length}>
      <table className="grid-table upstream-legs" aria-label="Upstream calls">
        <thead>
          <tr>
            <th>Target</th>
            <th>Wire</th>
            <th className="num">Bytes</th>
            <th>Status</th>
            <th>Outcome</th>
            <th className="num">Time</th>
            <th>Message</th>
          </tr>
        </thead>
        <tbody>
          {legs.map((leg, i) => (
            <tr key={leg.target} data-leg={i === 0 ? 'primary' : 'tee'} data-outcome={leg.outcome}>
              <td>
                <span className="mono">{leg.url}</span> <span className="muted small">{i === 0 ? 'primary' : 'tee'}</span>
              </td>
              <td>
                <span className={`tag tag-${leg.transport}`}>{leg.transport}</span> <span className="muted small">{leg.encoding}</span>
              </td>
              <td className="num">{leg.bytes ? formatBytes(leg.bytes) : '—'}</td>
              <td>{legStatus(leg)}</td>
              <td>
                <span className={`badge ${legClass(leg)}`}>{leg.outcome}</span>
                {leg.fault && (
                  <Link to="/faults" className="small">
                    {' '}
                    {leg.fault.action} <span className="mono muted">{leg.fault.id}</span>
                  </Link>
                )}
              </td>
              <td className="num">{leg.outcome === 'pending' ? '…' : formatDuration(leg.durationMs)}</td>
              <td className="small">{leg.partialSuccess ? `${leg.partialSuccess.rejected} rejected: ${leg.partialSuccess.errorMessage}` : leg.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {stored !== undefined && (
        <div className="muted small">
          {stored
            ? 'The items this request carried are stored here, whatever the upstream answered: otlp-mock shows what reached it.'
            : 'Not stored: otlp-mock did not accept the request.'}
        </div>
      )}
    </Section>
  );
}
