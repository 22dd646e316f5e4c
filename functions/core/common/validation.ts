import type { z } from 'zod';
import { badRequest } from './errors.js';

/** Validates a request body with its zod schema; a failure is a 400 naming the first bad field. */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // A field svc does not know is refused by its own path, never dropped (schemas are strict).
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, issue.keys[0]].join('.');
    throw badRequest('invalid_request', `${field}: svc does not know this field`, { field });
  }
  const field = issue.path.join('.') || 'body';
  throw badRequest('invalid_request', `${field}: ${issue.message}`, { field });
}

/**
 * A body an update merges over what it leaves out: a JSON object, else 400 as parseBody answers one.
 * Spread into an object, `null`, `[]`, `""`, `0` or `true` would add nothing and pass as an empty
 * update, and a string or an array would be taken apart into fields named `0`, `1`, ...
 */
export function objectBody(value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  const received = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  throw badRequest('invalid_request', `body: Invalid input: expected object, received ${received}`, { field: 'body' });
}
