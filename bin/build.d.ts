/** bin/build.js: bundles the service into dist/ (see there). */
export function buildService(): Promise<void>;
/** Builds unless dist/ was made from the inputs as they are now; answers whether it built. */
export function buildServiceIfStale(): Promise<boolean>;
/** The fingerprint (paths, sizes, modification times) of what a build reads. */
export function inputsFingerprint(): string;
