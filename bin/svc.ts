#!/usr/bin/env node
/**
 * The svc command. `svc serve` runs the local service; later commands (sync, workspace) join here.
 */
import { configFromEnv } from '../functions/adapters/local/config.js';
import { startLocalService } from '../functions/adapters/local/local-service.js';

async function serve() {
  const config = configFromEnv();
  const service = await startLocalService(config);
  if (service.newAdminToken) {
    console.log(`created workspace "${config.defaultWorkspace}" and user "admin"`);
    console.log(`admin token (shown once, keep it): ${service.newAdminToken}`);
  }
  console.log(`svc listening on ${service.url} (data in ${config.dataDir})`);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await service.close();
    process.exit(0);
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
  console.error(`svc: unknown command ${command}\nusage: svc serve`);
  process.exit(2);
}
