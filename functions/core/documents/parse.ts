import type { z } from 'zod';
import { ApiError } from '../common/errors.js';

/**
 * Stored data is parsed with its schema on every read and write, so a record that does not match
 * (an old shape, a hand edit, a bug in a writer) is one clear error naming the record and the
 * field, not a crash somewhere later. The message never carries the stored value (it may be secret).
 */
export class StoredDocumentError extends ApiError {
  constructor(readonly what: string, field: string, problem: string) {
    super(500, 'invalid_stored_document', `the stored ${what} does not match its schema: ${field}: ${problem}`, { document: what, field });
    this.name = 'StoredDocumentError';
  }
}

export function parseStored<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new StoredDocumentError(what, issue.path.map(String).join('.') || '(root)', issue.message);
}

/** A JSON column or attribute; text that is not JSON is the same clear error. */
export function parseStoredJson(text: string, what: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new StoredDocumentError(what, field, 'not valid JSON');
  }
}
