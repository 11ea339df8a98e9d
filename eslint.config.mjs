/**
 * ESLint flat config: only the React hooks rules (eslint-plugin-react-hooks' recommended-latest: rules-of-hooks,
 * exhaustive-deps and the React Compiler's checks) on the renderer, and the two eslint:recommended rules oxlint
 * does not have on plain JavaScript. Every other rule (eslint:recommended, typescript-eslint's type-aware set,
 * the house rules) is oxlint's, in .oxlintrc.json: `npm run lint` runs both.
 *
 * Why two tools (docs/internals/testing.md, "Lint"): oxlint with tsgolint runs the typed rules on one native
 * TypeScript program for a tenth of ESLint's CPU, but its port of the React Compiler missed findings the
 * reference compiler makes on this tree, so the compiler rules stay here, on the plugin React publishes. None of
 * these rules reads types, so no TypeScript program is built: the parser only parses.
 *
 * A finding is a bug to fix, or a single-line `eslint-disable-next-line react-hooks/<rule> -- why` at the spot;
 * oxlint's own rules take `oxlint-disable-next-line <rule> -- why` (oxlint ignores eslint-disable comments).
 */
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'

export default defineConfig(
  // Build output, dependencies and generated data are not ours to lint.
  globalIgnores(['out/**', 'dist/**', 'coverage/**', 'node_modules/**', '.bench-cache/**', '.cache/**', 'test/e2e/__screenshots__/**']),
  {
    linterOptions: {
      // A disable comment that no longer suppresses anything is noise that hides the next real problem.
      reportUnusedDisableDirectives: 'error',
    },
  },
  {
    // The renderer's React hooks: rules-of-hooks, exhaustive-deps and the React Compiler checks.
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { parser: tseslint.parser },
    ...reactHooks.configs.flat['recommended-latest'],
  },
  {
    // eslint:recommended rules oxlint lacks, where they can fire: a sloppy-mode script may write `017` or
    // `function f(a, a)`. In TypeScript and ES modules (strict code) both are syntax errors that oxlint's parser and
    // tsc report.
    files: ['**/*.{js,cjs,mjs}'],
    rules: { 'no-octal': 'error', 'no-dupe-args': 'error' },
  },
)
