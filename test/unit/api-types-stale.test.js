// The API's generated types (web/src/generated/api.ts, server/client/api.generated.d.ts) are what
// openapi-typescript writes from the OpenAPI document the server serves today: a schema changed without
// `npm run api-types` fails here, naming the files.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TARGETS, apiDocument, apiTypes } from '../../scripts/api-types.js';

test('the committed API types are what npm run api-types generates from /api/openapi.json', async () => {
  const expected = await apiTypes(await apiDocument());
  const root = new URL('../../', import.meta.url);
  const stale = TARGETS.filter((path) => readFileSync(new URL(path, root), 'utf8') !== expected);
  assert.deepEqual(
    stale,
    [],
    `${stale.join(' and ')} ${stale.length > 1 ? 'differ' : 'differs'} from the API's schemas: run npm run api-types and commit what it writes`,
  );
});
