import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type ListKind, type ListRows } from '../api';
import { live } from '../live';

/** Small enough that the first paint of a list stays far below 300 KB, large enough to fill a tall screen. */
const FIRST_PAGE = 100;
const NEXT_PAGE = 200;
/** A jump far down the list (dragging the scroll bar) loads the rows before it in pages this large. */
const MAX_PAGE = 2000;
/**
 * A change notice refetches the rows loaded and those that arrived above them, up to this many; rows
 * further down load again on scroll. A list scrolled to the top shows the new rows there, so it refetches
 * only the rows it shows: under a steady flow of new rows, what a notice costs is what the view shows.
 */
const MAX_REFETCH = 1000;
/**
 * Once the list is scrolled, loading starts this many rows before it shows a row it has not loaded. At its top
 * it loads nothing ahead: a refetch there would ask for those rows again each time, and the first scroll loads them.
 */
const LOAD_AHEAD = 50;

export interface PagedList<T> {
  /** The rows loaded so far, top of the list first. */
  items: T[];
  /** Every stored match, as the server counted it; null before its first answer. */
  total: number | null;
  /** Rows to size the list for: the loaded ones, plus placeholders for matches further down. */
  rowCount: number;
  /** The first page of a new query is on its way; `items` are still the previous query's. */
  loading: boolean;
  loadingMore: boolean;
  error: string | null;
  /** The list shows rows `first`..`last`: loads what is missing when they come near the end of what is loaded. */
  onRange: (first: number, last: number, atTop: boolean) => void;
}

interface State<T> {
  items: T[];
  total: number | null;
  hasMore: boolean;
  loading: boolean;
  loadingMore: boolean;
  error: string | null;
}

const INITIAL: State<never> = { items: [], total: null, hasMore: false, loading: true, loadingMore: false, error: null };

/**
 * One query's pages. Requests run one at a time: a change notice during a fetch refetches once after it,
 * and a next page is asked with the cursor of the latest answer, so pages never interleave.
 */
