import { badRequest } from './errors.js';
import type { RunOutcome } from '../../ports.js';

/**
 * JSON from a caller is parsed only after its nesting depth is known to be reasonable: a value
 * thousands of levels deep parses, but every recursive walk after it (validation, cloning,
 * serialising for the store or the job) overflows the stack, which would be a 500 for bad input.
 * Size is bounded earlier, by the request body limit.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonSyntaxError extends Error {}

/** Parses `text`, refusing (400 `json_too_deep`, naming the limit and `where`) nesting over the limit. */
export function parseJsonWithLimits(text: string, where: string): unknown {
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw badRequest('json_too_deep', `${where} nests deeper than the limit of ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JsonSyntaxError((e as Error).message);
  }
}

/** The deepest bracket nesting outside string literals; a linear scan without recursion. */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) max = depth;
      if (max > MAX_JSON_DEPTH) return max;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return max;
}

/**
 * Whether a parsed value nests deeper than `limit` (arrays and objects), found without recursion,
 * stopping at the first path that does: a value any deeper would overflow the stack of the first
 * recursive walk over it (storing, cloning, serialising).
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** A run's outcome as the service takes it: a result nested beyond MAX_JSON_DEPTH becomes the job's failure. */
export function withinDepthLimit(outcome: RunOutcome): RunOutcome {
  if (!outcome.ok || !nestsDeeperThan(outcome.result, MAX_JSON_DEPTH)) return outcome;
  return {
    ok: false,
    error: { name: 'ResultTooDeep', message: `the job's result nests deeper than the limit of ${MAX_JSON_DEPTH} levels of arrays and objects` },
    ...(outcome.shared ? { shared: outcome.shared } : {}),
  };
}
