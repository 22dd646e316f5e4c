import { badRequest } from './errors.js';

// One segment of a path or id: letters, digits, `_`, `-` and `.`, never `.`/`..` alone.
const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/;

/**
 * Script and flow paths are `u/<user>/<name>` or `f/<folder>/<name>`; the name may itself have
 * sub-folders (`f/ops/billing/refund`).
 */
export function assertItemPath(path: unknown, field = 'path'): asserts path is string {
  if (typeof path !== 'string' || path.length === 0) {
    throw badRequest('invalid_path', `${field} is required`, { field });
  }
  const parts = path.split('/');
  const ok =
    parts.length >= 3 &&
    (parts[0] === 'u' || parts[0] === 'f') &&
    parts.slice(1).every((p) => SEGMENT.test(p)) &&
    path.length <= 255;
  if (!ok) {
    throw badRequest(
      'invalid_path',
      `${field} must look like u/<user>/<name> or f/<folder>/<name>, got ${JSON.stringify(path)}`,
      { field },
    );
  }
}

export function assertWorkspaceId(id: unknown, field = 'id'): asserts id is string {
  if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,49}$/.test(id)) {
    throw badRequest(
      'invalid_workspace_id',
      `${field} must be 1-50 lowercase letters, digits, '-' or '_', starting with a letter or digit`,
      { field },
    );
  }
}
