import { markBidi } from '../text';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, ApiError } from '../api';
import { useWatch } from '../live';
import { href, Link, navigate, setQueryParam, type Route } from '../router';
import { formatCount, formatDuration, formatTime, formatUnit, formatValue, nsToMs, shortId } from '../format';
import { VirtualList } from '../components/VirtualList';
import { usePagedList } from '../components/usePagedList';
import { ServiceSelect } from '../components/ServiceSelect';
import { choices, FilterInput, ListEmpty, Select, Toolbar, Total } from '../components/Toolbar';
import { useListKeys } from '../keys';
import { ServiceDot } from '../components/Service';
import { TimeRange } from '../components/TimeRange';
import { attrQuery } from '../components/attrFilter';
import { framePath, ProfileFlame } from '../components/ProfileFlame';
import type { Profile, ProfileAggregate, ProfileFunction, ProfileSample } from '../generated/api';

const ROW_HEIGHT = 28;
const HEADER_HEIGHT = 30;
/** The list takes as much height as its rows up to this; the flame graph below gets the rest. */
const LIST_HEIGHT = 240;
/** Rows' worth of height for a list that says why it is empty. */
const EMPTY_ROWS = 4;
/** A profile's samples listed under its flame graph; past this many the heaviest are shown. */
const MAX_SAMPLES_SHOWN = 300;

type SortKey = 'self' | 'total';

/** pprof's units, as the UI's value formatting knows them. */
const UNITS: Record<string, string> = { nanoseconds: 'ns', microseconds: 'us', milliseconds: 'ms', seconds: 's', bytes: 'By', count: '', samples: '' };

/** A value in a profile's unit: times as durations, bytes in KiB/MiB, counts as numbers. */
export function formatProfileValue(v: number, unit: string): string {
  return formatUnit(v, unit in UNITS ? UNITS[unit] : unit);
}

/**
 * The URL's filters (`/profiles?service=…&type=cpu&fn=parse&attr=k=v&from=…&to=…`) as the server's query,
 * shared by the list, its live watch and the aggregate.
 */
function profileQuery(q: URLSearchParams): string {
  const params = new URLSearchParams();
  const service = q.get('service');
  if (service) params.set('service', service);
  const type = q.get('type');
  if (type) params.set('type', type);
  const fn = q.get('fn')?.trim();
  if (fn) params.set('functionContains', fn);
  attrQuery(q.get('attr'), params);
  for (const k of ['from', 'to']) if (q.get(k)) params.set(k, q.get(k)!);
  return params.toString();
}

/** The server's answer when samples of several types match: the types it names, to choose one of. */
function typesNamed(message: string): string[] {
  const named = /types match \(([^)]*)\)/.exec(message);
  return named ? named[1].split(', ') : [];
}

type Loaded<T> = { key: string; data: T | null; error: ApiError | null };

/** What `load` answers for `key`, loaded again when `key` or the live `version` changes; null while the first answer is on its way. */
function useLoaded<T>(key: string, version: number, load: (signal: AbortSignal) => Promise<T>): Loaded<T> | null {
  const [state, setState] = useState<Loaded<T> | null>(null);
  useEffect(() => {
    if (!key) return;
    const abort = new AbortController();
    load(abort.signal).then(
      (data) => setState({ key, data, error: null }),
      (err: unknown) => {
        if (!abort.signal.aborted) setState({ key, data: null, error: err instanceof ApiError ? err : new ApiError(String(err), 0) });
      },
    );
    return () => abort.abort();
  }, [key, version, load]);
  return state && state.key === key ? state : null;
}

