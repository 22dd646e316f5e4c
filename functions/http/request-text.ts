import type { Context } from 'hono';
import { utf8Text } from '../core/common/utf8-text.js';

/** The request body as UTF-8 text; a body that is not UTF-8 is a 400 (core/common/utf8-text.ts). */
export async function requestText(c: Context): Promise<string> {
  return utf8Text(await c.req.arrayBuffer());
}
