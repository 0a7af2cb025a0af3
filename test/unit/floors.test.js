// The read side is one floor: the query engine, its views and responders, and verify, which builds on them,
// take nothing from the API routes above them (DESIGN.md, floors). Every import is looked at: static ones,
// re-exports, dynamic imports and JSDoc's import() types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('../../server/', import.meta.url));

const STATIC = /(?:^|[\s;])(?:import|export)\s*(?:[\w*\s{},$]*?\bfrom\s*)?['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** @param {string} dir @returns {string[]} */
function modules(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modules(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

/** What a module imports, as paths relative to server/ (packages as named). @param {string} file */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(STATIC), ...text.matchAll(DYNAMIC)].map((m) => m[1]);
  return specifiers.map((s) =>
    s.startsWith('.')
      ? relative(server, resolve(dirname(file), s))
          .split(sep)
          .join('/')
      : s,
  );
}

test('the walk sees every kind of import', () => {
  const engine = importsOf(join(server, 'query/engine.js'));
  assert.ok(engine.includes('query/params.js'), 'a static import');
  assert.ok(engine.includes('store/store.js'), 'a JSDoc import() type');
});

for (const floor of ['query', 'verify']) {
  test(`no module under server/${floor}/ imports from server/api/`, () => {
    const upward = modules(join(server, floor)).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('api/'))
        .map((target) => `${relative(server, file)} imports ${target}`),
    );
    assert.deepEqual(upward, []);
  });
}
