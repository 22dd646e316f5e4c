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
  log.error('unhandled error', { request_id: c.get('requestId'), workspace_id: c.get('workspace')?.id, method: c.req.method, path: c.req.path, error: errorText(err) });
  return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
}

export function notFoundResponse(c: Context): Response {
  return c.json({ error: { code: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` } }, 404);
}
