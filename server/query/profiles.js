// Profiles on the read side: what a stored sample means once its profile's dictionary is applied (its stack
// as frames, its attributes, its link), the filters of GET /api/profiles, the list's rows, one profile with its
// samples, and the aggregate a flame graph and a top-functions table are drawn from. A stored item is one
// sample; its context holds its profile (without samples) and the request's dictionary (store.js).
import { compareNanos } from '../otlp/model.js';
import { attributeFilter, containsIgnoringCase, traceIdMatcher } from './filters.js';
import { plainValue, resourceView } from './views.js';
import { Slicer } from './scan.js';

/**
 * @typedef {import('../store/store.js').Entry} Entry
 * @typedef {import('./params.js').ParsedQuery} ParsedQuery
 * @typedef {import('./filters.js').Filter} Filter
 * @typedef {{ name: string, systemName: string, file: string, line: number, address: string }} Frame
 * @typedef {{ name: string, self: number, total: number, children: StackNode[] }} StackNode
 */

/** @param {any} dictionary @param {number} i */
const text = (dictionary, i) => dictionary.stringTable[i] ?? '';

/** @param {Entry} e @returns {any} the sample's profile (without samples) with its request's dictionary */
const profileOf = (e) => e.ctx.profile;

/** @type {WeakMap<any, string>} */
const typeByProfile = new WeakMap();

/**
 * The sample type as `type:unit` (cpu:nanoseconds), how the API names it; kept per stored profile, since every
 * filter and view of its samples asks and the dictionary it is read from is built when read.
 * @param {any} profile
 */
export function typeOf(profile) {
  let type = typeByProfile.get(profile);
  if (type === undefined) {
    const d = profile.dictionary;
    type = `${text(d, profile.sampleType.typeStrindex)}:${text(d, profile.sampleType.unitStrindex)}`;
    typeByProfile.set(profile, type);
  }
  return type;
}

/** @type {WeakMap<any, Map<number, Frame[]>>} */
const framesByDictionary = new WeakMap();

/**
 * A stack's frames, leaf (the running function) first; inlined functions of one location each make a frame, the
 * innermost first. A location without lines is named by its address (and mapping file, when known).
 * @param {any} dictionary @param {number} stackIndex @returns {Frame[]}
 */
export function framesOf(dictionary, stackIndex) {
  let known = framesByDictionary.get(dictionary);
  if (!known) framesByDictionary.set(dictionary, (known = new Map()));
  let frames = known.get(stackIndex);
  if (frames) return frames;
  frames = [];
  const stack = dictionary.stackTable[stackIndex];
  for (const li of stack?.locationIndices ?? []) {
    const location = dictionary.locationTable[li];
    if (!location) continue;
    const address = `0x${BigInt(location.address).toString(16)}`;
    if (location.lines.length === 0) {
      const file = text(dictionary, dictionary.mappingTable[location.mappingIndex]?.filenameStrindex ?? 0);
      frames.push({ name: file ? `${file} ${address}` : address, systemName: '', file, line: 0, address });
      continue;
    }
    for (const line of location.lines) {
      const fn = dictionary.functionTable[line.functionIndex];
      frames.push({
        name: text(dictionary, fn?.nameStrindex ?? 0) || address,
        systemName: text(dictionary, fn?.systemNameStrindex ?? 0),
        file: text(dictionary, fn?.filenameStrindex ?? 0),
        line: Number(line.line),
        address,
      });
    }
  }
  known.set(stackIndex, frames);
  return frames;
}

/** The sample's attributes, from the dictionary. @param {any} dictionary @param {number[]} indices @returns {any[]} KeyValues */
function attributesAt(dictionary, indices) {
  return indices.map((i) => {
    const a = dictionary.attributeTable[i];
    return { key: text(dictionary, a?.keyStrindex ?? 0), value: a?.value ?? {} };
  });
}

/** @param {any[]} kvs @returns {Record<string, any>} */
const attributesObject = (kvs) => Object.fromEntries(kvs.map((kv) => [kv.key, plainValue(kv.value)]));

/** @param {Entry} e @returns {{ traceId: string, spanId: string }|null} */
function linkOf(e) {
  const link = profileOf(e).dictionary.linkTable[e.item.linkIndex];
  return e.item.linkIndex > 0 && link && link.traceId ? link : null;
}

/** The sum of a sample's values: what it weighs in a flame graph. @param {Entry} e */
export function sampleValue(e) {
  let n = 0;
  for (const v of e.item.values) n += Number(v);
  return n;
}

/**
 * The filters of GET /api/profiles and its aggregate, each over one stored sample.
 * @param {ParsedQuery} q @returns {Filter[]}
 */
