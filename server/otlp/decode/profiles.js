// Profiles (profiles.proto, v1development): the request's dictionary, checked at ingest before anything that
// points into it (at once, or a few fields at a time: DictionaryWalk), and the decoders of a Profile and of a Sample, which checks one without building it
// while the cursor is not building. Resource and scope attributes may name their keys and string values by
// index into the dictionary's strings (key_strindex, string_value_strindex): the dictionary is read first and
// its strings handed to common.js, which resolves them.
import { EMPTY_ANY, EMPTY_ARRAY } from '../model.js';
import { anyValue, countLevel, push, requestGroups, useStrings } from './common.js';
import {
  check,
  cursor,
  I64,
  LEN,
  VARINT,
  base64,
  delimited,
  fail,
  fieldTag,
  fieldsOf,
  finish,
  fixed64String,
  skip,
  spanIdOf,
  string,
  traceIdOf,
  varint32,
  varint64String,
} from './wire.js';

/** ExportProfilesServiceRequest: its resource groups (read by common.js) and its dictionary. */
const REQUEST = Object.freeze({ RESOURCES: fieldTag(1, LEN), DICTIONARY: fieldTag(2, LEN) });
const DICTIONARY = Object.freeze({
  MAPPINGS: fieldTag(1, LEN),
  LOCATIONS: fieldTag(2, LEN),
  FUNCTIONS: fieldTag(3, LEN),
  LINKS: fieldTag(4, LEN),
  STRINGS: fieldTag(5, LEN),
  ATTRIBUTES: fieldTag(6, LEN),
  STACKS: fieldTag(7, LEN),
});
const PROFILE = Object.freeze({
  SAMPLE_TYPE: fieldTag(1, LEN),
  SAMPLES: fieldTag(2, LEN),
  TIME_UNIX_NANO: fieldTag(3, I64),
  DURATION_NANO: fieldTag(4, VARINT),
  PERIOD_TYPE: fieldTag(5, LEN),
  PERIOD: fieldTag(6, VARINT),
  PROFILE_ID: fieldTag(7, LEN),
  DROPPED_ATTRIBUTES_COUNT: fieldTag(8, VARINT),
  ORIGINAL_PAYLOAD_FORMAT: fieldTag(9, LEN),
  ORIGINAL_PAYLOAD: fieldTag(10, LEN),
  ATTRIBUTE_INDICES: fieldTag(11, VARINT),
});
const SAMPLE = Object.freeze({
  STACK_INDEX: fieldTag(1, VARINT),
  ATTRIBUTE_INDICES: fieldTag(2, VARINT),
  LINK_INDEX: fieldTag(3, VARINT),
  VALUES: fieldTag(4, VARINT),
  TIMESTAMPS: fieldTag(5, I64),
});
const VALUE_TYPE = Object.freeze({ TYPE: fieldTag(1, VARINT), UNIT: fieldTag(2, VARINT) });
const MAPPING = Object.freeze({
  MEMORY_START: fieldTag(1, VARINT),
  MEMORY_LIMIT: fieldTag(2, VARINT),
  FILE_OFFSET: fieldTag(3, VARINT),
  FILENAME: fieldTag(4, VARINT),
  ATTRIBUTE_INDICES: fieldTag(5, VARINT),
});
const LOCATION = Object.freeze({
  MAPPING_INDEX: fieldTag(1, VARINT),
  ADDRESS: fieldTag(2, VARINT),
  LINES: fieldTag(3, LEN),
  ATTRIBUTE_INDICES: fieldTag(4, VARINT),
});
const LINE = Object.freeze({ FUNCTION_INDEX: fieldTag(1, VARINT), LINE: fieldTag(2, VARINT), COLUMN: fieldTag(3, VARINT) });
const FUNCTION = Object.freeze({
  NAME: fieldTag(1, VARINT),
  SYSTEM_NAME: fieldTag(2, VARINT),
  FILENAME: fieldTag(3, VARINT),
  START_LINE: fieldTag(4, VARINT),
});
const LINK = Object.freeze({ TRACE_ID: fieldTag(1, LEN), SPAN_ID: fieldTag(2, LEN) });
const STACK = Object.freeze({ LOCATIONS: fieldTag(1, VARINT) });
const KEY_VALUE_AND_UNIT = Object.freeze({ KEY: fieldTag(1, VARINT), VALUE: fieldTag(2, LEN), UNIT: fieldTag(3, VARINT) });

