// The one private field of grpc-js that otlp-mock reads: a bound Server's HTTP/2 servers. package.json pins grpc-js
// to the minor version this was checked against, and test/unit/grpc-js-internals.test.js fails when an upgrade
// changes it; so does start-up, with the same words, rather than with a TypeError deep in the gRPC receiver.
import { createRequire } from 'node:module';
import net from 'node:net';

export const GRPC_JS_VERSION = /** @type {string} */ (createRequire(import.meta.url)('@grpc/grpc-js/package.json').version);

const READS_IT = 'server/transport/grpc.js reads it to set the HTTP/2 flow-control windows and to read and answer OTLP Export calls itself';

/** @param {string} how */
function changed(how) {
  return new Error(`grpc-js ${GRPC_JS_VERSION} changed http2Servers (${how}): ${READS_IT}`);
}

/**
 * The HTTP/2 servers a bound grpc-js Server listens with: the keys of its `http2Servers` Map, each taking its streams
 * through grpc-js's own `stream` listeners, which grpc.js calls for every path that is not an OTLP Export.
 * @param {import('@grpc/grpc-js').Server} server a Server whose bindAsync has completed
 * @returns {import('node:http2').Http2Server[]}
 */
export function http2ServersOf(server) {
  const field = /** @type {{ http2Servers?: unknown }} */ (/** @type {unknown} */ (server)).http2Servers;
  if (!(field instanceof Map)) throw changed(`it is ${field === undefined ? 'gone' : 'no longer a Map'}`);
  if (field.size === 0) throw changed('a bound Server has none');
  const servers = [...field.keys()];
  for (const http2Server of servers) {
    if (!(http2Server instanceof net.Server && 'updateSettings' in http2Server && typeof http2Server.updateSettings === 'function')) {
      throw changed('its keys are no longer HTTP/2 servers');
    }
    if (http2Server.listenerCount('stream') === 0) throw changed('its servers no longer take streams with a "stream" listener');
  }
  return servers;
}
