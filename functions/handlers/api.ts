import { Hono } from 'hono';
import { streamHandle } from 'hono/aws-lambda';
import { bootstrapInstance } from '../core/bootstrap.js';
import { createApp } from '../http/app.js';
import { errorResponse } from '../http/errors.js';
import { VERSION } from '../version.js';
import { requireAdminToken } from '../adapters/aws/aws-config.js';
import { awsShell, once } from './aws-deps.js';

/**
 * The api Lambda: API Gateway (REST, response streaming) -> the same Hono app the local server
 * runs. Streaming lets SSE events out as they happen and sync waits run past API Gateway's 29 s.
 * Jobs are not run here: they go to SQS and the worker Lambda.
 */
const app = once(async () => {
  const { deps, config, secrets } = await awsShell();
  // Idempotent: the first environment creates the admin and workspace, later ones re-register the token.
  await bootstrapInstance(deps.store, deps.clock, { adminToken: requireAdminToken(secrets), defaultWorkspaceId: config.defaultWorkspace, signingKey: deps.config.signingKey });
  return createApp(deps, { maxBodyBytes: config.maxBodyBytes, version: VERSION, sseKeepAliveMs: config.sseKeepAliveMs, goTarget: deps.compiler?.prebuiltTarget });
});

// streamHandle wants an app when the module loads; the real one needs secrets and the table first.
const entry = new Hono();
entry.onError((err, c) => errorResponse(c, err));
entry.all('*', async (c) => (await app()).fetch(c.req.raw, c.env));

export const handler = streamHandle(entry);
