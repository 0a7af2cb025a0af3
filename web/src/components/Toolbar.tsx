import { useEffect, useState, type ReactNode } from 'react';
import { setQueryParam } from '../router';

/** How long typing pauses before a text filter goes to the URL, and so to the server. */
const TYPING_PAUSE_MS = 200;

/** A text filter bound to a URL query parameter; `/` focuses the first one on the page. */
export function FilterInput({ param, value, placeholder, width = 180, label }: { param: string; value: string; placeholder: string; width?: number; label: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => setQueryParam(param, text), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
    // Typing sets the parameter; a new value from the address is not typing.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- param and value are read, not watched
  }, [text]);
  return (
    <input
      type="search"
      className="filter"
      data-filter={param}
      aria-label={label}
      placeholder={placeholder}
      style={{ width }}
      value={text}
      onChange={(e) => setText(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') setQueryParam(param, text);
        if (e.key === 'Escape') (e.target as HTMLInputElement).blur();
      }}
    />
  );
}

/** A filter's options: "All …" (no filter) first, then each value labelled as itself. */
export function choices(all: string, values: readonly string[]): { value: string; label: string }[] {
  return [{ value: '', label: all }, ...values.map((v) => ({ value: v, label: v }))];
}

export function Select({
  param,
  value,
  options,
  label,
  onFocus,
}: {
  param: string;
  value: string;
  options: { value: string; label: string }[];
  label: string;
  onFocus?: () => void;
}) {
  return (
    <select className="filter" aria-label={label} value={value} onChange={(e) => setQueryParam(param, e.target.value)} onFocus={onFocus}>
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

export function Toolbar({ children, right }: { children: ReactNode; right?: ReactNode }) {
  return (
    <div className="toolbar">
      {children}
      <div className="spacer" />
      {right}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** The server's count of every stored match, or an ellipsis until it has answered. */
/** "1 trace", "12,500 traces": `noun` is the plural, `one` the singular when it is not the plural less its s. */
export function Total({ total, noun, one = noun.replace(/s$/, '') }: { total: number | null; noun: string; one?: string }) {
  return (
    <span className="muted total" data-total={total ?? ''}>
      {total === null ? '…' : `${total.toLocaleString('en-US')} ${total === 1 ? one : noun}`}
    </span>
  );
}

/** What a list shows instead of rows: the server's error, a wait, or why nothing matched. */
export function ListEmpty({
  list,
  filtered,
  nothingStored,
  noMatch,
}: {
  list: { loading: boolean; error: string | null; total: number | null };
  filtered: boolean;
  nothingStored: string;
  noMatch: string;
}) {
  if (list.error) return <div className="empty error-text">{list.error}</div>;
  if (list.loading || list.total === null) return <Empty>Loading…</Empty>;
  return <Empty>{filtered ? noMatch : nothingStored}</Empty>;
}
