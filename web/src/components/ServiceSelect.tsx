import { useCallback, useEffect, useState } from 'react';
import { api } from '../api';
import type { ServiceInfo } from '../generated/api';
import { choices, Select } from './Toolbar';

/**
 * A service filter over every service the server holds something of (`what`, or anything). The list is asked for when
 * the view opens and again when the user opens the dropdown, so services that arrived since are there.
 */
export function ServiceSelect({ value, what }: { value: string; what: 'spans' | 'logs' | 'points' | 'samples' | 'any' }) {
  const [services, setServices] = useState<string[]>([]);
  const load = useCallback(
    () =>
      api
        .services()
        .then((r) => setServices(r.services.filter((s: ServiceInfo) => what === 'any' || s[what] > 0).map((s) => s.name)))
        .catch(() => {
          // The dropdown keeps the services it had; the list below shows the server's error, if any.
        }),
    [what],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const names = value && !services.includes(value) ? [...services, value].sort() : services;
  return <Select param="service" label="Service" value={value} options={choices('All services', names)} onFocus={load} />;
}
