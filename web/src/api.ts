import type {
  FaultRule,
  ForwardList,
  ForwardTarget,
  JournalDetail,
  JournalEntry,
  LogRecord,
  Metric,
  MetricListItem,
  OtapStream,
  OtapStreamRow,
  Profile,
  ProfileAggregate,
  ResourceInfo,
  ServiceInfo,
  SignalInfo,
  Stats,
  TraceDetail,
  TraceSummary,
} from './generated/api';
import type { Dependencies, Operations } from './peers';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'otlp-mock.adminToken';

/** The admin token (--admin-token) entered in this tab, if the server asked for one. */
export function adminToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Headers every API call sends: the token, once entered. */
export function authHeaders(): Record<string, string> {
  const token = adminToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Asks once per refusal; a token another call already got is used without asking again. */
function askForToken(sent: string | null): boolean {
  if (adminToken() !== sent) return true;
  const token = window.prompt('This otlp-mock requires its admin token (--admin-token or OTLP_MOCK_ADMIN_TOKEN):');
  if (!token) return false;
  sessionStorage.setItem(TOKEN_KEY, token);
  return true;
}

async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const send = () =>
    fetch(path, {
      method,
      headers: { ...authHeaders(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  const sent = adminToken();
  let res = await send();
  if (res.status === 401 && askForToken(sent)) res = await send();
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
    // The list routes say what was wrong in `message`; the fault routes in `error`.
    const reason = data && typeof data === 'object' ? ((data as { message?: unknown; error?: unknown }).message ?? (data as { error?: unknown }).error) : undefined;
    const msg = typeof reason === 'string' ? reason : text;
    throw new ApiError(msg || `${res.status} ${res.statusText}`, res.status);
  }
  return data as T;
}

/** The row type of each list route the views page through. */
export interface ListRows {
  traces: TraceSummary;
  logs: LogRecord;
  requests: JournalEntry | OtapStreamRow;
  profiles: Profile;
}
export type ListKind = keyof ListRows;

/** One page of a list route: `total` counts every stored match; `nextCursor` continues after this page. */
export interface Page<T> {
  items: T[];
  total: number;
  nextCursor?: string;
}

/** Joins a view's filter query with paging parameters; pages come newest (or top of the sort) first. */
function pageQuery(query: string, limit: number, cursor?: string): string {
  const params = new URLSearchParams(query);
  params.set('order', 'desc');
  params.set('limit', String(limit));
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

export const api = {
  list: async <K extends ListKind>(kind: K, query: string, limit: number, cursor?: string, signal?: AbortSignal): Promise<Page<ListRows[K]>> => {
    const body = await request<Record<K, ListRows[K][]> & { total: number; nextCursor?: string }>(
      'GET',
      `/api/${kind}?${pageQuery(query, limit, cursor)}`,
      undefined,
      signal,
    );
    return { items: body[kind], total: body.total, nextCursor: body.nextCursor };
  },
  trace: (id: string) => request<TraceDetail>('GET', `/api/traces/${encodeURIComponent(id)}`),
  otapStream: (id: string) => request<OtapStream>('GET', `/api/requests/streams/${encodeURIComponent(id)}`),
  /** The newest stored profile the query matches, with its matching samples. */
  profileSamples: async (query: string, signal?: AbortSignal): Promise<Profile | null> =>
    (await request<{ profiles: Profile[] }>('GET', `/api/profiles?${query}&samples=all&order=desc&limit=1`, undefined, signal)).profiles[0] ?? null,
  profileAggregate: (query: string, signal?: AbortSignal) => request<ProfileAggregate>('GET', `/api/profiles/aggregate?${query}`, undefined, signal),
  services: () => request<{ services: ServiceInfo[] }>('GET', '/api/services'),
  signals: () => request<{ signals: SignalInfo[] }>('GET', '/api/signals'),
  resources: () => request<{ resources: ResourceInfo[] }>('GET', '/api/resources'),
  clients: <T>(query: string) => request<T>('GET', `/api/clients${query ? `?${query}` : ''}`),
  operations: (query: string) => request<Operations>('GET', `/api/operations?${query}`),
  dependencies: (query: string) => request<Dependencies>('GET', `/api/dependencies?${query}`),
  metricList: (query: string, signal?: AbortSignal) =>
    request<{ metrics: MetricListItem[]; total: number }>('GET', `/api/metrics?points=none&${query}`, undefined, signal),
  metricPoints: (query: string, signal?: AbortSignal) => request<{ metrics: Metric[]; total: number }>('GET', `/api/metrics?points=all&${query}`, undefined, signal),
  request: (id: string) => request<JournalDetail>('GET', `/api/requests/${encodeURIComponent(id)}`),
  stats: () => request<Stats>('GET', '/api/stats'),
  clear: () => request<unknown>('DELETE', '/api/telemetry'),
  faults: () => request<{ faults: FaultRule[] }>('GET', '/api/faults'),
  addFault: (rule: Record<string, unknown>) => request<FaultRule>('POST', '/api/faults', rule),
  removeFault: (id: string) => request<unknown>('DELETE', `/api/faults/${encodeURIComponent(id)}`),
  attempts: <T>(id: string) => request<{ attempts: T[] }>('GET', `/api/requests/${encodeURIComponent(id)}/attempts`),
  faultReport: <T>(id: string) => request<T>('GET', `/api/faults/${encodeURIComponent(id)}/report`),
  removeAllFaults: () => request<unknown>('DELETE', '/api/faults'),
  forward: () => request<ForwardList>('GET', '/api/forward'),
  addForward: (target: Record<string, unknown>) => request<ForwardTarget>('POST', '/api/forward', target),
  removeForward: (id: string) => request<unknown>('DELETE', `/api/forward/${encodeURIComponent(id)}`),
};
