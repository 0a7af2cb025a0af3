import { useEffect, useMemo, useState } from 'react';
import { api, ApiError } from '../api';
import { useWatch } from '../live';
import { navigate } from '../router';
import type { Span } from '../generated/api';

/** Every stored span of a trace, loaded again whenever the server says spans of it arrived. */
export function useTrace(traceId: string): { spans: Span[]; loaded: boolean; error: string | null } {
  const version = useWatch('traces', `traceId=${encodeURIComponent(traceId)}`);
  const [loaded, setLoaded] = useState<{ traceId: string; spans: Span[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setLoaded(null);
    setError(null);
  }, [traceId]);
  useEffect(() => {
    let current = true;
    api
      .trace(traceId)
      .then((t) => {
        if (!current) return;
        setLoaded({ traceId, spans: t.spans });
        setError(null);
        // A prefix found its trace: the URL names the whole id from now on.
        if (t.traceId !== traceId && location.pathname.includes(`/${traceId}`))
          navigate(location.pathname.replace(`/${traceId}`, `/${t.traceId}`) + location.search, { replace: true });
      })
      .catch((e: Error) => {
        if (!current) return;
        setLoaded({ traceId, spans: [] });
        setError(e instanceof ApiError && e.status === 404 ? null : e.message);
      });
    return () => {
      current = false;
    };
  }, [traceId, version]);
  const spans = useMemo(() => (loaded?.traceId === traceId ? loaded.spans : []), [loaded, traceId]);
  return { spans, loaded: loaded !== null, error };
}
