import type Database from 'better-sqlite3';
import { jsonSubset } from '../../core/store/json-subset.js';
import type { JobQuery } from '../../ports.js';
import { chooseLookup, lookupSql, type FieldLookup } from './sqlite-job-fields.js';

/**
 * The run list's query on the jobs table (migration `console`): the equality filters and the
 * cursor use the jobs_list* indexes; a rare top-level args or result value is looked up in
 * job_fields instead (migration `argsidx`, sqlite-job-fields.ts). Either way the args and result
 * subsets are checked on the job row, so every store matches JSON the same way (core/store/json-subset.ts).
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
  if (!q.path_prefix || q.path !== undefined || q.status || q.created_by) return false;
  const row = db
    .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM jobs INDEXED BY jobs_list_path WHERE workspace_id = ? AND script_path >= ? AND script_path < ? LIMIT ${BROAD_PREFIX_ROWS})`)
    .get(q.workspace_id, q.path_prefix, `${q.path_prefix}\uffff`) as { n: number };
  return row.n >= BROAD_PREFIX_ROWS;
}

/** How to read a query: by the jobs indexes (in time order for a broad prefix) or driven from job_fields. */
export type JobQueryPlan = { timeOrder?: boolean; lookup?: FieldLookup | null };

/** Picks the plan for a query (sqlite-job-fields.ts: chooseLookup; broadPrefix above). */
export function planJobQuery(db: Database.Database, q: JobQuery): JobQueryPlan {
  const lookup = chooseLookup(db, q);
  return lookup ? { lookup } : { timeOrder: broadPrefix(db, q) };
}

/** The SELECT and its named parameters for a query; statements are cached by their text. */
export function jobQuerySql(q: JobQuery, plan: JobQueryPlan = {}): { sql: string; params: Record<string, unknown> } {
  const where = ['jobs.workspace_id = @workspace_id'];
  const params: Record<string, unknown> = { workspace_id: q.workspace_id, limit: q.limit };
  const add = (clause: string, values: Record<string, unknown>) => {
    where.push(clause);
    Object.assign(params, values);
  };
  if (q.status) add('jobs.status = @status', { status: q.status });
  if (q.kind) add('jobs.kind = @kind', { kind: q.kind });
  if (q.trigger) add('jobs.trigger_kind = @trigger_kind', { trigger_kind: q.trigger });
  if (q.created_by) add('jobs.created_by = @created_by', { created_by: q.created_by });
  if (q.path !== undefined) add('jobs.script_path = @path', { path: q.path });
  // A range, not LIKE, so the path index serves it (LIKE is case-insensitive and would not).
  if (q.path_prefix) add('jobs.script_path >= @path_from AND jobs.script_path < @path_to', { path_from: q.path_prefix, path_to: `${q.path_prefix}\uffff` });
  if (q.created_after) add('jobs.created_at >= @created_after', { created_after: q.created_after });
  if (q.created_before) add('jobs.created_at < @created_before', { created_before: q.created_before });
  if (q.after) add('(jobs.created_at, jobs.id) < (@after_at, @after_id)', { after_at: q.after.created_at, after_id: q.after.id });
  if (q.args) jsonConditions('args', q.args, add);
  if (q.result) jsonConditions('result', q.result, add);
  if (plan.lookup) return fieldLookupSql(q, plan.lookup, where.join(' AND '), params);
  const index = plan.timeOrder ? ' INDEXED BY jobs_list' : '';
  return { sql: `SELECT * FROM jobs${index} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT @limit`, params };
}

/**
 * A query driven from job_fields: the jobs with the looked-up value and the jobs whose fields
 * overflowed the index (key ''), each read newest first through job_fields_lookup and merged, every
 * filter still checked on the job row. The time range and cursor also bound the index range.
 */
function fieldLookupSql(q: JobQuery, lookup: FieldLookup, jobWhere: string, params: Record<string, unknown>) {
  const { where, params: lookupParams } = lookupSql('l', lookup);
  const range: string[] = [];
  if (q.created_after) range.push('f.created_at >= @created_after');
  if (q.created_before) range.push('f.created_at < @created_before');
  if (q.after) range.push('(f.created_at, f.job_id) < (@after_at, @after_id)');
  const arm = (fields: string) =>
    `SELECT jobs.*, f.created_at AS list_at, f.job_id AS list_id FROM job_fields f JOIN jobs ON jobs.id = f.job_id
     WHERE ${[fields, ...range, jobWhere].join(' AND ')}`;
  const overflow = "f.workspace_id = @workspace_id AND f.field = @l_field AND f.key = '' AND f.value IS NULL";
  return { sql: `${arm(where)} UNION ALL ${arm(overflow)} ORDER BY list_at DESC, list_id DESC LIMIT @limit`, params: { ...params, ...lookupParams } };
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