export function Profiles({ route }: { route: Route }) {
  const q = route.query;
  const query = profileQuery(q);
  const profileId = q.get('profile') ?? '';
  const focus = q.get('focus') ?? '';
  const sort: SortKey = q.get('sort') === 'total' ? 'total' : 'self';
  const filtered = ['service', 'type', 'fn', 'attr', 'from', 'to'].some((k) => q.get(k));
  const version = useWatch('profiles', query);
  const list = usePagedList('profiles', query, version);
  const rows = list.items;
  const [selected, setSelected] = useState(-1);
  const [highlight, setHighlight] = useState('');

  const aggregateQuery = useMemo(() => {
    const params = new URLSearchParams(query);
    if (profileId) params.set('profileId', profileId);
    return params.toString();
  }, [query, profileId]);
  const loadAggregate = useCallback((signal: AbortSignal) => api.profileAggregate(aggregateQuery, signal), [aggregateQuery]);
  const aggregate = useLoaded(`aggregate?${aggregateQuery}`, version, loadAggregate);
  // The chosen profile with the samples the filters match, the ones its flame graph is drawn from.
  const loadProfile = useCallback((signal: AbortSignal) => api.profileSamples(aggregateQuery, signal), [aggregateQuery]);
  const profile = useLoaded(profileId ? `samples?${aggregateQuery}` : '', version, loadProfile);

  const open = (i: number) =>
    rows[i] && navigate(href('/profiles', { ...Object.fromEntries(q), profile: rows[i].profileId === profileId ? undefined : rows[i].profileId, focus: undefined }));
  const itemKey = useCallback((i: number) => rows[i]?.profileId, [rows]);
  const cur = Math.min(selected, rows.length - 1);
  useListKeys({ count: rows.length, selected: cur, setSelected, open });

  const chosenType = q.get('type') ?? '';
  const types = useMemo(() => {
    const seen = new Set(rows.map((r) => `${r.type}:${r.unit}`));
    for (const t of typesNamed(aggregate?.error?.message ?? '')) seen.add(t);
    if (chosenType) seen.add(chosenType);
    return [...seen].sort();
  }, [rows, aggregate, chosenType]);

  // The flame graph takes a service's colour when its samples are all of that one service.
  const services = new Set(rows.map((r) => r.service));
  const service = profile?.data?.service ?? q.get('service') ?? (services.size === 1 && list.total === rows.length ? [...services][0] : undefined);

  return (
    <div className="view profiles-view">
      <Toolbar right={<Total total={list.total} noun="profiles" />}>
        <ServiceSelect value={q.get('service') ?? ''} what="samples" />
        <Select param="type" label="Sample type" value={chosenType} options={choices('All types', types)} />
        <FilterInput param="fn" label="Function" value={q.get('fn') ?? ''} placeholder="Function contains…" width={190} />
        <FilterInput param="attr" label="Attribute" value={q.get('attr') ?? ''} placeholder="attribute=value" width={170} />
        <TimeRange from={q.get('from')} to={q.get('to')} />
        {profileId && (
          <span className="chip removable" data-chip="profile">
            profile {shortId(profileId)}
            <button
              type="button"
              aria-label="Show every matching profile"
              onClick={() => navigate(href('/profiles', { ...Object.fromEntries(q), profile: undefined, focus: undefined }))}
            >
              ✕
            </button>
          </span>
        )}
      </Toolbar>
      <div
        className={`table profiles-table ${list.loading && rows.length ? 'stale' : ''}`}
        style={{ height: Math.min(LIST_HEIGHT, HEADER_HEIGHT + (list.rowCount || EMPTY_ROWS) * ROW_HEIGHT) }}
      >
        <div className="thead profile-grid">
          <div className="th">Time</div>
          <div className="th">Service</div>
          <div className="th">Type</div>
          <div className="th num">Duration</div>
          <div className="th num">Samples</div>
          <div className="th num">Total</div>
          <div className="th">Profile</div>
        </div>
        {list.error && rows.length > 0 && <div className="banner error">{list.error}</div>}
        {list.rowCount === 0 ? (
          <ListEmpty
            list={list}
            filtered={filtered}
            noMatch="No profile has samples that match these filters."
            nothingStored="No profiles yet. Profiles sent to /v1development/profiles (HTTP) or ProfilesService/Export (gRPC) appear here live."
          />
        ) : (
          <VirtualList
            count={list.rowCount}
            rowHeight={ROW_HEIGHT}
            focusIndex={cur}
            label="Profiles"
            onRange={list.onRange}
            itemKey={itemKey}
            renderRow={(i) =>
              rows[i] ? (
                <ProfileListRow row={rows[i]} selected={i === cur} open={rows[i].profileId === profileId} onClick={() => open(i)} />
              ) : (
                <div className="tr profile-grid placeholder">Loading…</div>
              )
            }
          />
        )}
      </div>
      {list.total !== 0 && (
        <div className="profile-panes">
          <Aggregate
            loaded={aggregate}
            profile={profileId ? (profile?.data ?? null) : null}
            service={service}
            focus={focus}
            sort={sort}
            highlight={highlight}
            setHighlight={setHighlight}
          />
        </div>
      )}
    </div>
  );
}

