/**
 * dependency-cruiser: no import cycles anywhere in the project (`npm run cycles`). A cycle means two
 * modules each need the other, so one of them holds code that belongs elsewhere. A cycle closed by
 * `import type` edges counts too: the compiler erases them, but each module still depends on the
 * other's shapes, and a type hub that names the modules using it (the core's deps, the stored
 * documents' schemas) ties them all into one knot. Shared types live in a leaf both sides import
 * (e.g. core/identity/identity-documents.ts, core/uploads/upload-settings.ts). Adapters never reach
 * back into a shell, and only entry points (bin, the Lambda handlers, tests, benchmarks) start one;
 * no file is exempt. The core's import boundary is an ESLint rule (eslint.config.js), so editors
 * show it where it is broken.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycle (`import type` edges count): move the shared code or types to a module both sides may import.',
      from: {},
      // Every cycle, whether its edges are runtime or `import type` ones.
      to: { circular: true },
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
