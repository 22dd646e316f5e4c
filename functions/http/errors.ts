import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from '../core/common/errors.js';
import { errorText, log } from '../core/common/logger.js';

/** Every error leaves as `{"error": {"code", "message"}}`; internals never reach the caller. */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof ApiError) {
    if (typeof err.details?.retry_after === 'number') c.header('retry-after', String(err.details.retry_after));
    return c.json({ error: { code: err.code, message: err.message, ...err.details } }, err.status as ContentfulStatusCode);
  }
  if (isClientAbort(err)) {
    // Its client went away (or was cut off: adapters/local/connection-guard.ts) before the body arrived: nothing of the service failed.
    log.info('request abandoned by its client', { request_id: c.get('requestId'), method: c.req.method, path: c.req.path });
    return c.json({ error: { code: 'request_aborted', message: 'the request body did not arrive' } }, 400);
  }
  log.error('unhandled error', { request_id: c.get('requestId'), workspace_id: c.get('workspace')?.id, method: c.req.method, path: c.req.path, error: errorText(err) });
  return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
}

/** Node's error for a request body whose connection closed before its end. */
function isClientAbort(err: unknown): boolean {
  return err instanceof Error && err.message === 'aborted' && (err as Error & { code?: string }).code === 'ECONNRESET';
}

export function notFoundResponse(c: Context): Response {
  return c.json({ error: { code: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` } }, 404);
}