function ProfileListRow({ row, selected, open, onClick }: { row: Profile; selected: boolean; open: boolean; onClick: () => void }) {
  return (
    <div className={`tr profile-grid ${selected ? 'selected' : ''} ${open ? 'open' : ''}`} onClick={onClick} aria-selected={open} data-profile-id={row.profileId}>
      <span className="td mono muted">{formatTime(nsToMs(row.timeUnixNano))}</span>
      <span className="td ellipsis">
        <ServiceDot service={row.service} />
        {markBidi(row.service)}
      </span>
      <span className="td ellipsis">
        <span className="strong">{markBidi(row.type)}</span> <span className="muted">{markBidi(row.unit)}</span>
      </span>
      <span className="td num mono">{formatDuration(nsToMs(row.durationNano))}</span>
      <span className="td num mono" data-field="samples">
        {formatCount(row.sampleCount)}
      </span>
      <span className="td num mono" data-field="total">
        {formatProfileValue(row.total, row.unit)}
      </span>
      <span className="td mono muted small">
        {shortId(row.profileId)}
        {row.originalPayloadFormat && <span className="badge"> {markBidi(row.originalPayloadFormat)}</span>}
      </span>
    </div>
  );
}

/** The flame graph and the tables under it: for the chosen profile, or for every sample the filters match. */
function Aggregate({
  loaded,
  profile,
  service,
  focus,
  sort,
  highlight,
  setHighlight,
}: {
  loaded: Loaded<ProfileAggregate> | null;
  profile: Profile | null;
  service: string | undefined;
  focus: string;
  sort: SortKey;
  highlight: string;
  setHighlight: (name: string) => void;
}) {
  if (!loaded) return <div className="empty">Loading…</div>;
  if (loaded.error) {
    const types = loaded.error.status === 400 ? typesNamed(loaded.error.message) : [];
    if (types.length === 0) return <div className="empty error-text">{loaded.error.message}</div>;
    return (
      <div className="empty type-choice" data-state="several-types">
        <p>Samples of several types match, and their values do not add up: show one type.</p>
        <div className="type-buttons">
          {types.map((t) => (
            <button key={t} type="button" className="btn" data-type={t} onClick={() => setQueryParam('type', t)}>
              {t}
            </button>
          ))}
        </div>
      </div>
    );
  }
  const agg = loaded.data!;
  if (agg.samples === 0) return <div className="empty">No samples match.</div>;
  const describe = (v: number) => formatProfileValue(v, agg.unit);
  const crumbs = focus ? focus.split(';') : [];
  return (
    <>
      <div className="pane-head">
        <span className="strong">
          {profile ? `Profile ${shortId(profile.profileId)}` : `${formatCount(agg.profiles)} ${agg.profiles === 1 ? 'profile' : 'profiles'}`}
        </span>
        {service && (
          <span>
            <ServiceDot service={service} />
            {markBidi(service)}
          </span>
        )}
        <span className="muted">
          {markBidi(agg.type)} · {formatCount(agg.samples)} {agg.samples === 1 ? 'sample' : 'samples'} · {describe(agg.total)}
        </span>
        <nav className="crumbs" aria-label="Zoom">
          {focus && (
            <button type="button" className="link-btn" onClick={() => setQueryParam('focus', undefined)}>
              all
            </button>
          )}
          {crumbs.map((name, i) => (
            <span key={i}>
              {' › '}
              <button type="button" className="link-btn" onClick={() => setQueryParam('focus', framePath(crumbs.slice(0, i + 1)))} disabled={i === crumbs.length - 1}>
                {markBidi(name)}
              </button>
            </span>
          ))}
        </nav>
        <span className="muted small">Click a frame to zoom, again to zoom out.</span>
      </div>
      <ProfileFlame
        tree={agg.tree}
        service={service}
        focus={focus}
        highlight={highlight}
        describe={describe}
        onFocus={(path) => setQueryParam('focus', path || undefined)}
      />
      <div className="profile-cols">
        <TopFunctions functions={agg.functions} total={agg.total} sort={sort} describe={describe} highlight={highlight} setHighlight={setHighlight} />
        {profile ? (
          <Samples profile={profile} focus={focus} describe={describe} />
        ) : (
          <div className="empty small">Choose a profile above to see its samples and the spans they were taken in.</div>
        )}
      </div>
    </>
  );
}

