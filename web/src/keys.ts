import { useEffect, useRef } from 'react';

/** Keys typed into a form field belong to the field, not to the page's shortcuts. */
function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  return t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName);
}

/** Page-wide shortcut handler; the latest callback is used without re-registering. */
export function useKeys(handler: (e: KeyboardEvent) => void): void {
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => {
    const listener = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey || isTyping(e)) return;
      ref.current(e);
    };
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);
}

/** ↑/↓ (or k/j) move through a list, Enter opens the selected row. */
export function useListKeys({
  count,
  selected,
  setSelected,
  open,
}: {
  count: number;
  selected: number;
  setSelected: (i: number) => void;
  open: (i: number) => void;
}): void {
  useKeys((e) => {
    if (count === 0) return;
    if (e.key === 'ArrowDown' || e.key === 'j') setSelected(Math.min(count - 1, Math.max(0, selected + 1)));
    else if (e.key === 'ArrowUp' || e.key === 'k') setSelected(Math.max(0, selected - 1));
    else if (e.key === 'Home') setSelected(0);
    else if (e.key === 'End') setSelected(count - 1);
    else if (e.key === 'Enter' && selected >= 0) open(selected);
    else return;
    e.preventDefault();
  });
}
