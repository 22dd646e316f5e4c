/** bin/build.js: bundles the service into dist/ (see there). */
export function buildService(): Promise<void>;
/** Builds unless dist/ was made from the inputs as they are now; answers whether it built. */
export function buildServiceIfStale(): Promise<boolean>;
/** The fingerprint (paths, sizes, modification times) of what a build reads. */
export function inputsFingerprint(): string;
/** [checkout path, path beside the bundle]: files the runtime reads next to its own module. */
export const ASSETS: ReadonlyArray<readonly [string, string]>;
/** Packages never bundled (a compiled addon or binary beside their code). */
export const NATIVE_PACKAGES: string[];
/** The esbuild plugin that leaves packages our sources load on first use in node_modules. */
export const packagesOnFirstUseStayExternal: import('esbuild').Plugin;
