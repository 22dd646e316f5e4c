#!/usr/bin/env node
// The `svc` command runs the compiled service (dist/svc.js, built from bin/svc.ts by bin/build.js
// on `npm ci` and on every `npm start`), so neither tsx nor TypeScript tooling runs it.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/svc.js', import.meta.url);
if (!existsSync(compiled)) {
  console.error('svc: dist/svc.js is missing: run `npm run build` in the svc checkout first');
  process.exit(1);
}
// Stack traces of the service name the TypeScript sources (dist/*.js.map).
process.setSourceMapsEnabled(true);
await import(compiled.href);
