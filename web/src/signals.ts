import { useSyncExternalStore } from 'react';
import { api } from './api';
import type { SignalInfo } from './generated/api';

/**
 * The server's signal table (GET /api/signals), read once: the UI names, counts and offers the signals as
 * the server describes them. Empty until the first answer; asked again while the server cannot be reached.
 */

const RETRY_MS = 2_000;

let signals: SignalInfo[] = [];
const listeners = new Set<() => void>();

export async function loadSignals(): Promise<void> {
  try {
    signals = (await api.signals()).signals;
  } catch {
    setTimeout(() => void loadSignals(), RETRY_MS);
    return;
  }
  for (const listener of listeners) listener();
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
const getSignals = () => signals;

/** Every signal, in the server's table's order (as messages and filters list them). */
export function useSignals(): SignalInfo[] {
  return useSyncExternalStore(subscribe, getSignals);
}

/** The signals in the order the UI shows them side by side (tabs, counts). */
export const shownOrder = (list: SignalInfo[]): SignalInfo[] => [...list].sort((a, b) => a.order - b.order);
