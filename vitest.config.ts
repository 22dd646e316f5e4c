import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Eight projects. `unit`: the fast tier, `npm run test:unit` (below). `node`: the runtime and
 * client-library tests (real child processes, a loopback server), the contract suites against SQLite, files and emulators, aws
 * (adapters against emulators) and cdk tests. The http-tier tests run twice, unchanged: against
 * the local shell (`bin/svc.js serve`) and against the AWS shell on this machine
 * (test/aws/aws-shell-server.ts); test/http/harness.ts picks the shell from SVC_TEST_SHELL.
 * `browser`: pages in headless Debian Chromium (test/browser/browser.ts). `cli`: the svc command
 * run as a child process against the real local server; `cli-aws`: the Windmill-folder and flow
 * settings CLI tests against the AWS shell; `docs`: the README's and docs/' shell examples
 * (test/docs). No file runs in two of `unit`, `node`, `browser`, `docs` and `cli`.
 */

/**
 * The unit tier: pure unit tests, the core and the HTTP app in-process against the in-memory shell
 * (test/unit/in-process), and the contract suites run against the in-memory adapters. No server,
 * no emulator, no child process: test/unit/runtime (real sandboxed runners) and test/unit/clients
 * (the client libraries against a loopback server, the Python one in python3) run in `node`.
 */
/**
 * The projects that run the AWS shell or its adapters on emulators share one DynamoDB Local and one
 * moto server per run (test/aws/shared-emulators.ts), each started when a test first asks for it;
 * each file keeps its own table, queue, bucket and key. (A project's globalSetup is added to the
 * root's, which builds the service.)
 */
const SHARED_AWS_EMULATORS = ['test/aws/shared-emulators.ts'];

const UNIT = {
  include: ['test/unit/**/*.test.ts', 'test/contract/memory-*.test.ts', 'test/contract/in-process-job-signals.test.ts'],
  exclude: ['test/unit/runtime/**', 'test/unit/clients/**'],
};

export default defineConfig({
  test: {
    // The spawned-server tiers run the compiled service: build it from the current sources first.
    // First in the list, so the run's temporary folder is removed last (test/run-tmpdir.ts).
    globalSetup: ['test/run-tmpdir.ts', 'test/build-service.ts'],
    // A limit for a test that hangs, not a speed check (that is `npm run bench`): the same test
    // takes twice as long on one two-core CI machine as on another, and in a 30-minute run several
    // took half of the former 30 s (a hundred logins on the AWS shell took 28 s).
    testTimeout: 90_000,
    hookTimeout: 60_000,
    // expect.poll waits for something that will happen: on a loaded two-core machine a cold
    // sandbox or a server's next write can take longer than the default second (CI failed on it).
    expect: { poll: { timeout: 15_000 } },
    // Two cores: running the server-backed files in parallel mostly adds contention.
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      // Not isolated: most files import the whole app, and sharing one module graph per worker
      // saves importing it again for each (about 19 s -> 6 s). Each file builds its own service.
      { extends: true, test: { name: 'unit', include: UNIT.include, exclude: [...configDefaults.exclude, ...UNIT.exclude], isolate: false } },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/unit/runtime/**/*.test.ts', 'test/unit/clients/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/aws/**/*.test.ts', 'test/cdk/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT.include.filter((glob) => glob.startsWith('test/contract/'))],
          globalSetup: SHARED_AWS_EMULATORS,
        },
      },
      { extends: true, test: { name: 'http-local', include: ['test/http/**/*.test.ts'], env: { SVC_TEST_SHELL: 'local' } } },
      // The first server of the run waits for the shared DynamoDB Local (a JVM) to start.
      {
        extends: true,
        test: { name: 'http-aws', include: ['test/http/**/*.test.ts'], env: { SVC_TEST_SHELL: 'aws' }, hookTimeout: 120_000, globalSetup: SHARED_AWS_EMULATORS },
      },
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'] } },
      // The README's and docs/' shell examples, run as written against a fresh local service per page.
      { extends: true, test: { name: 'docs', include: ['test/docs/**/*.test.ts'], env: { SVC_TEST_SHELL: 'local' }, maxConcurrency: 3 } },
      // The svc CLI as a child process against the real local server (test/cli/cli-harness.ts).
      { extends: true, test: { name: 'cli', include: ['test/cli/**/*.test.ts'], testTimeout: 120_000, env: { SVC_TEST_SHELL: 'local' } } },
      // A Windmill folder (its packages built by the dependency builder) and every flow setting pushed to the AWS shell too.
      {
        extends: true,
        test: {
          name: 'cli-aws',
          include: ['test/cli/windmill-folder.test.ts', 'test/cli/sync-flow-settings.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          env: { SVC_TEST_SHELL: 'aws' },
          globalSetup: SHARED_AWS_EMULATORS,
        },
      },
    ],
  },
});
