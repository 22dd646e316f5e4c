import type { Context } from 'hono';
import { ApiError } from '../core/common/errors.js';
import { JsonSyntaxError, parseJsonWithLimits } from '../core/common/json-limits.js';
import { requestText } from './request-text.js';

/** Management endpoints take JSON only; webhooks accept anything (see core/runs/payload.ts). */
export async function readJsonBody(c: Context): Promise<unknown> {
  const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!/^application\/([\w.-]+\+)?json$/.test(type)) {
    throw new ApiError(415, 'unsupported_media_type', 'this endpoint takes a JSON body: send Content-Type: application/json');
  }
  return parseJsonBody(await requestText(c));
}

/** JSON with the core's depth limit; anything unparseable is a 400 `invalid_json`. */
export function parseJsonBody(text: string): unknown {
  try {
    return parseJsonWithLimits(text, 'the request body');
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw new ApiError(400, 'invalid_json', 'the request body is not valid JSON');
  }
}
