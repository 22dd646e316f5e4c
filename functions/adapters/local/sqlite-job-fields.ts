import type Database from 'better-sqlite3';
import type { JobQuery } from '../../ports.js';

/**
 * The index of jobs' top-level argument and result values (table job_fields, migration `argsidx`),
 * so that a run list filter on a rare value is an index lookup instead of a scan of the history.
 *
 * Bounded per job: only top-level keys of 1 to MAX_KEY_BYTES bytes whose value is a scalar (a
 * string of at most MAX_TEXT_BYTES bytes, a number, true, false or null), and only when a job has at
 * most MAX_FIELDS of them; a job with more gets one overflow row (key '') instead, which every
 * lookup also reads, so no job is ever missed. Triggers on jobs keep the rows in step with every
 * insert, update and delete, in the writing statement's own transaction: a scrubbed job (args and
 * result set to NULL) loses its rows. The lookup only narrows: the full subset is still checked on
 * the job row (sqlite-job-query.ts), so nested filters and the rest of a pattern stay exact.
 *
 * These constants are part of the migration's SQL: changing them needs a new migration that
 * rebuilds the table, never an edit of the old one.
 */
export const MAX_FIELDS = 32;
export const MAX_KEY_BYTES = 64;
export const MAX_TEXT_BYTES = 256;

/** A value of job_fields encodes its JSON type: strings quoted, true/false/null as words, numbers as numbers. */
function encodedValue(type: string, value: string) {
  return `CASE ${type} WHEN 'text' THEN json_quote(${value}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE ${value} END`;
}

/** The conditions on a json_each row `e` for it to be indexed. */
function indexable(e: string) {
  return `${e}.type IN ('text', 'integer', 'real', 'true', 'false', 'null')
      AND length(CAST(${e}.key AS BLOB)) BETWEEN 1 AND ${MAX_KEY_BYTES}
      AND (${e}.type <> 'text' OR length(CAST(${e}.value AS BLOB)) <= ${MAX_TEXT_BYTES})`;
}

/**
 * json_each over a document's top level when it is an object, over nothing otherwise; a row that
 * is not valid JSON (none is written so) is left out rather than failing the write or the backfill.
 */
function topLevel(doc: string, e: string) {
  return `json_each(CASE WHEN json_valid(${doc}) THEN CASE WHEN json_type(${doc}) = 'object' THEN ${doc} END END) ${e}`;
}

/**
 * INSERT writing one field's rows for jobs: `job` is NEW in a trigger, or `j` over the jobs table
 * in the backfill (json_each joined, since SQLite has no correlated subquery in FROM).
 */
function indexField(job: string, field: 'args' | 'result') {
  const doc = `${job}.${field}`;
  const jobs = job === 'NEW' ? '' : `jobs ${job}, `;
  const count = `(SELECT count(*) FROM ${topLevel(doc, 'c')} WHERE ${indexable('c')})`;
  return `INSERT OR IGNORE INTO job_fields (job_id, field, key, value, workspace_id, created_at)
    SELECT ${job}.id, '${field}', e.key, ${encodedValue('e.type', 'e.value')}, ${job}.workspace_id, ${job}.created_at
      FROM ${jobs}${topLevel(doc, 'e')} WHERE ${indexable('e')} AND ${count} <= ${MAX_FIELDS}
    UNION ALL
    SELECT ${job}.id, '${field}', '', NULL, ${job}.workspace_id, ${job}.created_at ${jobs ? `FROM jobs ${job}` : ''} WHERE ${count} > ${MAX_FIELDS}`;
}

/** The SQL writing every job's job_fields rows from the jobs table (jobs loaded without the store). */
export function jobFieldsBackfill(): string {
  return `${indexField('j', 'args')};
  ${indexField('j', 'result')};`;
}

