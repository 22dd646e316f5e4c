// ESLint: type-aware promise checks everywhere, and the core's import boundary. Type information
// comes from tsconfig.json (`project`: a third less CPU than the project service on this code).
// Import cycles are checked by dependency-cruiser (.dependency-cruiser.cjs, `npm run cycles`).
import js from '@eslint/js';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** What functions/core may never import: it decides the rules, the shells wire them. */
const coreForbidden = [
  {
    group: ['**/adapters/**', '**/adapters', '**/in-process-job-signals*'],
    message: 'functions/core never imports an adapter: take a port from functions/ports.ts instead.',
  },
  {
    group: ['**/shells/**', '**/http/**', '**/handlers/**', '**/runtime/**', '**/lib/**', '**/cli/**'],
    message: 'functions/core never imports a shell or what shells wire (shells, http, handlers, runtime, lib, cli): they import the core.',
  },
  { group: ['@aws-sdk/*', 'aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'], message: 'No AWS SDK or CDK in the core.' },
  { group: ['better-sqlite3'], message: 'No SQLite in the core: use the Store port.' },
  { group: ['hono', 'hono/*', '@hono/*'], message: 'No HTTP framework in the core: functions/http adapts it.' },
];
const coreForbiddenModules = ['http', 'https', 'child_process', 'node:http', 'node:https', 'node:child_process'].map((name) => ({
  name,
  message: 'The core does no networking and starts no processes: the shells do.',
}));

export default defineConfig(
  { ignores: ['node_modules/**', 'cdk.out/**', 'dist/**', 'dist.*/**', '.svc/**', 'clients/python/**'] },
  // Some files silence rules of the wider recommended sets (no-explicit-any) for editors that run
  // them; this config does not enable those, which must not make such a comment an error.
  { linterOptions: { reportUnusedDisableDirectives: 'off' } },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Plain JavaScript: the shims, the TS client library and the build/launcher scripts.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
    // An empty catch is how the shims say "no one is left to tell"; each carries a comment why.
    rules: { 'no-empty': ['error', { allowEmptyCatch: true }] },
  },
  {
    files: ['functions/core/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: coreForbidden, paths: coreForbiddenModules }] },
  },
);
