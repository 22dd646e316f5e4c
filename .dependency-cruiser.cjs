/**
 * dependency-cruiser: no import cycles anywhere in the project (`npm run cycles`). A cycle means two
 * modules each need the other, so one of them holds code that belongs elsewhere. A cycle closed only
 * by `import type` edges is not reported (no-circular below): the compiler erases them, and the
 * views and schemas name the core's types to check them. Adapters never reach back into a shell, and only
 * entry points (bin, the Lambda handlers, tests, benchmarks) start one; no file is exempt. The
 * core's import boundary is an ESLint rule (eslint.config.js), so editors show it where it is broken.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycle: move the shared code to the module both sides may import.',
      from: {},
      // A cycle made only of runtime imports breaks module initialisation order; an `import type`
      // edge is erased by the compiler (documents/entity-values.ts names the types its schemas
      // check), so a cycle through one is not reported.
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'adapters-not-shells',
      severity: 'error',
      comment: 'An adapter implements a port; the shells (functions/shells, handlers, http, cli, lib, bin) wire adapters, never the reverse.',
      from: { path: '^functions/adapters/' },
      to: { path: '^(functions/(shells|handlers|http|cli)|lib|bin)/' },
    },
    {
      name: 'shells-are-roots',
      severity: 'error',
      comment: 'functions/shells/ holds the composition roots (local, memory, AWS): entry points, tests and the Lambda handlers start one; nothing a shell wires imports one back.',
      from: { pathNot: '^(functions/(shells|handlers)|bin|test|bench)/' },
      to: { path: '^functions/shells/' },
    },
    {
      name: 'core-common-is-a-leaf',
      severity: 'error',
      comment: 'functions/core/common/ (errors, validation, logger, JSON limits, ...) is used by every concern of the core, so it imports none of them: only the ports and libraries.',
      from: { path: '^functions/core/common/' },
      to: { path: '^functions/(core/(?!common/)|adapters|shells|handlers|http|cli|runtime)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|dist|\\.svc)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
