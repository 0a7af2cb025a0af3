import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** History routing: every view and filter lives in the URL so it can be linked and reloaded. */

const listeners = new Set<() => void>();

function emit(): void {
  for (const l of listeners) l();
}

window.addEventListener('popstate', emit);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const getHref = (): string => location.pathname + location.search;

export interface Route {
  path: string;
  segments: string[];
  query: URLSearchParams;
}

export function useRoute(): Route {
  const href = useSyncExternalStore(subscribe, getHref);
  const url = new URL(href, location.origin);
  return {
    path: url.pathname,
    segments: url.pathname.split('/').filter(Boolean).map(decodeURIComponent),
    query: url.searchParams,
  };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === getHref()) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  emit();
}

/** Builds `path?query` from the entries that have a value, so empty filters leave no trace in the URL. */
export function href(path: string, query: Record<string, string | number | boolean | undefined | null> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '' && v !== false) params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Replaces one query parameter of the current URL without adding a history entry (used while typing). */
export function setQueryParam(name: string, value: string | undefined): void {
  const url = new URL(location.href);
  if (value) url.searchParams.set(name, value);
  else url.searchParams.delete(name);
  navigate(url.pathname + url.search, { replace: true });
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={handle} {...rest} />;
}