const REQUEST_FIELDS = fieldsOf(REQUEST);
const DICTIONARY_FIELDS = fieldsOf(DICTIONARY);
const PROFILE_FIELDS = fieldsOf(PROFILE);
const SAMPLE_FIELDS = fieldsOf(SAMPLE);
const VALUE_TYPE_FIELDS = fieldsOf(VALUE_TYPE);
const MAPPING_FIELDS = fieldsOf(MAPPING);
const LOCATION_FIELDS = fieldsOf(LOCATION);
const LINE_FIELDS = fieldsOf(LINE);
const FUNCTION_FIELDS = fieldsOf(FUNCTION);
const LINK_FIELDS = fieldsOf(LINK);
const STACK_FIELDS = fieldsOf(STACK);
const KVU_FIELDS = fieldsOf(KEY_VALUE_AND_UNIT);

/** The packed form of a repeated scalar: its tag with wire type LEN. @param {number} tag */
const packedTag = (tag) => (tag & ~7) | LEN;

/** Where a Profile's samples are, for counting them without a decode (common.js ItemCount). @type {readonly import('./common.js').CountLevel[]} */
export const SAMPLES_IN_PROFILE = Object.freeze([countLevel([PROFILE.SAMPLES], { ...PROFILE, PACKED_ATTRIBUTE_INDICES: packedTag(PROFILE.ATTRIBUTE_INDICES) })]);

const int32 = () => varint32() | 0;
const int64 = () => varint64String(true);
const uint64 = () => varint64String(false);

/**
 * Appends one value or a packed run of them (repeated scalars come either way, and later ones add to earlier).
 * @param {any[]} list @param {number} tag the one read @param {number} end @param {(end: number) => any} read
 * @param {number} width bytes of each value of a fixed-width run, 0 for varints
 */
function repeated(list, tag, end, read, width) {
  if ((tag & 7) !== LEN) return push(list, read(end));
  const e = delimited(end);
  if (width && (e - cursor.pos) % width !== 0) throw fail('packed field length is not a whole number of values');
  while (cursor.pos < e) list = push(list, read(e));
  if (cursor.pos !== e) throw fail('truncated');
  return list;
}

const fixed64 = (/** @type {number} */ end) => fixed64String(end, false);

/** @param {number} end */
function valueType(end) {
  let typeStrindex = 0;
  let unitStrindex = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === VALUE_TYPE.TYPE) typeStrindex = int32();
    else if (tag === VALUE_TYPE.UNIT) unitStrindex = int32();
    else skip(tag, end, VALUE_TYPE_FIELDS);
  }
  finish(end);
  return { typeStrindex, unitStrindex };
}

/** @type {{ typeStrindex: number, unitStrindex: number }} */
const DEFAULT_VALUE_TYPE = Object.freeze({ typeStrindex: 0, unitStrindex: 0 });

