/** bin/build.js: bundles the service into dist/ (see there). */
export function buildService(): Promise<void>;
