import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { abortUpload, completeUpload, createUpload, putUploadPart } from '../core/uploads/upload-sessions.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { parseJsonBody } from './json-body.js';
import { requestText } from './request-text.js';

/** Large uploads (core/uploads/upload-sessions.ts): create, the local shell's part PUTs, complete, abort. */
export function uploadRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/job_helpers/uploads/create', async (c) => {
    const created = await createUpload(deps, c.get('rights'), c.get('workspace').object_storage_enabled, parseJsonBody(await requestText(c)));
    return c.json(created, 201);
  });

  // Signed like resume URLs, so no token: the URL is what a browser or curl PUTs the part to.
  r.put('/job_helpers/uploads/part', async (c) => {
    const body = c.req.raw.body ? (Readable.fromWeb(c.req.raw.body as never) as AsyncIterable<Uint8Array>) : emptyBody();
    const part = await putUploadPart(deps, c.get('workspace').id, c.req.query(), body);
    return c.json({ part_number: part.partNumber, etag: part.etag }, 200, { etag: part.etag });
  });

  r.post('/job_helpers/uploads/complete', async (c) => c.json(await completeUpload(deps, c.get('rights'), parseJsonBody(await requestText(c)))));

  r.post('/job_helpers/uploads/abort', async (c) => {
    await abortUpload(deps, c.get('rights'), parseJsonBody(await requestText(c)));
    return c.json({ aborted: true });
  });
  return r;
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}
