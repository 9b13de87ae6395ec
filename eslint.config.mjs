// @ts-check
// `npm run lint`: ESLint over the whole tree, type-aware for TypeScript. Promise rules first, since a
// dropped promise in an activity or a worker is a lost error; then the Temporal workflow sandbox
// rule: workflow code is bundled into a deterministic isolate, where a Node built-in or an activity
// implementation has no business (activities are reached through proxyActivities and their types).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const nodeBuiltins = builtinModules.filter((name) => !name.startsWith('_'));

export default defineConfig(
  { ignores: ['dist/', 'artifacts/', '.state/', 'node_modules/'] },
  {
    files: ['**/*.{js,cjs,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's runner awaits the promise test() returns; subtests (t.test) are still checked.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // tsc's noUnusedLocals already checks these; `_name` marks a field dropped on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // The tree writes `rows[i]!` on indexed reads; stripping ~370 of them is churn, not a fix.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // An async function without await is how a fake or an async iterator meets a promise interface.
      '@typescript-eslint/require-await': 'off',
      // PythonJsonFailure is a plain object on purpose: an Error's stack trace would cost more than the scan.
      '@typescript-eslint/only-throw-error': [
        'error',
        { allow: [{ from: 'file', name: 'PythonJsonFailure', path: 'gym/pythonJsonValue.ts' }] },
      ],
      // A query handler may read a `let` before the workflow assigns it: const would throw there.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read JSON back untyped to assert on it; zod guards the source's boundaries, not asserts.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code runs in the Temporal sandbox: no Node built-ins.',
          })),
          patterns: [
            {
              group: ['node:*'],
              message: 'Workflow code runs in the Temporal sandbox: no Node built-ins.',
            },
            {
              group: ['**/activities', '**/activities/**'],
              allowTypeImports: true,
              message: 'Workflows reach activities through proxyActivities: import their types only.',
            },
          ],
        },
      ],
    },
  },
);
