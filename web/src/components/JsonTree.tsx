import { markBidi } from '../text';
import { Icon } from './Icon';
import { useMemo, useState, type ReactNode } from 'react';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Levels open when a document is shown: deep enough to reach an OTLP request's spans, records or metrics. */
const OPEN_DEPTH = 4;
/** Children shown of a long array or object until "show all" is asked for. */
const FIRST_CHILDREN = 100;
const MAX_MATCHES = 2000;

const isObject = (v: Json): v is Json[] | { [key: string]: Json } => v !== null && typeof v === 'object';
const childPath = (path: string, key: string | number) => `${path}/${key}`;

/** Paths of the nodes whose key or (scalar) value contains `needle`, and every ancestor of one. */
function search(value: Json, needle: string): { hits: Set<string>; open: Set<string> } {
  const hits = new Set<string>();
  const open = new Set<string>();
  if (!needle) return { hits, open };
  const visit = (v: Json, key: string, path: string): boolean => {
    if (hits.size >= MAX_MATCHES) return false;
    let found = key.toLowerCase().includes(needle) || (!isObject(v) && String(v).toLowerCase().includes(needle));
    if (found) hits.add(path);
    if (isObject(v)) {
      let below = false;
      for (const [k, c] of Object.entries(v)) if (visit(c, k, childPath(path, k))) below = true;
      if (below) open.add(path);
      found ||= below;
    }
    return found;
  };
  visit(value, '', '');
  return { hits, open };
}

/** Marks where `needle` occurs in `text`, as text nodes and <mark>s (never HTML). */
function marked(raw: string, needle: string): ReactNode {
  const text = markBidi(raw);
  if (!needle) return text;
  const lower = text.toLowerCase();
  const out: ReactNode[] = [];
  let at = 0;
  for (let i = lower.indexOf(needle); i >= 0; i = lower.indexOf(needle, at)) {
    out.push(text.slice(at, i), <mark key={i}>{text.slice(i, i + needle.length)}</mark>);
    at = i + needle.length;
  }
  out.push(text.slice(at));
  return out;
}

/**
 * A JSON document as a folding tree with search: a search opens the branches that lead to what it finds
 * and marks it. Only open branches are rendered, so a request of thousands of spans opens at once.
 */
export function JsonTree({ value, actions }: { value: unknown; actions?: ReactNode }) {
  const [text, setText] = useState('');
  const needle = text.trim().toLowerCase();
  const found = useMemo(() => search(value as Json, needle), [value, needle]);
  const [toggled, setToggled] = useState<Map<string, boolean>>(new Map());
  const [full, setFull] = useState<Set<string>>(new Set());
  const isOpen = (path: string, depth: number) => toggled.get(path) ?? (found.open.has(path) || (!needle && depth < OPEN_DEPTH));
  const toggle = (path: string, depth: number) => setToggled((m) => new Map(m).set(path, !isOpen(path, depth)));

  const node = (key: string | number | null, v: Json, path: string, depth: number): ReactNode => {
    const label = key === null ? null : <span className={typeof key === 'number' ? 'jt-index' : 'j-key'}>{typeof key === 'number' ? key : marked(key, needle)}: </span>;
    const hit = found.hits.has(path) ? ' jt-hit' : '';
    if (!isObject(v)) {
      const cls = typeof v === 'string' ? 'j-str' : typeof v === 'number' ? 'j-num' : 'j-lit';
      return (
        <div className={`jt-leaf${hit}`} key={path} data-path={path}>
          {label}
          <span className={cls}>{marked(typeof v === 'string' ? JSON.stringify(v) : String(v), needle)}</span>
        </div>
      );
    }
    const entries: [string | number, Json][] = Array.isArray(v) ? v.map((c, i) => [i, c]) : Object.entries(v);
    const open = isOpen(path, depth);
    const [l, r] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
    const shown = full.has(path) || needle ? entries : entries.slice(0, FIRST_CHILDREN);
    return (
      <div className={`jt-node${hit}`} key={path} data-path={path}>
        <button type="button" className="jt-toggle" aria-expanded={open} onClick={() => toggle(path, depth)}>
          <Icon name={open ? 'open' : 'right'} /> {label}
          {l}
          {!open && (
            <span className="muted">
              {' '}
              {entries.length} {Array.isArray(v) ? 'items' : 'keys'} {r}
            </span>
          )}
        </button>
        {open && (
          <div className="jt-children">
            {shown.map(([k, c]) => node(k, c, childPath(path, k), depth + 1))}
            {shown.length < entries.length && (
              <button type="button" className="btn small" onClick={() => setFull((s) => new Set(s).add(path))}>
                Show all {entries.length}
              </button>
            )}
            <span>{r}</span>
          </div>
        )}
      </div>
    );
  };

  return (
    <div className="json-tree">
      <div className="section-actions">
        {actions}{' '}
        <input
          type="search"
          className="filter"
          aria-label="Search the body"
          placeholder="Search keys and values…"
          value={text}
          style={{ width: 260 }}
          onChange={(e) => {
            setText(e.target.value);
            setToggled(new Map());
          }}
        />{' '}
        {needle && (
          <span className="muted small" data-hits={found.hits.size}>
            {found.hits.size >= MAX_MATCHES ? `${MAX_MATCHES}+` : found.hits.size} {found.hits.size === 1 ? 'match' : 'matches'}
          </span>
        )}
      </div>
      <div className="jt-root mono">{node(null, value as Json, '', 0)}</div>
    </div>
  );
}
