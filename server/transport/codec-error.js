// The one error every decoder of a Content-Encoding throws: the receivers answer `tooLarge` ones 413 /
// RESOURCE_EXHAUSTED, `busy` ones 503 / UNAVAILABLE, and the others 400 (gRPC: INTERNAL, as grpc-js answers a message it cannot decompress).

export class DecompressError extends Error {
  /**
   * @param {string} message @param {boolean} [tooLarge] @param {boolean} [pastLimit] the output itself passed the
   *   request limit (rather than a frame, window or block count)
   * @param {boolean} [busy] the output did not fit in what was left of the in-flight budget: retry later
   */
  constructor(message, tooLarge = false, pastLimit = false, busy = false) {
    super(message);
    this.tooLarge = tooLarge;
    this.pastLimit = pastLimit;
    this.busy = busy;
  }
}

/** @param {number} limit */
export const overLimit = (limit) => new DecompressError(`decompressed request body exceeds the limit of ${limit} bytes`, true, true);
