import { buildServiceIfStale } from '../bin/build.js';

/**
 * vitest globalSetup: the http, browser and cli tiers start `bin/svc.js`, which runs the compiled
 * dist/. Building first means they always test the sources as they are now, however vitest was
 * started (`npm test`, or `npx vitest run --project http-local ...`); an unchanged checkout is not
 * built twice.
 */
export default async function setup(): Promise<void> {
  await buildServiceIfStale();
}