class Pager<K extends ListKind> {
  private state: State<ListRows[K]>;
  private cursor: string | undefined;
  private busy = false;
  private queued: 'refresh' | 'more' | null = null;
  /** Rows the list shows (its overscan too), from its first: up to the last one. */
  private shown = 0;
  /** The list shows its first row. */
  private atTop = true;
  /** live.matchedCount() when the rows loaded were asked for. */
  private matchedAtFetch = 0;
  /**
   * A refresh asked while the first page was on its way (the live feed's `watching` answer asks one): it waits for
   * the list to say how many rows it shows, or it would ask for a whole first page again.
   */
  private refreshWhenShown = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly kind: K,
    private readonly query: string,
    /** The useWatch version this pager's rows answer; a newer one refetches them. */
    public seenVersion: number,
    previous: State<ListRows[K]>,
    private readonly publish: (s: State<ListRows[K]>) => void,
    /** The pager of the query before, whose rows the list still draws: how many it shows is known already. */
    before: Pager<K> | null,
  ) {
    this.state = { ...previous, loading: true, loadingMore: false };
    if (before) {
      this.shown = before.shown;
      this.atTop = before.atTop;
    }
  }

  dispose(): void {
    this.abort.abort();
  }

  refresh(): void {
    if (!this.refreshWhenShown) this.request('refresh');
  }

  want(shown: number, atTop = this.atTop): void {
    this.shown = shown;
    this.atTop = atTop;
    if (this.refreshWhenShown) {
      this.refreshWhenShown = false;
      this.request('refresh');
      return;
    }
    if (this.state.hasMore && this.wanted() > this.state.items.length && !this.state.loading && !this.state.loadingMore) this.request('more');
  }

  /** Rows the list needs loaded. */
  private wanted(): number {
    return this.atTop ? this.shown : this.shown + LOAD_AHEAD;
  }

  private set(patch: Partial<State<ListRows[K]>>): void {
    this.state = { ...this.state, ...patch };
    if (!this.abort.signal.aborted) this.publish(this.state);
  }

  private request(what: 'refresh' | 'more'): void {
    if (this.busy) {
      if (this.queued !== 'refresh') this.queued = what;
      return;
    }
    void this.run(what);
  }

  private async run(what: 'refresh' | 'more'): Promise<void> {
    this.busy = true;
    const fresh = this.state.loading;
    let failed = false;
    try {
      if (what === 'refresh') {
        const matched = live.matchedCount(this.kind);
        const arrived = fresh ? 0 : matched - this.matchedAtFetch;
        this.matchedAtFetch = matched;
        // Before the list has shown a row (its first answer, or no match yet) it asks for a first page.
        const rows = fresh || this.shown === 0 ? FIRST_PAGE : this.atTop ? this.shown : Math.max(FIRST_PAGE, this.state.items.length + arrived);
        const page = await api.list(this.kind, this.query, Math.min(MAX_REFETCH, rows), undefined, this.abort.signal);
        this.cursor = page.nextCursor;
        this.set({ items: page.items, total: page.total, hasMore: Boolean(page.nextCursor), loading: false, error: null });
      } else if (this.cursor) {
        this.set({ loadingMore: true });
        // At the top, the rows missing are those a taller view shows: the next refetch asks for the shown rows only,
        // so a page beyond them would be fetched for nothing. (A refresh queued before this ran may have loaded them.)
        const missing = this.wanted() - this.state.items.length;
        const limit = Math.min(MAX_PAGE, this.atTop ? Math.max(1, missing) : Math.max(NEXT_PAGE, missing));
        const page = await api.list(this.kind, this.query, limit, this.cursor, this.abort.signal);
        this.cursor = page.nextCursor;
        this.set({
          items: this.state.items.concat(page.items),
          total: page.total,
          hasMore: Boolean(page.nextCursor),
          loadingMore: false,
          error: null,
        });
      }
    } catch (err) {
      if (this.abort.signal.aborted) return;
      failed = true;
      const message = (err as Error).message;
      this.set(fresh ? { ...INITIAL, loading: false, error: message } : { loadingMore: false, error: message });
    } finally {
      this.busy = false;
    }
    const next = this.queued;
    this.queued = null;
    if (this.abort.signal.aborted) return;
    // Rows to show are drawn, and the list then calls want(); with no rows it never does, so the refresh runs now.
    if (next === 'refresh' && fresh && !failed && this.shown === 0 && this.state.items.length > 0) this.refreshWhenShown = true;
    else if (next) this.request(next);
    else if (!failed) this.want(this.shown);
  }
}

/**
 * A list the server pages: the first page of `query`, the next ones as the user scrolls, and the loaded
 * rows again whenever `version` (from useWatch) changes. `query` is the view's filter query string.
 */
export function usePagedList<K extends ListKind>(kind: K, query: string, version: number): PagedList<ListRows[K]> {
  const [state, setState] = useState<State<ListRows[K]>>(INITIAL);
  const stateRef = useRef(state);
  stateRef.current = state;
  const pager = useRef<Pager<K> | null>(null);
  const versionRef = useRef(version);
  versionRef.current = version;

  useEffect(() => {
    const p = new Pager(kind, query, versionRef.current, stateRef.current, setState, pager.current);
    pager.current = p;
    setState((s) => ({ ...s, loading: true }));
    p.refresh();
    return () => p.dispose();
  }, [kind, query]);

  useEffect(() => {
    const p = pager.current;
    if (!p || p.seenVersion === version) return;
    p.seenVersion = version;
    p.refresh();
  }, [version]);

  const onRange = useCallback((_first: number, last: number, atTop: boolean) => pager.current?.want(last + 1, atTop), []);

  const { items, total, hasMore } = state;
  return {
    items,
    total,
    rowCount: hasMore ? Math.max(total ?? 0, items.length + 1) : items.length,
    loading: state.loading,
    loadingMore: state.loadingMore,
    error: state.error,
    onRange,
  };
}
