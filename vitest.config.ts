import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Five projects. `node`: unit, contract, aws (adapters against emulators) and cdk tests. The
 * http-tier tests run twice, unchanged: against the local shell (`bin/svc.js serve`) and against
 * the AWS shell on this machine (test/aws/aws-shell-server.ts); test/http/harness.ts picks the
 * shell from SVC_TEST_SHELL. `browser`: pages in headless Debian Chromium (test/browser/browser.ts). `cli`: the svc command run as a child process
 * against the real local server.
 */
export default defineConfig({
  test: {
    // The spawned-server tiers run the compiled service: build it from the current sources first.
    globalSetup: ['test/build-service.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: running the server-backed files in parallel mostly adds contention.
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'node', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/http/**', 'test/browser/**', 'test/cli/**'] } },
      { extends: true, test: { name: 'http-local', include: ['test/http/**/*.test.ts'], env: { SVC_TEST_SHELL: 'local' } } },
      // Each file's server starts DynamoDB Local (a JVM) before it answers.
      { extends: true, test: { name: 'http-aws', include: ['test/http/**/*.test.ts'], env: { SVC_TEST_SHELL: 'aws' }, hookTimeout: 120_000 } },
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'] } },
      // The svc CLI as a child process against the real local server (test/cli/cli-harness.ts).
      { extends: true, test: { name: 'cli', include: ['test/cli/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
