import type { FaultRule, JournalDetail, JournalEntry, LogRecord, Metric, Span, Stats, StoredTrace } from './types';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const msg =
      data && typeof data === 'object' && 'message' in data ? String((data as { message: unknown }).message) : text;
    throw new ApiError(msg || `${res.status} ${res.statusText}`, res.status);
  }
  return data as T;
}

/** How much history the UI loads on start and on refresh; live updates come on top. */
export const SNAPSHOT_LIMITS = { spans: 10000, traces: 20000, logs: 10000, requests: 2000 };

export const api = {
  spans: (query = '') => request<{ spans: Span[]; total: number }>('GET', `/api/spans?${query}`),
  traces: (query = '') => request<{ traces: StoredTrace[]; total: number }>('GET', `/api/traces?${query}`),
  logs: (query = '') => request<{ logs: LogRecord[]; total: number }>('GET', `/api/logs?${query}`),
  metrics: (query = '') => request<{ metrics: Metric[]; total: number }>('GET', `/api/metrics?${query}`),
  requests: (query = '') => request<{ requests: JournalEntry[]; total: number }>('GET', `/api/requests?${query}`),
  request: (id: string) => request<JournalDetail>('GET', `/api/requests/${encodeURIComponent(id)}`),
  stats: () => request<Stats>('GET', '/api/stats'),
  clear: () => request<unknown>('DELETE', '/api/telemetry'),
  faults: () => request<{ faults: FaultRule[] }>('GET', '/api/faults'),
  addFault: (rule: Record<string, unknown>) => request<FaultRule>('POST', '/api/faults', rule),
  removeFault: (id: string) => request<unknown>('DELETE', `/api/faults/${encodeURIComponent(id)}`),
  removeAllFaults: () => request<unknown>('DELETE', '/api/faults'),
};
