// The chores of clients that went away (slices.js `soon`): a slice's worth per turn of the event loop, each
// job's continuations within its own slice.
import test from 'node:test';
import assert from 'node:assert/strict';
import { soon } from '../../server/transport/slices.js';

test('a chore that settles a promise is followed by what awaits it before the next chore runs', async () => {
  /** @type {string[]} */
  const order = [];
  const done = Array.from({ length: 3 }, (_, i) => {
    /** @type {(v: unknown) => void} */
    let settle = () => {};
    const settled = new Promise((resolve, reject) => (settle = i === 1 ? reject : resolve));
    // As a request handler awaits its body, and journals the refusal where the await throws.
    const awaited = (async () => {
      try {
        await settled;
      } catch {
        // refused
      }
      order.push(`after ${i}`);
    })();
    soon(() => {
      order.push(`chore ${i}`);
      settle(undefined);
      return settled;
    });
    return awaited;
  });
  soon(() => order.push('a chore that returns no promise'));
  await Promise.all(done);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, ['chore 0', 'after 0', 'chore 1', 'after 1', 'chore 2', 'after 2', 'a chore that returns no promise']);
});
