import { useSyncExternalStore } from 'react';
import { api } from './api';
import { onUnknownService, setServiceColors } from './format';

// Keeps format.ts's service colours in step with the server's (GET /api/services): loaded with the page, and
// again when a view shows a service not known yet. Components that paint colours outside React's render (a
// canvas) or the app as a whole follow `useServiceColors` to repaint when they change.

let version = 0;
const listeners = new Set<() => void>();
/** Services already asked about: each unknown service costs one request at most. */
const asked = new Set<string>();
let inFlight: Promise<void> | null = null;
let again = false;

/** Fetches every service's colour; a call while one is under way makes one more after it. */
export function loadServiceColors(): Promise<void> {
  if (inFlight) {
    again = true;
    return inFlight;
  }
  inFlight = (async () => {
    try {
      const { services } = await api.services();
      if (setServiceColors(services)) {
        version++;
        for (const listener of listeners) listener();
      }
    } catch {
      // Offline or refused: services stay grey until the next page load or unknown service asks again.
    } finally {
      inFlight = null;
      if (again) {
        again = false;
        void loadServiceColors();
      }
    }
  })();
  return inFlight;
}

onUnknownService((service) => {
  if (asked.has(service)) return;
  asked.add(service);
  // Asked during a render: the request starts after it.
  queueMicrotask(() => void loadServiceColors());
});

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
const getVersion = () => version;

/** A number that changes whenever a service's colour does. */
export function useServiceColors(): number {
  return useSyncExternalStore(subscribe, getVersion);
}