/** The SQL of migration `argsidx`: the table, its lookup index, the triggers, and the backfill. */
export function jobFieldsMigration(): string {
  return `-- argsidx: the run list's args/result filters as index lookups (sqlite-job-fields.ts). The
  -- primary key serves the triggers' deletes; job_fields_lookup ends in the list order so a page
  -- of a rare value is read newest first and stops at its limit.
  CREATE TABLE job_fields (
    job_id TEXT NOT NULL,
    field TEXT NOT NULL,
    key TEXT NOT NULL,
    value,
    workspace_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (job_id, field, key)
  ) WITHOUT ROWID;
  ${jobFieldsBackfill()}
  CREATE INDEX job_fields_lookup ON job_fields(workspace_id, field, key, value, created_at, job_id);
  CREATE TRIGGER job_fields_insert AFTER INSERT ON jobs BEGIN
    ${indexField('NEW', 'args')};
    ${indexField('NEW', 'result')};
  END;
  CREATE TRIGGER job_fields_args AFTER UPDATE OF args, id, workspace_id, created_at ON jobs BEGIN
    DELETE FROM job_fields WHERE job_id = OLD.id AND field = 'args';
    ${indexField('NEW', 'args')};
  END;
  CREATE TRIGGER job_fields_result AFTER UPDATE OF result, id, workspace_id, created_at ON jobs BEGIN
    DELETE FROM job_fields WHERE job_id = OLD.id AND field = 'result';
    ${indexField('NEW', 'result')};
  END;
  CREATE TRIGGER job_fields_delete AFTER DELETE ON jobs BEGIN
    DELETE FROM job_fields WHERE job_id = OLD.id;
  END;`;
}

/**
 * The migration `jsfields`: a job's insert writes its job_fields rows itself (insertJobFields)
 * instead of the AFTER INSERT trigger, whose json_each passes over args and result cost more than
 * the rest of the insert; updates keep their triggers.
 */
export const DROP_INSERT_TRIGGER = `-- jsfields: a job's insert writes its job_fields rows itself (sqlite-job-fields.ts insertJobFields).
  DROP TRIGGER job_fields_insert;`;

/** One top-level entry of a document as json_each types it, or null when it is not indexed. */
function indexedEntry(key: string, value: unknown): { type: string; value: string | number | null } | null {
  const keyBytes = Buffer.byteLength(key);
  if (keyBytes < 1 || keyBytes > MAX_KEY_BYTES) return null;
  if (typeof value === 'string') return Buffer.byteLength(value) <= MAX_TEXT_BYTES ? { type: 'text', value } : null;
  // JSON has no NaN or Infinity: stored documents spell them null.
  if (typeof value === 'number') return Number.isFinite(value) ? { type: 'real', value } : { type: 'null', value: null };
  if (typeof value === 'boolean') return { type: String(value), value: null };
  if (value === null) return { type: 'null', value: null };
  return null;
}

const fieldInserts = new WeakMap<Database.Database, Database.Statement>();

