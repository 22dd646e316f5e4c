import type Database from 'better-sqlite3';
import { jsonSubset } from '../../core/json-subset.js';
import type { JobQuery } from '../../ports.js';

/**
 * The run list's query on the jobs table (migration `console`): the equality filters and the
 * cursor use the jobs_list* indexes; the args and result subset filters are a SQL function over the
 * rows those leave, so every store matches JSON the same way (core/json-subset.ts).
 */
export function registerJobQueryFunctions(db: Database.Database): void {
  db.function('svc_json_subset', { deterministic: true }, (doc: unknown, pattern: unknown) => {
    if (typeof doc !== 'string' || typeof pattern !== 'string') return 0;
    return jsonSubset(JSON.parse(doc), JSON.parse(pattern)) ? 1 : 0;
  });
}

/** A path prefix matching more jobs than this is read in time order rather than by the path index. */
export const BROAD_PREFIX_ROWS = 2000;

/**
 * Whether to read a path-prefix query in time order: SQLite would read the prefix's whole range of
 * the path index and sort it, which is slow for a prefix matching much of the history (a folder)
 * and quick for a narrow one; counting up to BROAD_PREFIX_ROWS entries of the range tells which.
 */
export function broadPrefix(db: Database.Database, q: JobQuery): boolean {
  if (!q.path_prefix || q.status || q.created_by) return false;
  const row = db
    .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM jobs INDEXED BY jobs_list_path WHERE workspace_id = ? AND script_path >= ? AND script_path < ? LIMIT ${BROAD_PREFIX_ROWS})`)
    .get(q.workspace_id, q.path_prefix, `${q.path_prefix}\uffff`) as { n: number };
  return row.n >= BROAD_PREFIX_ROWS;
}

/** The SELECT and its named parameters for a query; statements are cached by their text. */
export function jobQuerySql(q: JobQuery, timeOrder = false): { sql: string; params: Record<string, unknown> } {
  const where = ['workspace_id = @workspace_id'];
  const params: Record<string, unknown> = { workspace_id: q.workspace_id, limit: q.limit };
  const add = (clause: string, values: Record<string, unknown>) => {
    where.push(clause);
    Object.assign(params, values);
  };
  if (q.status) add('status = @status', { status: q.status });
  if (q.kind) add('kind = @kind', { kind: q.kind });
  if (q.trigger) add('trigger_kind = @trigger_kind', { trigger_kind: q.trigger });
  if (q.created_by) add('created_by = @created_by', { created_by: q.created_by });
  // A range, not LIKE, so the path index serves it (LIKE is case-insensitive and would not).
  if (q.path_prefix) add('script_path >= @path_from AND script_path < @path_to', { path_from: q.path_prefix, path_to: `${q.path_prefix}\uffff` });
  if (q.created_after) add('created_at >= @created_after', { created_after: q.created_after });
  if (q.created_before) add('created_at < @created_before', { created_before: q.created_before });
  if (q.after) add('(created_at, id) < (@after_at, @after_id)', { after_at: q.after.created_at, after_id: q.after.id });
  if (q.args) jsonConditions('args', q.args, add);
  if (q.result) jsonConditions('result', q.result, add);
  const index = timeOrder ? ' INDEXED BY jobs_list' : '';
  return { sql: `SELECT * FROM jobs${index} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT @limit`, params };
}

const PLAIN_KEY = /^[A-Za-z0-9_]{1,100}$/;

/**
 * A subset match as SQL: a scalar under a plain top-level key is compared by SQLite's own JSON
 * functions (type and value, so "1" never matches 1), which is several times quicker than a
 * callback per row; anything else (nested objects, arrays, unusual keys) goes to svc_json_subset.
 */
function jsonConditions(column: 'args' | 'result', pattern: Record<string, unknown>, add: (clause: string, values: Record<string, unknown>) => void) {
  const rest: Record<string, unknown> = {};
  let n = 0;
  for (const [key, value] of Object.entries(pattern)) {
    const name = `${column}_${n++}`;
    const path = `$.${key}`;
    const type = `json_type(${column}, @${name}_path)`;
    const extract = `json_extract(${column}, @${name}_path)`;
    if (!PLAIN_KEY.test(key)) rest[key] = value;
    else if (typeof value === 'string') add(`${type} = 'text' AND ${extract} = @${name}`, { [`${name}_path`]: path, [name]: value });
    else if (typeof value === 'number') add(`${type} IN ('integer', 'real') AND ${extract} = @${name}`, { [`${name}_path`]: path, [name]: value });
    else if (typeof value === 'boolean') add(`${type} = '${value}'`, { [`${name}_path`]: path });
    else if (value === null) add(`${type} = 'null'`, { [`${name}_path`]: path });
    else rest[key] = value;
  }
  if (Object.keys(rest).length) add(`svc_json_subset(${column}, @${column}_rest)`, { [`${column}_rest`]: JSON.stringify(rest) });
}