export function profileFilters(q) {
  /** @type {Filter[]} */
  const out = [];
  if (q.service !== undefined) out.push({ label: `service=${q.service}`, match: (e) => e.ctx.service === q.service });
  if (q.type !== undefined) {
    const whole = q.type.includes(':');
    out.push({ label: `type=${q.type}`, match: (e) => (whole ? typeOf(profileOf(e)) === q.type : typeOf(profileOf(e)).split(':')[0] === q.type) });
  }
  if (q.profileId !== undefined) out.push({ label: `profileId=${q.profileId}`, match: (e) => profileOf(e).profileId === q.profileId });
  if (q.function !== undefined) {
    out.push({ label: `function=${q.function}`, match: (e) => framesOf(profileOf(e).dictionary, e.item.stackIndex).some((f) => f.name === q.function) });
  }
  if (q.functionContains !== undefined) {
    const has = containsIgnoringCase(q.functionContains);
    out.push({ label: `functionContains=${q.functionContains}`, match: (e) => framesOf(profileOf(e).dictionary, e.item.stackIndex).some((f) => has(f.name)) });
  }
  if (q.traceId !== undefined) {
    const is = traceIdMatcher(q.traceId);
    out.push({ label: `traceId=${q.traceId}`, match: (e) => is(linkOf(e)?.traceId ?? '') });
  }
  if (q.spanId !== undefined) out.push({ label: `spanId=${q.spanId}`, match: (e) => linkOf(e)?.spanId === q.spanId });
  if (q.from !== undefined) out.push({ label: `from=${q.from}`, match: (e) => compareNanos(profileOf(e).timeUnixNano, q.from) >= 0 });
  if (q.to !== undefined) out.push({ label: `to=${q.to}`, match: (e) => compareNanos(profileOf(e).timeUnixNano, q.to) <= 0 });
  // A sample's attributes, then its profile's, then its resource's (entry.attribute, store.js).
  for (const f of q.attributes) out.push(attributeFilter(f));
  return out;
}

/** @param {Entry} e */
export function sampleView(e) {
  const p = profileOf(e);
  return {
    stack: framesOf(p.dictionary, e.item.stackIndex),
    values: e.item.values.map(Number),
    value: sampleValue(e),
    timestampsUnixNano: e.item.timestampsUnixNano,
    attributes: attributesObject(attributesAt(p.dictionary, e.item.attributeIndices)),
    link: linkOf(e),
  };
}

/** A sample with what says where it is from: the live feed's shape of a stored sample. @param {Entry} e */
export function sampleItemView(e) {
  const p = profileOf(e);
  const [type, unit] = typeOf(p).split(':');
  return { profileId: p.profileId, service: e.ctx.service, type, unit, ...sampleView(e) };
}

/**
 * One row of the list: a stored profile and its matching samples (all of them when nothing filters samples).
 * @param {Entry[]} samples of one profile, oldest first @param {{ samples: 'all'|'none' }} options
 */
export function profileRow(samples, { samples: withSamples }) {
  const { ctx } = samples[0];
  const p = ctx.profile;
  const d = p.dictionary;
  const [type, unit] = typeOf(p).split(':');
  let total = 0;
  for (const e of samples) total += sampleValue(e);
  /** @type {Record<string, any>} */
  const row = {
    profileId: p.profileId,
    service: ctx.service,
    type,
    unit,
    periodType: p.periodType.typeStrindex || p.periodType.unitStrindex ? `${text(d, p.periodType.typeStrindex)}:${text(d, p.periodType.unitStrindex)}` : '',
    period: Number(p.period),
    timeUnixNano: p.timeUnixNano,
    durationNano: p.durationNano,
    sampleCount: samples.length,
    total,
    attributes: attributesObject(attributesAt(d, p.attributeIndices)),
    resource: resourceView(ctx.resource),
    scope: { name: ctx.scope.name, version: ctx.scope.version },
    requestId: ctx.requestId,
  };
  if (p.originalPayloadFormat) row.originalPayloadFormat = p.originalPayloadFormat;
  if (withSamples === 'all') row.samples = samples.map(sampleView);
  return row;
}

/**
 * The samples' stacks merged into one tree from the roots (flame graph data: each node a function with the
 * value of the samples whose stacks pass through it, `total`, and of those that stop in it, `self`), and the
 * functions by self and total value (a function counted once per sample however often it recurs in it). Merged
 * in slices: a full store holds a hundred thousand samples.
 * @param {Iterable<Entry>} samples
 */