function prepareFieldInsert(db: Database.Database): Database.Statement {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO job_fields (job_id, field, key, value, workspace_id, created_at)
     VALUES (@job_id, @field, @key, ${encodedValue('@type', '@value')}, @workspace_id, @created_at)`,
  );
  fieldInserts.set(db, insert);
  return insert;
}

/**
 * Writes a new job's job_fields rows for `field`, the rows the update triggers would compute for
 * the same document (the bounds and the value encoding are the same SQL): each indexed top-level
 * entry, or one overflow row when there are more than MAX_FIELDS. Inside the insert's transaction.
 */
export function insertJobFields(db: Database.Database, job: { id: string; workspace_id: string; created_at: string }, field: 'args' | 'result', doc: unknown): void {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return;
  const rows = Object.entries(doc).flatMap(([key, value]) => {
    const entry = indexedEntry(key, value);
    return entry ? [{ key, ...entry }] : [];
  });
  const insert = fieldInserts.get(db) ?? prepareFieldInsert(db);
  if (rows.length > MAX_FIELDS) insert.run(fieldRow(job, field, { key: '', type: 'overflow', value: null }));
  else for (const row of rows) insert.run(fieldRow(job, field, row));
}

/**
 * The statement's parameters as one literal, not `{ ...base, ...row }`: on Node 20's V8, an object
 * spread followed by keys the spread object lacks keeps what was allocated around it alive through
 * young-generation collections, to be promoted to the old generation and collected only by a full
 * one (a loop of job inserts: ~0.6 MB promoted per scavenge with the spread, none without).
 */
function fieldRow(job: { id: string; workspace_id: string; created_at: string }, field: 'args' | 'result', row: { key: string; type: string; value: string | number | null }) {
  return { job_id: job.id, field, workspace_id: job.workspace_id, created_at: job.created_at, key: row.key, type: row.type, value: row.value };
}

/** A filter value matches fewer indexed jobs than this: the list reads it through job_fields. */
export const RARE_VALUE_ROWS = 5000;

/** One scalar of an args or result filter, as job_fields stores it. */
export interface FieldLookup {
  field: 'args' | 'result';
  key: string;
  /** A string is compared after json_quote in SQL, so both sides are quoted by the same function. */
  value: string | number;
  quote: boolean;
}

/** The filter's entries that job_fields can answer: the same bounds as the triggers'. */
export function fieldLookups(q: JobQuery): FieldLookup[] {
  const out: FieldLookup[] = [];
  for (const field of ['args', 'result'] as const) {
    for (const [key, value] of Object.entries(q[field] ?? {})) {
      const keyBytes = Buffer.byteLength(key);
      if (keyBytes < 1 || keyBytes > MAX_KEY_BYTES) continue;
      if (typeof value === 'string' && Buffer.byteLength(value) <= MAX_TEXT_BYTES) out.push({ field, key, value, quote: true });
      else if (typeof value === 'number' && Number.isFinite(value)) out.push({ field, key, value, quote: false });
      else if (typeof value === 'boolean' || value === null) out.push({ field, key, value: String(value), quote: false });
    }
  }
  return out;
}

/** The job_fields rows of one lookup and of overflowing jobs, in list order, for a page. */
export function lookupSql(prefix: string, l: FieldLookup): { where: string; params: Record<string, unknown> } {
  const value = l.quote ? `json_quote(@${prefix}_value)` : `@${prefix}_value`;
  return {
    where: `f.workspace_id = @workspace_id AND f.field = @${prefix}_field AND f.key = @${prefix}_key AND f.value = ${value}`,
    params: { [`${prefix}_field`]: l.field, [`${prefix}_key`]: l.key, [`${prefix}_value`]: l.value },
  };
}

/**
 * The lookup to drive a query from, or null to read it by the jobs indexes: the one matching
 * fewest jobs (counted up to RARE_VALUE_ROWS through the index), taken when it is rare or when
 * no other indexed filter narrows the query (then every job it reads matches that value at least).
 */
export function chooseLookup(db: Database.Database, q: JobQuery): FieldLookup | null {
  const lookups = fieldLookups(q);
  if (!lookups.length) return null;
  let best: { lookup: FieldLookup; n: number } | null = null;
  for (const lookup of lookups) {
    const { where, params } = lookupSql('l', lookup);
    const count = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM job_fields f WHERE ${where} LIMIT ${RARE_VALUE_ROWS})`);
    const { n } = count.get({ workspace_id: q.workspace_id, ...params }) as { n: number };
    if (!best || n < best.n) best = { lookup, n };
  }
  if (!best) return null;
  // Jobs whose fields overflowed the index are read by every lookup of their field.
  const overflow = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM job_fields f WHERE f.workspace_id = ? AND f.field = ? AND f.key = '' LIMIT ${RARE_VALUE_ROWS})`);
  const n = best.n + (overflow.get(q.workspace_id, best.lookup.field) as { n: number }).n;
  const narrowed = Boolean(q.status || q.created_by || q.path_prefix || q.path !== undefined);
  return n < RARE_VALUE_ROWS || !narrowed ? best.lookup : null;
}
