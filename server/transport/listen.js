// Where the receivers listen: every address of `localhost`, so that a client reaches the port whichever of IPv4 and
// IPv6 it resolves `localhost` to first, as Fastify's ports (the API's) do, else the one address given.
import dns from 'node:dns/promises';

/** @param {string} host @returns {Promise<string[]>} */
async function addressesOf(host) {
  if (host !== 'localhost') return [host];
  const found = await dns.lookup(host, { all: true });
  return [...new Set(found.map((a) => a.address))];
}

/** @param {import('node:net').Server} server @param {string} host @param {number} port @returns {Promise<number>} the port bound */
function listenOn(server, host, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
    });
  });
}

/**
 * Listens on every address of `host`, each with a server of its own from `make`, all on one port: the one the first
 * bound when `port` is 0. A failure closes those already listening.
 * @template {import('node:net').Server} S
 * @param {string} host @param {number} port @param {() => S} make @returns {Promise<{ servers: S[], port: number }>}
 */
export async function listenEverywhere(host, port, make) {
  /** @type {S[]} */
  const servers = [];
  let bound = port;
  try {
    for (const address of await addressesOf(host)) {
      const server = make();
      servers.push(server);
      bound = await listenOn(server, address, bound);
    }
  } catch (err) {
    for (const server of servers) server.close();
    throw err;
  }
  return { servers, port: bound };
}
