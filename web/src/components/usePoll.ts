import { useEffect } from 'react';

/**
 * Runs `load` on mount and every `intervalMs` while the view is open: for counters that move with every request
 * (fault rules' matches, forward targets' calls), which the live feed does not announce.
 */
export function usePoll(load: () => Promise<void>, intervalMs = 1000): void {
  useEffect(() => {
    void load();
    const t = setInterval(() => void load(), intervalMs);
    return () => clearInterval(t);
  }, [load, intervalMs]);
}
