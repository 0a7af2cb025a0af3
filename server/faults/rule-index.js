// Which fault rules a request must be checked against. Rules are many (up to --max-faults) and requests many more,
// so a request looks only at the rules of its side, signal and wire, and of those, at a rule that matches headers
// only when the request carries the first of its headers with the wanted value: the rest cannot match it, and
// cost it nothing. What is left is checked in full (rules.js), in the rules' order.

/** @typedef {{ rule: import('./rules.js').FaultRule, headers: readonly (readonly [string, string])[] }} Indexed */

/**
 * @template {Indexed} E
 * @typedef {{ open: E[], byHeader: Map<string, Map<string, E[]>> }} Bucket
 *   `open`: the rules that match no header; `byHeader`: the others, by the name and value of their first header
 */

/** @type {readonly never[]} */
const NONE = Object.freeze([]);

/** @param {string} side @param {string} signal @param {string} transport */
const bucketKey = (side, signal, transport) => `${side}/${signal}/${transport}`;

/** @template {Indexed} E */
export class RuleIndex {
  /** @type {Map<string, Bucket<E>>} */
  #buckets = new Map();
  /** @type {Map<E, number>} each rule's place in checking order */
  #order = new Map();

  /** @param {readonly E[]} entries in checking order */
  constructor(entries) {
    entries.forEach((entry, i) => {
      this.#order.set(entry, i);
      const { side, signals, transports } = entry.rule;
      for (const signal of signals)
        for (const transport of transports) {
          const key = bucketKey(side, signal, transport);
          let bucket = this.#buckets.get(key);
          if (!bucket) this.#buckets.set(key, (bucket = { open: [], byHeader: new Map() }));
          if (entry.headers.length === 0) bucket.open.push(entry);
          else {
            const [name, value] = entry.headers[0];
            let values = bucket.byHeader.get(name);
            if (!values) bucket.byHeader.set(name, (values = new Map()));
            const list = values.get(value);
            if (list) list.push(entry);
            else values.set(value, [entry]);
          }
        }
    });
  }

  /**
   * The rules that may match a request, in checking order: every rule that would pass its filters is among them.
   * @param {import('./rules.js').FaultContext} ctx @returns {readonly E[]}
   */
  candidates(ctx) {
    // Most servers run with no rules at all: no key to build for every request.
    if (this.#buckets.size === 0) return NONE;
    const bucket = this.#buckets.get(bucketKey(ctx.side ?? 'client', ctx.signal, ctx.transport));
    if (!bucket) return NONE;
    /** @type {E[][]} */
    const lists = bucket.open.length ? [bucket.open] : [];
    for (const [name, values] of bucket.byHeader) {
      const got = ctx.headers[name];
      if (typeof got === 'string') {
        const list = values.get(got);
        if (list) lists.push(list);
      } else if (Array.isArray(got)) {
        for (const value of new Set(got)) {
          const list = values.get(value);
          if (list) lists.push(list);
        }
      }
    }
    if (lists.length <= 1) return lists[0] ?? [];
    return lists.flat().sort((a, b) => /** @type {number} */ (this.#order.get(a)) - /** @type {number} */ (this.#order.get(b)));
  }
}