/** A canonical Sample; while the cursor is not building (a check), the empty AnyValue. @param {number} end */
export function sample(end) {
  let stackIndex = 0;
  let attributeIndices = EMPTY_ARRAY;
  let linkIndex = 0;
  let values = EMPTY_ARRAY;
  let timestampsUnixNano = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case SAMPLE.STACK_INDEX:
        stackIndex = int32();
        break;
      case SAMPLE.LINK_INDEX:
        linkIndex = int32();
        break;
      case SAMPLE.ATTRIBUTE_INDICES:
      case packedTag(SAMPLE.ATTRIBUTE_INDICES):
        attributeIndices = repeated(attributeIndices, tag, end, int32, 0);
        break;
      case SAMPLE.VALUES:
      case packedTag(SAMPLE.VALUES):
        values = repeated(values, tag, end, int64, 0);
        break;
      case SAMPLE.TIMESTAMPS:
      case packedTag(SAMPLE.TIMESTAMPS):
        timestampsUnixNano = repeated(timestampsUnixNano, tag, end, fixed64, 8);
        break;
      default:
        skip(tag, end, SAMPLE_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { stackIndex, attributeIndices, linkIndex, values, timestampsUnixNano };
}

/** @type {import('./common.js').ItemKind} */
export const SAMPLE_ITEM = { decode: sample, attributesTag: SAMPLE.ATTRIBUTE_INDICES };

/**
 * A Profile; its samples decoded by `sampleItem` (checked into stored items) or, without one, built.
 * @param {number} end @param {((end: number) => any)|null} sampleItem
 */
export function profile(end, sampleItem) {
  let sampleType = DEFAULT_VALUE_TYPE;
  let samples = EMPTY_ARRAY;
  let timeUnixNano = '0';
  let durationNano = '0';
  let periodType = DEFAULT_VALUE_TYPE;
  let period = '0';
  let profileId = '';
  let droppedAttributesCount = 0;
  let originalPayloadFormat = '';
  let originalPayload = '';
  let attributeIndices = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case PROFILE.SAMPLE_TYPE:
        sampleType = valueType(delimited(end));
        break;
      case PROFILE.SAMPLES: {
        const e = delimited(end);
        samples = push(samples, sampleItem ? sampleItem(e) : sample(e));
        break;
      }
      case PROFILE.TIME_UNIX_NANO:
        timeUnixNano = fixed64String(end, false);
        break;
      case PROFILE.DURATION_NANO:
        durationNano = uint64();
        break;
      case PROFILE.PERIOD_TYPE:
        periodType = valueType(delimited(end));
        break;
      case PROFILE.PERIOD:
        period = int64();
        break;
      case PROFILE.PROFILE_ID:
        profileId = profileIdOf(end);
        break;
      case PROFILE.DROPPED_ATTRIBUTES_COUNT:
        droppedAttributesCount = varint32();
        break;
      case PROFILE.ORIGINAL_PAYLOAD_FORMAT:
        originalPayloadFormat = string(end);
        break;
      case PROFILE.ORIGINAL_PAYLOAD:
        originalPayload = base64(end);
        break;
      case PROFILE.ATTRIBUTE_INDICES:
      case packedTag(PROFILE.ATTRIBUTE_INDICES):
        attributeIndices = repeated(attributeIndices, tag, end, int32, 0);
        break;
      default:
        skip(tag, end, PROFILE_FIELDS);
    }
  }
  finish(end);
  return {
    sampleType,
    samples,
    timeUnixNano,
    durationNano,
    periodType,
    period,
    profileId,
    droppedAttributesCount,
    originalPayloadFormat,
    originalPayload,
    attributeIndices,
  };
}

/** A profile id: 16 bytes as lowercase hex, or none. @param {number} end */
function profileIdOf(end) {
  const e = delimited(end);
  const len = e - cursor.pos;
  if (len !== 0 && len !== 16) throw fail(`profile id must be 16 bytes, got ${len}`);
  const id = cursor.buf.hexSlice(cursor.pos, e);
  cursor.pos = e;
  return id;
}

// ---- the dictionary ----

