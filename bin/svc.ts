#!/usr/bin/env node
/**
 * The svc command: `svc serve` runs the local service; `init`, `workspace ...` and `sync pull|push`
 * are the workspace sync CLI (functions/cli/), which talks to a server over HTTP like any client.
 */
import { askOnStdin } from '../functions/cli/sync-command.js';
import { main } from '../functions/cli/main.js';

async function serve() {
  // Loaded only here: the sync commands need neither SQLite nor the worker pool.
  const { configFromEnv } = await import('../functions/adapters/local/config.js');
  const { startLocalService } = await import('../functions/adapters/local/local-service.js');
  const config = configFromEnv();
  const service = await startLocalService(config);
  if (service.newAdminToken) {
    console.log(`created workspace "${config.defaultWorkspace}" and user "admin"`);
    console.log(`admin token (shown once, keep it): ${service.newAdminToken}`);
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

const [command] = process.argv.slice(2);
if (command === 'serve' || command === undefined) {
  serve().catch((e) => {
    console.error(`svc: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
} else {
  const io = {
    out: (t: string) => process.stdout.write(t + '\n'),
    err: (t: string) => process.stderr.write(t + '\n'),
    ask: (q: string) => askOnStdin(q, (t) => process.stderr.write(t)),
    env: process.env,
    cwd: process.cwd(),
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(`svc: ${e instanceof Error ? e.message : String(e)}`);
      process.exitCode = 1;
    },
  );
}
