import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { JOB_KINDS, JOB_TRIGGERS, type JobKind, type JobTrigger, type JobPosition, type JobQuery } from '../../ports.js';

/**
 * The run list's filters as they travel in a URL (the console page's and the API's query string
 * are the same), validated here so a bad link is a 400 naming the field, never a store error.
 * Empty values mean "no filter": that is what an HTML form submits for a field left blank.
 */

export const RUN_STATUSES = ['queued', 'running', 'suspended', 'awaiting_approval', 'success', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const blankIsAbsent = (v: unknown) => (v === '' ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsAbsent, schema.optional());
const isoTime = z.string().max(40).refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date and time (ISO 8601)').transform((s) => new Date(s).toISOString());
const jsonObject = z.string().max(4000).transform((text, ctx) => {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: 'must be a JSON object, e.g. {"env":"prod"}' });
  return z.NEVER;
});

export const runFilterSchema = z.object({
  /** A path prefix: `f/ops/` lists every run of the folder ops, `f/ops/clean` also `f/ops/cleanup`. */
  path: optional(z.string().max(1000)),
  /** Exactly this path: `f/ops/clean` lists its runs only, never those of `f/ops/cleanup` (an item's own runs). */
  path_exact: optional(z.string().max(1000)),
  folder: optional(z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be a folder name')),
  status: optional(z.enum(RUN_STATUSES)),
  user: optional(z.string().max(255)),
  kind: optional(z.enum(JOB_KINDS as [JobKind, ...JobKind[]])),
  trigger: optional(z.enum(JOB_TRIGGERS as [JobTrigger, ...JobTrigger[]])),
  /** Started (created) at or after. */
  after: optional(isoTime),
  /** Created before. */
  before: optional(isoTime),
  args: optional(jsonObject),
  result: optional(jsonObject),
  /** `1`: only runs nothing else started (flow steps, branches, iterations and sub-flows are left out). */
  top_level: optional(z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true')),
  cursor: optional(z.string().max(400)),
  per_page: z.preprocess(blankIsAbsent, z.coerce.number().int().min(1).max(200).default(50)),
});

export type RunFilter = z.infer<typeof runFilterSchema>;

/** The store query for a filter, or null when its path and folder exclude each other (nothing matches). */
export function storeQuery(workspaceId: string, f: RunFilter): Omit<JobQuery, 'limit' | 'after'> | null {
  const folderPrefix = f.folder ? `f/${f.folder}/` : undefined;
  let prefix = f.path ?? folderPrefix;
  if (f.path && folderPrefix) {
    if (f.path.startsWith(folderPrefix)) prefix = f.path;
    else if (folderPrefix.startsWith(f.path)) prefix = folderPrefix;
    else return null;
  }
  if (f.path_exact !== undefined && prefix && !f.path_exact.startsWith(prefix)) return null;
  const waiting = f.status === 'suspended' || f.status === 'awaiting_approval';
  return {
    workspace_id: workspaceId,
    ...(prefix ? { path_prefix: prefix } : {}),
    ...(f.path_exact !== undefined ? { path: f.path_exact } : {}),
    // A flow waiting for approvals is stored as a running flow: its run tells which kind of wait.
    ...(f.status ? { status: waiting ? 'running' : f.status } : {}),
    ...(waiting ? { kind: 'flow' as const } : f.kind ? { kind: f.kind } : {}),
    ...(f.trigger ? { trigger: f.trigger } : {}),
    ...(f.user ? { created_by: f.user } : {}),
    ...(f.after ? { created_after: f.after } : {}),
    ...(f.before ? { created_before: f.before } : {}),
    ...(f.args ? { args: f.args } : {}),
    ...(f.result ? { result: f.result } : {}),
  };
}

/** Cursors are opaque to clients: a position in the list, base64url-encoded. */
export function encodeCursor(p: JobPosition): string {
  return Buffer.from(JSON.stringify([p.created_at, p.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): JobPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [created_at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof created_at === 'string' && typeof id === 'string') return { created_at, id };
  } catch {
    // reported below
  }
  throw badRequest('invalid_request', 'cursor: not a cursor this list returned', { field: 'cursor' });
}