export async function aggregateOf(samples) {
  const slicer = new Slicer();
  /** @type {StackNode} */
  const root = { name: 'all', self: 0, total: 0, children: [] };
  /** @type {Map<StackNode, Map<string, StackNode>>} */
  const childIndex = new Map();
  /** @type {Map<string, { name: string, file: string, self: number, total: number, samples: number }>} */
  const functions = new Map();
  let count = 0;
  for (const e of samples) {
    const value = sampleValue(e);
    const frames = framesOf(profileOf(e).dictionary, e.item.stackIndex);
    count++;
    root.total += value;
    let node = root;
    for (let i = frames.length - 1; i >= 0; i--) {
      let children = childIndex.get(node);
      if (!children) childIndex.set(node, (children = new Map()));
      let child = children.get(frames[i].name);
      if (!child) {
        child = { name: frames[i].name, self: 0, total: 0, children: [] };
        children.set(frames[i].name, child);
        node.children.push(child);
      }
      child.total += value;
      node = child;
    }
    node.self += value;
    const seen = new Set();
    for (const [i, frame] of frames.entries()) {
      let f = functions.get(frame.name);
      if (!f) functions.set(frame.name, (f = { name: frame.name, file: frame.file, self: 0, total: 0, samples: 0 }));
      if (i === 0) f.self += value;
      if (seen.has(frame.name)) continue;
      seen.add(frame.name);
      f.total += value;
      f.samples++;
    }
    if (slicer.due()) await slicer.pause();
  }
  sortTree(root);
  const top = [...functions.values()].sort((a, b) => b.self - a.self || b.total - a.total || (a.name < b.name ? -1 : 1));
  return { samples: count, total: root.total, tree: root, functions: top };
}

/** Heaviest first, as a flame graph draws them left to right. @param {StackNode} node */
function sortTree(node) {
  node.children.sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : 1));
  for (const child of node.children) sortTree(child);
}

/** @param {any} v */
const quoted = (v) => (v === undefined ? 'absent' : JSON.stringify(v));

/** A sample's stack as text, root first. @param {Entry} e */
const stackText = (e) =>
  framesOf(profileOf(e).dictionary, e.item.stackIndex)
    .map((f) => f.name)
    .reverse()
    .join(' > ') || '(empty)';

/**
 * What /api/verify says of a sample (engine.js `itemWords`): what it has for each filter of the list, how a near
 * miss or a match is described, and what it is called among what else arrived (its leaf function).
 * @type {import('./engine.js').ItemWords}
 */
export const SAMPLE_WORDS = {
  has: {
    service: (e) => `service ${quoted(e.ctx.service)}`,
    type: (e) => `type ${typeOf(profileOf(e))}`,
    profileId: (e) => `profileId ${profileOf(e).profileId || '(none)'}`,
    function: (e) => `stack ${stackText(e)}`,
    functionContains: (e) => `stack ${stackText(e)}`,
    traceId: (e) => `link ${e.item.linkIndex ? 'to a span' : '(none)'}`,
    spanId: (e) => `link ${e.item.linkIndex ? 'to a span' : '(none)'}`,
    from: (e) => `profile time ${profileOf(e).timeUnixNano}`,
    to: (e) => `profile time ${profileOf(e).timeUnixNano}`,
  },
  describe: (e) => `sample ${stackText(e)} (${e.ctx.service || 'no service'}, ${typeOf(profileOf(e))})`,
  name: (e) => framesOf(profileOf(e).dictionary, e.item.stackIndex)[0]?.name ?? '',
};

/**
 * The samples of a snapshot (GET /api/snapshot), merged per service and sample type: how a workload's time or
 * memory divides among its functions, whatever the profiler's sampling split it into. Empty fields are left out.
 * @param {Entry[]} samples the matching ones @param {(n: number, what: string) => void} take counts toward the snapshot's limit
 */
export async function snapshotOfSamples(samples, take) {
  /** @type {Map<string, Entry[]>} */
  const groups = new Map();
  for (const e of samples) {
    const key = JSON.stringify([e.ctx.service, typeOf(profileOf(e))]);
    let group = groups.get(key);
    if (!group) {
      take(1, 'profile groups');
      groups.set(key, (group = []));
    }
    group.push(e);
  }
  const slicer = new Slicer(1);
  /** @param {string} a @param {string} b */
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const out = [];
  for (const [key, group] of [...groups].sort((a, b) => cmp(a[0], b[0]))) {
    const [service, type] = JSON.parse(key);
    const { samples: count, total, functions } = await aggregateOf(group);
    const [name, unit] = type.split(':');
    const row = {
      service,
      type: name,
      unit,
      samples: count,
      total,
      functions: functions.map((f) => ({ name: f.name, self: f.self, total: f.total })).sort((a, b) => cmp(a.name, b.name)),
    };
    out.push(Object.fromEntries(Object.entries(row).filter(([, v]) => v !== '' && v !== undefined && !(Array.isArray(v) && v.length === 0))));
    if (slicer.due()) await slicer.pause();
  }
  return out;
}