/** @param {number} end */
function mapping(end) {
  let memoryStart = '0';
  let memoryLimit = '0';
  let fileOffset = '0';
  let filenameStrindex = 0;
  let attributeIndices = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case MAPPING.MEMORY_START:
        memoryStart = uint64();
        break;
      case MAPPING.MEMORY_LIMIT:
        memoryLimit = uint64();
        break;
      case MAPPING.FILE_OFFSET:
        fileOffset = uint64();
        break;
      case MAPPING.FILENAME:
        filenameStrindex = int32();
        break;
      case MAPPING.ATTRIBUTE_INDICES:
      case packedTag(MAPPING.ATTRIBUTE_INDICES):
        attributeIndices = repeated(attributeIndices, tag, end, int32, 0);
        break;
      default:
        skip(tag, end, MAPPING_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { memoryStart, memoryLimit, fileOffset, filenameStrindex, attributeIndices };
}

/** @param {number} end */
function line(end) {
  let functionIndex = 0;
  let lineNumber = '0';
  let column = '0';
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === LINE.FUNCTION_INDEX) functionIndex = int32();
    else if (tag === LINE.LINE) lineNumber = int64();
    else if (tag === LINE.COLUMN) column = int64();
    else skip(tag, end, LINE_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { functionIndex, line: lineNumber, column };
}

/** @param {number} end */
function location(end) {
  let mappingIndex = 0;
  let address = '0';
  let lines = EMPTY_ARRAY;
  let attributeIndices = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    switch (tag) {
      case LOCATION.MAPPING_INDEX:
        mappingIndex = int32();
        break;
      case LOCATION.ADDRESS:
        address = uint64();
        break;
      case LOCATION.LINES:
        lines = push(lines, line(delimited(end)));
        break;
      case LOCATION.ATTRIBUTE_INDICES:
      case packedTag(LOCATION.ATTRIBUTE_INDICES):
        attributeIndices = repeated(attributeIndices, tag, end, int32, 0);
        break;
      default:
        skip(tag, end, LOCATION_FIELDS);
    }
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { mappingIndex, address, lines, attributeIndices };
}

/** @param {number} end */
function functionOf(end) {
  let nameStrindex = 0;
  let systemNameStrindex = 0;
  let filenameStrindex = 0;
  let startLine = '0';
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === FUNCTION.NAME) nameStrindex = int32();
    else if (tag === FUNCTION.SYSTEM_NAME) systemNameStrindex = int32();
    else if (tag === FUNCTION.FILENAME) filenameStrindex = int32();
    else if (tag === FUNCTION.START_LINE) startLine = int64();
    else skip(tag, end, FUNCTION_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { nameStrindex, systemNameStrindex, filenameStrindex, startLine };
}

/** @param {number} end */
function link(end) {
  let traceId = '';
  let spanId = '';
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === LINK.TRACE_ID) traceId = traceIdOf(end);
    else if (tag === LINK.SPAN_ID) spanId = spanIdOf(end);
    else skip(tag, end, LINK_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { traceId, spanId };
}

/** @param {number} end */
function stack(end) {
  let locationIndices = EMPTY_ARRAY;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === STACK.LOCATIONS || tag === packedTag(STACK.LOCATIONS)) locationIndices = repeated(locationIndices, tag, end, int32, 0);
    else skip(tag, end, STACK_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { locationIndices };
}

/** @param {number} end */
function keyValueAndUnit(end) {
  let keyStrindex = 0;
  let value = EMPTY_ANY;
  let unitStrindex = 0;
  while (cursor.pos < end) {
    const tag = varint32();
    if (tag === KEY_VALUE_AND_UNIT.KEY) keyStrindex = int32();
    else if (tag === KEY_VALUE_AND_UNIT.VALUE) value = anyValue(delimited(end), 0);
    else if (tag === KEY_VALUE_AND_UNIT.UNIT) unitStrindex = int32();
    else skip(tag, end, KVU_FIELDS);
  }
  finish(end);
  if (!cursor.building) return EMPTY_ANY;
  return { keyStrindex, value, unitStrindex };
}

/** The tables of the dictionary other than its strings, by tag. @type {Record<number, [string, (end: number) => any]>} */
const TABLES = {
  [DICTIONARY.MAPPINGS]: ['mappingTable', mapping],
  [DICTIONARY.LOCATIONS]: ['locationTable', location],
  [DICTIONARY.FUNCTIONS]: ['functionTable', functionOf],
  [DICTIONARY.LINKS]: ['linkTable', link],
  [DICTIONARY.ATTRIBUTES]: ['attributeTable', keyValueAndUnit],
  [DICTIONARY.STACKS]: ['stackTable', stack],
};

/** The name errors give the dictionary's strings. */
const DICTIONARY_NAME = 'the dictionary';

/**
 * Reads the next field of the dictionary for its strings, which its attribute values and the request's resource
 * and scope attributes may name by index: the tables are passed over.
 * @param {number} end @param {string[]} stringTable
 */
function stringsField(end, stringTable) {
  const tag = varint32();
  if (tag === DICTIONARY.STRINGS) stringTable.push(string(end));
  else if (TABLES[tag]) cursor.pos = delimited(end);
  else skip(tag, end, DICTIONARY_FIELDS);
}

/**
 * Reads the next field of the dictionary into its tables other than its strings; while the cursor is not building
 * (a check), only reads it. @param {number} end @param {Record<string, any[]>} tables
 */
function tablesField(end, tables) {
  const tag = varint32();
  const table = TABLES[tag];
  if (table) {
    const entry = table[1](delimited(end));
    if (cursor.building) tables[table[0]].push(entry);
  } else if (tag === DICTIONARY.STRINGS) cursor.pos = delimited(end);
  else skip(tag, end, DICTIONARY_FIELDS);
}

/** The dictionary's strings, handed to common.js while the request is read. @param {number} end */
function dictionaryStrings(end) {
  const start = cursor.pos;
  /** @type {string[]} */
  const stringTable = [];
  while (cursor.pos < end) stringsField(end, stringTable);
  finish(end);
  useStrings(stringTable, DICTIONARY_NAME);
  cursor.pos = start;
  return stringTable;
}

/** The dictionary's tables other than its strings. @param {number} end @param {string[]} stringTable */
function dictionaryTables(end, stringTable) {
  /** @type {Record<string, any[]>} */
  const tables = { mappingTable: [], locationTable: [], functionTable: [], linkTable: [], stringTable, attributeTable: [], stackTable: [] };
  while (cursor.pos < end) tablesField(end, tables);
  return tables;
}

/** The dictionary, built: its strings read first, since attribute values of its table may name them. @param {number} end */
function dictionary(end) {
  return dictionaryTables(end, dictionaryStrings(end));
}

/**
 * Checks a dictionary as a full decode would read it, building only its strings, which the request's attributes
 * may name (the item model keeps its place and builds it when read: checkedDictionary in items.js).
 * @param {number} end
 */
export function checkDictionary(end) {
  const strings = dictionaryStrings(end);
  check((e) => dictionaryTables(e, strings), end);
}

/** A dictionary checked before, built from its bytes (readItem). @param {number} end */
export function builtDictionary(end) {
  try {
    return dictionary(end);
  } finally {
    useStrings(null);
  }
}

/**
 * Reads the next field of an ExportProfilesServiceRequest's top level, as the walk that finds its dictionary does.
 * @param {number} end @returns {number} where the dictionary's length begins, if the field was one, or -1
 */
function topField(end) {
  const tag = varint32();
  if (tag === REQUEST.DICTIONARY) {
    const at = cursor.pos;
    cursor.pos = delimited(end);
    return at;
  }
  if (tag === REQUEST.RESOURCES) cursor.pos = delimited(end);
  else skip(tag, end, REQUEST_FIELDS);
  return -1;
}

/** What a DictionaryWalk reads next. */
const FINDING = 0;
const STRINGS = 1;
const TABLES_CHECKED = 2;
const READ = 3;

/**
 * What `profilesRequest` reads before the resource groups, with its dictionary checked, read a few fields at a time
 * (a sliced decode, items.js SlicedDecode): the request's top level, for its dictionary (the last, if several);
 * then the dictionary's strings; then its tables, checked. A dictionary of 100,000 stacks, checked at once, held
 * the event loop 15-20 ms. Its errors are the ones the whole decode gives, in the same order.
 */
export class DictionaryWalk {
  /** @param {number} end the request's */
  constructor(end) {
    this.end = end;
    this.state = FINDING;
    /** where the next step reads from */
    this.pos = cursor.pos;
    /** where the dictionary's length prefix is, and where its fields begin and end; -1: the request has none */
    this.at = -1;
    this.start = 0;
    this.dictionaryEnd = 0;
    /** @type {string[]} */
    this.strings = [];
  }

  /**
   * Reads fields until `bytes` of the request are read past where the step began, or the dictionary is checked.
   * @param {number} bytes @returns {boolean} whether the dictionary is checked whole
   */
  step(bytes) {
    cursor.pos = this.pos;
    const stop = this.pos + bytes;
    const { end, dictionaryEnd } = this;
    if (this.state === FINDING) {
      while (cursor.pos < end && cursor.pos < stop) {
        const at = topField(end);
        if (at >= 0) this.at = at;
      }
      if (cursor.pos >= end) this.found();
    } else if (this.state === STRINGS) {
      while (cursor.pos < dictionaryEnd && cursor.pos < stop) stringsField(dictionaryEnd, this.strings);
      if (cursor.pos >= dictionaryEnd) {
        finish(dictionaryEnd);
        cursor.pos = this.start;
        this.state = TABLES_CHECKED;
      }
    } else if (this.state === TABLES_CHECKED) {
      this.within(() =>
        check(() => {
          while (cursor.pos < dictionaryEnd && cursor.pos < stop) tablesField(dictionaryEnd, NO_TABLES);
        }, dictionaryEnd),
      );
      if (cursor.pos >= dictionaryEnd) this.state = READ;
    }
    this.pos = cursor.pos;
    return this.state === READ;
  }

  /** The top level read whole: the dictionary's strings are read next, if it has one. */
  found() {
    finish(this.end);
    if (this.at < 0) {
      this.state = READ;
      return;
    }
    cursor.pos = this.at;
    this.dictionaryEnd = delimited(this.end);
    this.start = cursor.pos;
    this.state = STRINGS;
  }

  /**
   * Runs `read` with the dictionary's strings for the attributes it reads to name; a request without a dictionary
   * has no string table, as in `profilesRequest`. @template T @param {() => T} read
   */
  within(read) {
    if (this.at < 0) return read();
    useStrings(this.strings, DICTIONARY_NAME);
    try {
      return read();
    } finally {
      useStrings(null);
    }
  }
}

/** The tables a check reads the dictionary into: none, since it builds nothing. */
const NO_TABLES = Object.freeze({});

/** The dictionary of a request that has none. @type {Record<string, any[]>} */
export const EMPTY_DICTIONARY = Object.freeze({
  mappingTable: EMPTY_ARRAY,
  locationTable: EMPTY_ARRAY,
  functionTable: EMPTY_ARRAY,
  linkTable: EMPTY_ARRAY,
  stringTable: EMPTY_ARRAY,
  attributeTable: EMPTY_ARRAY,
  stackTable: EMPTY_ARRAY,
});

/**
 * An ExportProfilesServiceRequest filling the cursor's bytes: the dictionary (the last one, if the sender wrote
 * several, as a full decode would keep), then the resource groups with their profiles, each profile's samples
 * decoded by `sampleItem` or built, and the dictionary by `dictionaryItem` (checked, built when read) or built.
 * @param {number} end @param {((end: number) => any)|null} sampleItem @param {((end: number) => any)|null} dictionaryItem
 */
export function profilesRequest(end, sampleItem, dictionaryItem) {
  let dict = EMPTY_DICTIONARY;
  let at = -1;
  while (cursor.pos < end) {
    const found = topField(end);
    if (found >= 0) at = found;
  }
  finish(end);
  try {
    if (at >= 0) {
      cursor.pos = at;
      const e = delimited(end);
      dict = dictionaryItem ? dictionaryItem(e) : dictionary(e);
    }
    cursor.pos = 0;
    const resourceProfiles = requestGroups(end, 'scopeProfiles', 'profiles', (e) => profile(e, sampleItem));
    return { resourceProfiles, dictionary: dict };
  } finally {
    useStrings(null);
  }
}

/**
 * Puts the dictionary's strings in place of the indices that name them in a request decoded from OTLP/JSON (by
 * reflection, decode-json.js, which keeps those indices for this): in the attributes of resources and scopes and
 * the values of the dictionary's attribute table, as the protobuf decoder does while it reads.
 * @param {any} request @param {(path: string, problem: string) => Error} fieldError an error at a path of the request
 */
export function resolveJsonStrings(request, fieldError) {
  const strings = request.dictionary.stringTable;
  /** @param {number} index @param {string} path */
  const text = (index, path) => {
    if (index < 0 || index >= strings.length) throw fieldError(path, `string index ${index} is past the dictionary's ${strings.length} strings`);
    return strings[index];
  };
  /** @param {any} v an AnyValue @param {string} path @returns {any} */
  const value = (v, path) => {
    if (v.stringValueStrindex !== undefined) {
      const { stringValueStrindex, ...rest } = v;
      return { ...rest, stringValue: text(stringValueStrindex, path) };
    }
    if (v.arrayValue) return { arrayValue: { values: v.arrayValue.values.map((/** @type {any} */ item) => value(item, path)) } };
    if (v.kvlistValue) return { kvlistValue: { values: attributes(v.kvlistValue.values, path) } };
    return v;
  };
  /** @param {any[]} list @param {string} path */
  const attributes = (list, path) =>
    list.map(({ keyStrindex, ...kv }, i) => ({
      ...kv,
      key: keyStrindex ? text(keyStrindex, `${path}[${i}]`) : kv.key,
      value: value(kv.value, `${path}[${i}].value`),
    }));
  for (const [r, group] of request.resourceProfiles.entries()) {
    group.resource = { ...group.resource, attributes: attributes(group.resource.attributes, `.resourceProfiles[${r}].resource.attributes`) };
    for (const sg of group.scopeProfiles) sg.scope = { ...sg.scope, attributes: attributes(sg.scope.attributes, '.scope.attributes') };
  }
  request.dictionary.attributeTable = request.dictionary.attributeTable.map((/** @type {any} */ a, /** @type {number} */ i) => ({
    ...a,
    value: value(a.value, `.dictionary.attributeTable[${i}].value`),
  }));
}
