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

const HIGHLIGHT_LIMIT = 150_000;
const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

/** Colours JSON by token, building text nodes only (never HTML); large documents stay plain for speed. */
function highlight(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let i = 0;
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const cls = m[1] ? (m[2] ? 'j-key' : 'j-str') : m[3] ? 'j-num' : 'j-lit';
    out.push(
      <span key={i++} className={cls}>
        {m[1] ?? m[0]}
      </span>,
    );
    if (m[2]) out.push(m[2]);
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Pretty-printed JSON; large documents are cut so the tab stays responsive. */
export function JsonBlock({ value, limit = 400_000 }: { value: unknown; limit?: number }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const cut = text.length > limit;
  const shown = cut ? text.slice(0, limit) : text;
  return (
    <>
      <pre className="json">{shown.length <= HIGHLIGHT_LIMIT ? highlight(shown) : shown}</pre>
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
