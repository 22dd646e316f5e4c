#!/usr/bin/env node
/**
 * The svc command: `svc serve` (or bare `svc`) runs the local service; every other command is the
 * CLI (functions/cli/), which talks to a server over HTTP like any client.
 */

async function serve() {
  // Loaded only here: the sync commands need neither SQLite nor the worker pool.
  const { configFromEnv } = await import('../functions/adapters/local/config.js');
  const { startLocalService } = await import('../functions/shells/local.js');
  const { closeInheritedDescriptors } = await import('../functions/runtime/inherited-descriptors.js');
  // Before any job's process is spawned: each would inherit them (see there).
  closeInheritedDescriptors();
  const config = configFromEnv();
  const service = await startLocalService(config);
  // A token chosen with SVC_ADMIN_TOKEN is the operator's already: never printed, but the rest is said all the same.
  if (service.created) console.log(`created workspace "${config.defaultWorkspace}" and user "admin"`);
  if (service.newAdminToken) console.log(`admin token (shown once, keep it): ${service.newAdminToken}`);
  if (service.created) {
    const which = service.newAdminToken ? 'the admin token' : 'the admin token (your SVC_ADMIN_TOKEN)';
    console.log(`open the console: ${service.url}/login and sign in with ${which} ("Sign in with an API token")`);
  }
  console.log(`svc listening on ${service.url} (data in ${config.dataDir})`);
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    service.close().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(`svc: shutdown failed: ${e instanceof Error ? e.message : String(e)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

const argv = process.argv.slice(2);
// Bare `svc` and `svc serve` run the service without loading the CLI (its commands and their
// packages are no part of serving); every other command line goes to the CLI.
if (argv.length === 0 || (argv.length === 1 && argv[0] === 'serve')) {
  serve().catch((e) => {
    console.error(`svc: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
} else {
  const [{ askOnStdin }, { main }, { terminalGuard }] = await Promise.all([import('../functions/cli/ask.js'), import('../functions/cli/main.js'), import('../functions/cli/io.js')]);
  // `svc ... | head` closes the pipe early: that ends the command quietly, not with a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  const io = {
    out: (t: string) => process.stdout.write(t + '\n'),
    err: (t: string) => process.stderr.write(t + '\n'),
    stream: (t: string) => process.stderr.write(t),
    ask: (q: string, opts?: { secret?: boolean }) => askOnStdin(q, (t) => process.stderr.write(t), opts),
    env: process.env,
    cwd: process.cwd(),
    isTty: process.stdout.isTTY === true,
  };
  // What the server sends is printed without the escape sequences a terminal would obey (io.ts).
  main(argv, terminalGuard(io, io.isTty), { serve }).then(
    (code) => {
      // `svc serve` answers once it listens, and keeps running until a signal ends it.
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(`svc: ${e instanceof Error ? e.message : String(e)}`);
      process.exitCode = 1;
    },
  );
}
