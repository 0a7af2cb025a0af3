// grpc-js's private state that otlp-mock reads, and the pin that keeps it where it was checked. An upgrade that moves
// it fails here with words that say what changed and what reads it, rather than in every gRPC test at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { GRPC_JS_VERSION, http2ServersOf } from '../../server/transport/grpc-js-servers.js';

const READER = /^grpc-js \d+\.\d+\.\d+\S* changed http2Servers \(.+\): server\/transport\/grpc\.js reads it to /;

test(`grpc-js ${GRPC_JS_VERSION}: a bound Server's http2Servers are HTTP/2 servers taking streams through a "stream" listener`, async () => {
  const server = new grpc.Server();
  try {
    await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
    const servers = http2ServersOf(server);
    assert.ok(servers.length >= 1);
    for (const http2Server of servers) {
      assert.equal(typeof http2Server.updateSettings, 'function');
      assert.ok(http2Server.listenerCount('stream') >= 1);
    }
  } finally {
    server.forceShutdown();
  }
});

test('a changed http2Servers is named, with the grpc-js version and what reads it', () => {
  const shapes = {
    gone: {},
    'not a Map': { http2Servers: new Set() },
    empty: { http2Servers: new Map() },
    'keys that are not HTTP/2 servers': { http2Servers: new Map([[{}, {}]]) },
  };
  for (const [shape, server] of Object.entries(shapes)) {
    assert.throws(
      () => http2ServersOf(/** @type {any} */ (server)),
      (/** @type {Error} */ err) => {
        assert.match(err.message, READER, shape);
        assert.ok(err.message.startsWith(`grpc-js ${GRPC_JS_VERSION} `), err.message);
        return true;
      },
    );
  }
});

test('package.json pins grpc-js to a minor version (a ~ range or an exact one), and the installed grpc-js is in it', () => {
  const range = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).dependencies['@grpc/grpc-js'];
  const pinned = /^(~?)(\d+)\.(\d+)\.(\d+)$/.exec(range);
  assert.ok(
    pinned,
    `@grpc/grpc-js is "${range}" in package.json: server/transport/grpc-js-servers.js reads its private fields, so pin it to one minor version ("~1.14.7")`,
  );
  const [, , major, minor, patch] = pinned.map(Number);
  const [haveMajor, haveMinor, havePatch] = GRPC_JS_VERSION.split('.').map(Number);
  assert.deepEqual([haveMajor, haveMinor], [major, minor], `grpc-js ${GRPC_JS_VERSION} is installed, outside "${range}"`);
  assert.ok(pinned[1] === '~' ? havePatch >= patch : havePatch === patch, `grpc-js ${GRPC_JS_VERSION} is installed, outside "${range}"`);
});
