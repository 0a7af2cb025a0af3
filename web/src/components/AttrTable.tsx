import { markBidi } from '../text';
import type { ReactNode } from 'react';
import type { AnyValue, Attributes } from '../generated/api';
import { formatValue } from '../format';

/** Attributes as a key/value table. Values are text nodes only: telemetry is untrusted input. */
export function AttrTable({ attrs, empty = 'none' }: { attrs: Attributes | undefined; empty?: string }) {
  const keys = attrs ? Object.keys(attrs).sort() : [];
  if (keys.length === 0) return <div className="muted small">{empty}</div>;
  return (
    <table className="kv">
      <tbody>
        {keys.map((k) => (
          <tr key={k}>
            <th title={k}>{breakable(markBidi(k))}</th>
            <td className={valueClass(attrs![k])}>{markBidi(formatValue(attrs![k]))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A key with line-break opportunities after its separators (`deployment.` `environment.` `name`), so
 * a long key wraps between its parts, never in the middle of one.
 */
export function breakable(key: string): ReactNode {
  const parts = key.split(/(?<=[./_\-:])/);
  if (parts.length < 2) return key;
  return parts.flatMap((p, i) => (i ? [<wbr key={i} />, p] : [p]));
}

function valueClass(v: AnyValue): string {
  if (typeof v === 'number') return 'v-num';
  if (typeof v === 'boolean') return 'v-bool';
  if (v !== null && typeof v === 'object') return 'v-obj';
  return 'v-str';
}

/** A row of a key/value table: a label and what it names. */
export function KvRow({ label, mono, children }: { label: string; mono?: boolean; children: ReactNode }) {
  return (
    <tr>
      <th>{label}</th>
      <td className={mono ? 'mono' : undefined}>{children}</td>
    </tr>
  );
}

export function Section({ title, children, count }: { title: string; children: ReactNode; count?: number }) {
  return (
    <section className="section">
      <h3>
        {title}
        {count !== undefined && <span className="count">{count}</span>}
      </h3>
      {children}
    </section>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  return (
    <button type="button" className="btn small" onClick={() => void navigator.clipboard?.writeText(text)}>
      {label}
    </button>
  );
}
