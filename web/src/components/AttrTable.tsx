import type { ReactNode } from 'react';
import type { AttrValue, Attrs } from '../types';
import { formatValue } from '../format';

/** Attributes as a key/value table. Values are text nodes only: telemetry is untrusted input. */
export function AttrTable({ attrs, empty = 'none' }: { attrs: Attrs | undefined; empty?: string }) {
  const keys = attrs ? Object.keys(attrs).sort() : [];
  if (keys.length === 0) return <div className="muted small">{empty}</div>;
  return (
    <table className="kv">
      <tbody>
        {keys.map((k) => (
          <tr key={k}>
            <th title={k}>{k}</th>
            <td className={valueClass(attrs![k])}>{formatValue(attrs![k])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function valueClass(v: AttrValue): string {
  if (typeof v === 'number') return 'v-num';
  if (typeof v === 'boolean') return 'v-bool';
  if (v !== null && typeof v === 'object') return 'v-obj';
  return 'v-str';
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

/** Pretty-printed JSON as one text node; large documents are cut so the tab stays responsive. */
export function JsonBlock({ value, limit = 400_000 }: { value: unknown; limit?: number }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const cut = text.length > limit;
  return (
    <>
      <pre className="json">{cut ? text.slice(0, limit) : text}</pre>
      {cut && (
        <div className="muted small">
          Showing the first {limit.toLocaleString('en-US')} of {text.length.toLocaleString('en-US')} characters.
        </div>
      )}
    </>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  return (
    <button type="button" className="btn small" onClick={() => void navigator.clipboard?.writeText(text)}>
      {label}
    </button>
  );
}