function TopFunctions({
  functions,
  total,
  sort,
  describe,
  highlight,
  setHighlight,
}: {
  functions: ProfileFunction[];
  total: number;
  sort: SortKey;
  describe: (v: number) => string;
  highlight: string;
  setHighlight: (name: string) => void;
}) {
  const sorted = useMemo(() => [...functions].sort((a, b) => b[sort] - a[sort] || (a.name < b.name ? -1 : 1)), [functions, sort]);
  const header = (key: SortKey, label: string) => (
    <th className="num">
      <button
        type="button"
        className={`th sortable ${sort === key ? 'sorted' : ''}`}
        data-sort={key}
        onClick={() => setQueryParam('sort', key === 'self' ? undefined : key)}
        title={key === 'self' ? 'The value of the samples in which the function was running' : 'The value of the samples in which the function was on the stack'}
      >
        {label}
        {sort === key ? ' ↓' : ''}
      </button>
    </th>
  );
  const pct = (v: number) => (total > 0 ? `${+((v / total) * 100).toFixed(1)}%` : '');
  return (
    <section className="top-functions">
      <h3 className="sub">Top functions</h3>
      <table className="grid-table" aria-label="Top functions">
        <thead>
          <tr>
            <th>Function</th>
            {header('self', 'Self')}
            {header('total', 'Total')}
            <th className="num">Samples</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((f) => (
            <tr
              key={f.name}
              data-function={f.name}
              className={f.name === highlight ? 'highlighted' : ''}
              onClick={() => setHighlight(f.name === highlight ? '' : f.name)}
              title={`${f.name}${f.file ? `\n${f.file}` : ''}\nClick to mark its frames in the flame graph`}
            >
              <td className="ellipsis mono">{markBidi(f.name)}</td>
              <td className="num mono" data-field="self">
                {describe(f.self)} <span className="muted">{pct(f.self)}</span>
              </td>
              <td className="num mono" data-field="total">
                {describe(f.total)} <span className="muted">{pct(f.total)}</span>
              </td>
              <td className="num mono" data-field="samples">
                {formatCount(f.samples)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

const attributesText = (s: ProfileSample) =>
  Object.entries(s.attributes)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(' ');

/** Whether a sample's stack passes through the frame at `focus` (root first, as the flame graph draws it). */
function passesThrough(sample: ProfileSample, focus: string[]): boolean {
  const n = sample.stack.length;
  return focus.length <= n && focus.every((name, i) => sample.stack[n - 1 - i].name === name);
}

/** The chosen profile's samples (those through the zoomed frame), heaviest first, each with the span it was taken in. */
function Samples({ profile, focus, describe }: { profile: Profile; focus: string; describe: (v: number) => string }) {
  const names = focus ? focus.split(';') : [];
  const through = (profile.samples ?? []).filter((s) => passesThrough(s, names)).sort((a, b) => b.value - a.value);
  const shown = through.slice(0, MAX_SAMPLES_SHOWN);
  return (
    <section className="profile-samples">
      <h3 className="sub">
        Samples {focus ? `through ${names[names.length - 1]}` : ''} <span className="muted">{formatCount(through.length)}</span>
      </h3>
      <table className="grid-table" aria-label="Samples">
        <thead>
          <tr>
            <th className="num">Value</th>
            <th>Running</th>
            <th>Attributes</th>
            <th>Span</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((s, i) => (
            <tr key={i} data-sample={i}>
              <td className="num mono">{describe(s.value)}</td>
              <td className="ellipsis mono" title={s.stack.map((f) => `${f.name}${f.file ? ` ${f.file}:${f.line}` : ''}`).join('\n')}>
                {markBidi(s.stack[0]?.name ?? '')}
              </td>
              <td className="ellipsis small" title={attributesText(s)}>
                {markBidi(attributesText(s))}
              </td>
              <td className="nowrap">
                {s.link ? (
                  <Link className="mono trace-link" data-action="sample-span" to={`/traces/${s.link.traceId}?span=${s.link.spanId}`}>
                    {shortId(s.link.traceId)} / {shortId(s.link.spanId)}
                  </Link>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {through.length > shown.length && (
        <div className="muted small">
          The {formatCount(shown.length)} heaviest of {formatCount(through.length)} shown.
        </div>
      )}
    </section>
  );
}
