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
