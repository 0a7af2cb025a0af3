import { useCallback, useEffect, useState } from 'react';
import { api } from '../api';
import { formatCount } from '../format';
import type { Operation } from '../peers';
import { Select } from './Toolbar';

/**
 * The operations (span names) of one service (GET /api/operations?service=), as a filter on traces with a span
 * of that name (`op` in the URL). Asked again when the dropdown opens, so that new operations are there.
 */
export function OperationSelect({ service, value }: { service: string; value: string }) {
  const [ops, setOps] = useState<Operation[]>([]);
  const load = useCallback(
    () =>
      api
        .operations(new URLSearchParams({ service }).toString())
        .then((r) => setOps(r.operations))
        .catch(() => setOps([])),
    [service],
  );
  useEffect(() => {
    void load();
  }, [load]);
  const options = ops.map((o) => ({ value: o.name, label: `${o.name} (${formatCount(o.spans)}${o.errors ? `, ${formatCount(o.errors)} errors` : ''})` }));
  if (value && !ops.some((o) => o.name === value)) options.push({ value, label: value });
  return <Select param="op" label="Operation" value={value} options={[{ value: '', label: 'All operations' }, ...options]} onFocus={load} />;
}
