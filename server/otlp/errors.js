/** A request body that is not a valid OTLP message; the message says where and why. */
export class DecodeError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'DecodeError';
  }
}
