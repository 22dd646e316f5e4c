/**
 * Packages loaded when first used rather than when the service starts (the TypeScript compiler,
 * the HTML sanitizer, YAML): most requests never need them, and loading them all was most of
 * what starting the service cost. A call site writes
 *
 *   const yaml = onFirstUse(() => (typeof require === 'function' ? require('yaml') : requireHere('yaml')) as typeof YAML);
 *
 * with the types from `import type YAML from 'yaml'`: the literal `require('yaml')` is what
 * esbuild bundles (the Lambdas) or leaves to node_modules (the local build, whose files have a
 * `require`); tsx and vitest run the sources as ES modules without one, hence `requireHere`.
 * `require` rather than `import` also spares the scan Node makes of a CommonJS file for its export
 * names when an ES module imports it.
 */
import { createRequire } from 'node:module';

export const requireHere = createRequire(import.meta.url);

/** A stand-in for the module `load` returns, loading it at the first property read or call. */
export function onFirstUse<T extends object>(load: () => T): T {
  let loaded: T | undefined;
  const target = () => (loaded ??= load());
  // A function as the proxy's target, so that a module which is itself a function can be called.
  return new Proxy(function stub() {} as unknown as T, {
    get: (_stub, key) => Reflect.get(target(), key) as unknown,
    has: (_stub, key) => Reflect.has(target(), key),
    apply: (_stub, thisArg, args: unknown[]) => Reflect.apply(target() as (...a: unknown[]) => unknown, thisArg, args),
  });
}
