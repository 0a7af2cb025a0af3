// `npm run lint`: ESLint's recommended rules for the server and its tests, benches, scripts and fixtures
// (Node), typescript-eslint's and the React hooks rules for the web app. Formatting is Prettier's, not ESLint's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['node_modules/', 'web/dist/', 'types/', '.scratch/', 'tmp/'] },
  {
    files: ['**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    // `const { key, ...rest } = item` is how a field is left out of a copy
    rules: { 'no-unused-vars': ['error', { ignoreRestSiblings: true }] },
  },
  {
    // Playwright's page.evaluate and waitForFunction callbacks run in the page
    files: ['test/browser/**/*.js', 'bench/ui-*.js', 'examples/playwright/**/*.js'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    files: ['web/**/*.{ts,tsx}'],
    extends: [tseslint.configs.recommended],
    languageOptions: { globals: { ...globals.browser } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    // The rules of hooks themselves; the plugin's recommended set adds the React Compiler's rules, and the app
    // is not compiled by it (it keeps the latest props in refs on purpose, e.g. VirtualList's item keys).
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
);
