import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

interface Props {
  count: number;
  rowHeight: number;
  renderRow: (index: number) => ReactNode;
  /** One row may be open; its extra content is measured and the rows below move down by its height. */
  expandedIndex?: number;
  renderExpanded?: (index: number) => ReactNode;
  /** Identifies the open row's item, so that rows arriving above it do not scroll the list again. */
  expandedKey?: unknown;
  /** Scrolls so this row is visible whenever it changes (keyboard navigation). */
  focusIndex?: number;
  className?: string;
  overscan?: number;
  label?: string;
  /** Told which rows are shown, so a paged list can load them before they come into view, and whether the list is at its top. */
  onRange?: (first: number, last: number, atTop: boolean) => void;
  /**
   * Identifies the item of a row (undefined for rows not loaded), and is a new function whenever the items
   * change. With it, rows arriving above the ones in view (a refetch after a change notice) do not move
   * what the user looks at, unless the list is scrolled to the top, where the new rows show.
   */
  itemKey?: (index: number) => string | undefined;
}

/**
 * A windowed list: only the rows in view (plus a few) exist in the DOM, so 100 000 log lines scroll as
 * fast as 20. Rows have a fixed height; the single expanded row has whatever height its content needs.
 */
export function VirtualList({
  count,
  rowHeight,
  renderRow,
  expandedIndex = -1,
  renderExpanded,
  expandedKey,
  focusIndex,
  className,
  overscan = 8,
  label,
  onRange,
  itemKey,
}: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  // Null until the list is laid out and measured: a range reported from a guessed height has a paged list ask for
  // rows it does not show, or too few.
  const [measured, setMeasured] = useState<number | null>(null);
  const viewport = measured ?? 600;
  const [extra, setExtra] = useState(0);
  const expandedRef = useRef<HTMLDivElement>(null);
  const exp = expandedIndex >= 0 && expandedIndex < count && renderExpanded ? expandedIndex : -1;
  const extraH = exp >= 0 ? extra : 0;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    setMeasured(el.clientHeight);
    const ro = new ResizeObserver(() => setMeasured(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = expandedRef.current;
    if (exp < 0 || !el) {
      setExtra(0);
      return;
    }
    setExtra(el.offsetHeight);
    const ro = new ResizeObserver(() => setExtra(el.offsetHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, [exp]);

  const top = (i: number) => i * rowHeight + (exp >= 0 && i > exp ? extraH : 0);
  const indexAt = (y: number) => {
    if (exp < 0 || y < (exp + 1) * rowHeight) return Math.floor(y / rowHeight);
    const expEnd = (exp + 1) * rowHeight + extraH;
    if (y < expEnd) return exp;
    return exp + 1 + Math.floor((y - expEnd) / rowHeight);
  };

  useEffect(() => {
    const el = scroller.current;
    if (!el || focusIndex === undefined || focusIndex < 0 || focusIndex >= count) return;
    const y = top(focusIndex);
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = y + rowHeight - el.clientHeight;
    // Only a change of the focused row should scroll, not new rows arriving.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the rows' count and places are read, not watched
  }, [focusIndex]);

  // Opening a row should show what it opened: scroll once its content has been measured.
  const revealed = useRef<unknown>(undefined);
  useEffect(() => {
    const el = scroller.current;
    const key = expandedKey ?? exp;
    if (exp < 0) revealed.current = undefined;
    if (!el || exp < 0 || extraH === 0 || revealed.current === key) return;
    revealed.current = key;
    const bottom = top(exp) + rowHeight + extraH;
    if (bottom > el.scrollTop + el.clientHeight) el.scrollTop = Math.min(top(exp), bottom - el.clientHeight);
  });

  // The row at the top of the view and how far it is scrolled past, to find it again after a refetch.
  const anchor = useRef<{ key: string; offset: number } | null>(null);
  const keyOf = useRef(itemKey);
  keyOf.current = itemKey;
  const recordAnchor = (el: HTMLDivElement) => {
    const i = indexAt(el.scrollTop);
    const key = i < count ? keyOf.current?.(i) : undefined;
    anchor.current = key === undefined ? null : { key, offset: el.scrollTop - top(i) };
  };
  useLayoutEffect(() => {
    const el = scroller.current;
    const a = anchor.current;
    if (!el || !keyOf.current) return;
    if (a && el.scrollTop > 0) {
      for (let i = 0; i < count; i++) {
        const key = keyOf.current(i);
        if (key === undefined) break;
        if (key !== a.key) continue;
        const y = top(i) + a.offset;
        if (y !== el.scrollTop) {
          el.scrollTop = y;
          setScrollTop(el.scrollTop);
        }
        break;
      }
    }
    recordAnchor(el);
    // A new item list (a refetch) is what moves the anchored row; scrolling records it again.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the rows' count and places are read, not watched
  }, [itemKey]);

  const first = Math.max(0, indexAt(scrollTop) - overscan);
  const last = Math.min(count - 1, indexAt(scrollTop + viewport) + overscan);
  const atTop = scrollTop === 0;
  useEffect(() => {
    if (count > 0 && measured !== null) onRange?.(first, last, atTop);
  }, [first, last, atTop, count, onRange, measured]);
  const rows: ReactNode[] = [];
  for (let i = first; i <= last; i++) {
    rows.push(
      <div key={i} className="vrow" style={{ top: top(i), height: rowHeight }} data-index={i}>
        {renderRow(i)}
      </div>,
    );
  }

  return (
    <div
      ref={scroller}
      className={`vlist ${className ?? ''}`}
      onScroll={(e) => {
        setScrollTop(e.currentTarget.scrollTop);
        recordAnchor(e.currentTarget);
      }}
      role="list"
      aria-label={label}
    >
      <div className="vlist-inner" style={{ height: count * rowHeight + extraH }}>
        {rows}
        {exp >= 0 && (
          <div ref={expandedRef} className="vrow-expanded" style={{ top: top(exp) + rowHeight }}>
            {renderExpanded!(exp)}
          </div>
        )}
      </div>
    </div>
  );
}
