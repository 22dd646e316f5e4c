import type { Context } from 'hono';
import { ApiError } from '../core/errors.js';

/** Management endpoints take JSON only; webhooks accept anything (see core/payload.ts). */
export async function readJsonBody(c: Context): Promise<unknown> {
  const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!/^application\/([\w.-]+\+)?json$/.test(type)) {
    throw new ApiError(415, 'unsupported_media_type', 'this endpoint takes a JSON body: send Content-Type: application/json');
  }
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_json', 'the request body is not valid JSON');
  }
}
