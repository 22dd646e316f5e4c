/** bin/build.js: bundles the service into dist/ (see there). */
export function buildService(): Promise<void>;
/** Builds unless dist/ was made from the inputs as they are now; answers whether it built. */
export function buildServiceIfStale(): Promise<boolean>;
/** The fingerprint (paths, sizes, modification times) of what a build reads. */
export function inputsFingerprint(): string;
/** The esbuild options the service is bundled with (add `entryPoints` and `outdir`). */
export const SERVICE_BUNDLE: import('esbuild').BuildOptions & { external: string[] };
/** Copies the files the runtime reads next to its own module (shims, client libraries) beside a bundle in `outdir`. */
export function copyRuntimeAssets(outdir: string): void;
