import { useEffect, useState, type ReactNode } from 'react';
import { setQueryParam } from '../router';

/** A text filter bound to a URL query parameter; `/` focuses the first one on the page. */
export function FilterInput({
  param,
  value,
  placeholder,
  width = 180,
  label,
}: {
  param: string;
  value: string;
  placeholder: string;
  width?: number;
  label: string;
}) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <input
      type="search"
      className="filter"
      data-filter={param}
      aria-label={label}
      placeholder={placeholder}
      style={{ width }}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        setQueryParam(param, e.target.value);
      }}
      onKeyDown={(e) => {
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
}: {
  param: string;
  value: string;
  options: { value: string; label: string }[];
  label: string;
}) {
  return (
    <select className="filter" aria-label={label} value={value} onChange={(e) => setQueryParam(param, e.target.value)}>
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
