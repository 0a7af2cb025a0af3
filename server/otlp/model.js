/**
 * Shared, frozen defaults of the canonical model (docs/internals.md). Decoders hand out these same
 * objects for every unset field, so an empty field costs no memory; nothing may mutate a decoded request.
 */
export const EMPTY_ARRAY = /** @type {any[]} */ (/** @type {unknown} */ (Object.freeze([])));
export const EMPTY_ANY = Object.freeze({});
/** @type {{ message: string, code: number }} */
export const DEFAULT_STATUS = Object.freeze({ message: '', code: 0 });
/** @type {{ offset: number, bucketCounts: string[] }} */
export const DEFAULT_BUCKETS = Object.freeze({ offset: 0, bucketCounts: EMPTY_ARRAY });
export const DEFAULT_RESOURCE = Object.freeze({ attributes: EMPTY_ARRAY, droppedAttributesCount: 0, entityRefs: EMPTY_ARRAY });
export const DEFAULT_SCOPE = Object.freeze({ name: '', version: '', attributes: EMPTY_ARRAY, droppedAttributesCount: 0 });

// The model keeps 64-bit integers as exact decimal strings without leading zeros ("0" when unset).

/** Compares two such strings as the numbers they are: by length first. @param {string} a @param {string} b */
export function compareNanos(a, b) {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** `end - start` as a decimal string, "0" when either is unset. @param {string} start @param {string} end */
export function durationNanos(start, end) {
  if (start === '0' || end === '0') return '0';
  return (BigInt(end) - BigInt(start)).toString();
}
