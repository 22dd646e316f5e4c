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
  // JSON is UTF-8 (RFC 8259 8.1): a body declared in another charset would be read as something else.
  const charsets = charsetsOf(c.req.header('content-type') ?? '');
  if (charsets.length > 1 || charsets.some((charset) => charset !== 'utf-8' && charset !== 'utf8')) {
    throw new ApiError(415, 'unsupported_media_type', 'a JSON body is UTF-8: send Content-Type: application/json with no charset or charset=utf-8 (once)');
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

/** The values of a Content-Type's charset parameters, lower-case, unquoted (RFC 9110 8.3.1, 5.6.6). */
function charsetsOf(contentType: string): string[] {
  return contentType
    .split(';')
    .slice(1)
    .map((param) => param.trim())
    .filter((param) => /^charset\s*=/i.test(param))
    .map((param) => param.slice(param.indexOf('=') + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase());
}
