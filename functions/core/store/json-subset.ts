import type { Job, JobPosition, JobQuery } from '../../ports.js';

/**
 * Whether `pattern` is a subset of `value`: every key of an object pattern is in the value with a
 * matching value, recursively; anything else (arrays, strings, numbers, null) must be equal. The
 * run list's `args` and `result` filters, the same in every store.
 */
export function jsonSubset(value: unknown, pattern: unknown): boolean {
  if (isPlainObject(pattern)) {
    if (!isPlainObject(value)) return false;
    return Object.entries(pattern).every(([key, want]) => Object.hasOwn(value, key) && jsonSubset(value[key], want));
  }
  if (Array.isArray(pattern)) {
    return Array.isArray(value) && value.length === pattern.length && pattern.every((want, i) => jsonEqual(value[i], want));
  }
  return value === pattern;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (isPlainObject(a) && isPlainObject(b)) return Object.keys(a).length === Object.keys(b).length && jsonSubset(a, b);
  return jsonSubset(a, b);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Newest first: created_at descending, then id descending. Negative when `a` comes first. */
export function compareJobPositions(a: JobPosition, b: JobPosition): number {
  if (a.created_at !== b.created_at) return a.created_at > b.created_at ? -1 : 1;
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1;
}

/**
 * Whether a job matches a run-list query, every filter checked (the cursor too). The in-memory
 * store filters with it; the other stores use it for what their index cannot answer.
 */
export function matchesJobQuery(job: Job, q: JobQuery): boolean {
  if (job.workspace_id !== q.workspace_id) return false;
  if (q.path !== undefined && job.script_path !== q.path) return false;
  if (q.path_prefix && !job.script_path.startsWith(q.path_prefix)) return false;
  if (q.status && job.status !== q.status) return false;
  if (q.kind && job.kind !== q.kind) return false;
  if (q.trigger && job.trigger !== q.trigger) return false;
  if (q.created_by && job.created_by !== q.created_by) return false;
  if (q.created_after && job.created_at < q.created_after) return false;
  if (q.created_before && job.created_at >= q.created_before) return false;
  if (q.after && compareJobPositions(job, q.after) <= 0) return false;
  if (q.args && !jsonSubset(job.args, q.args)) return false;
  if (q.result && !jsonSubset(job.result, q.result)) return false;
  return true;
}
