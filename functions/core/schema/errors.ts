import { ApiError } from '../common/errors.js';

/**
 * The script's source does not say what its inputs are (no `main`, a parameter we cannot read).
 * It is an `ApiError` so that creating such a script answers 400 with this message unless the
 * caller catches it, e.g. to fall back to a schema sent along with the script.
 */
export class SchemaInferenceError extends ApiError {
  constructor(message: string) {
    super(400, 'schema_inference_failed', message);
    this.name = 'SchemaInferenceError';
  }
}

/** The source defines no `main` at all: a script of shared code, which another may still import (docs/workspace-imports.md). */
export class NoMainError extends SchemaInferenceError {}
