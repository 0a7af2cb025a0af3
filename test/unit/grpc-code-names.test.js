// The web app names gRPC codes from a list of its own, since it cannot import grpc-js: it must be grpc-js's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { status } from '@grpc/grpc-js';

test("web/src/format.ts's GRPC_CODES are grpc-js's status names, by code", () => {
  const source = readFileSync(new URL('../../web/src/format.ts', import.meta.url), 'utf8');
  const list = /export const GRPC_CODES = \[([^\]]*)\]/.exec(source);
  assert.ok(list, 'web/src/format.ts no longer declares GRPC_CODES as a list of names');
  const web = [...list[1].matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
  const grpcJs = Object.entries(status)
    .filter(([, code]) => typeof code === 'number')
    .sort(([, a], [, b]) => Number(a) - Number(b))
    .map(([name]) => name);
  assert.deepEqual(web, grpcJs);
});
