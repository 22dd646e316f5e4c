import { EXIT, type ExitCode } from './errors.js';
import { connect, type ConnectionFlags } from './connection.js';
import type { JsonFlag } from './account-commands.js';
import type { Io } from './io.js';
import type { FlowListItem, ResourceListItem, ScriptListItem, VariableView } from '../core/views/item-views.js';
import type { ScheduleView } from '../core/views/trigger-views.js';
import type { JobWithFlowStatus } from '../core/views/job-view.js';

/**
 * `svc <kind> list`: what the console's lists show, as a table (or the server's JSON with
 * `--json-output`). Each reads the same list endpoint as the console, so it shows exactly what the
 * token may see.
 */

type Row = Record<string, unknown>;

/** A list endpoint and its columns, typed by the answer the API document describes (core/views), so a renamed field fails `npm run check`. */
interface Listing<T> {
  /** The endpoint under /api/w/<ws>. */
  path: string;
  columns: { title: string; value: (row: T) => unknown }[];
  /** What to say when the list is empty. */
  none: string;
}

const listing = <T>(l: Listing<T>): Listing<T> => l;
const at =
  <T>(key: keyof T & string) =>
  (row: T) =>
    row[key];

export const LISTINGS = {
  script: listing<ScriptListItem>({
    path: '/scripts/list',
    columns: [
      { title: 'PATH', value: at('path') },
      { title: 'LANGUAGE', value: at('language') },
      { title: 'HASH', value: at('hash') },
      { title: 'CREATED', value: at('created_at') },
      { title: 'SUMMARY', value: at('summary') },
    ],
    none: 'no scripts',
  }),
  flow: listing<FlowListItem>({
    path: '/flows/list',
    columns: [
      { title: 'PATH', value: at('path') },
      { title: 'VERSION', value: at('version') },
    ],
    none: 'no flows',
  }),
  schedule: listing<ScheduleView>({
    path: '/schedules/list',
    columns: [
      { title: 'PATH', value: at('path') },
      { title: 'SCHEDULE', value: (r) => `${String(r.schedule)} ${String(r.timezone ?? '')}`.trim() },
      { title: 'RUNS', value: (r) => `${r.is_flow ? 'flow' : 'script'} ${String(r.script_path)}` },
      { title: 'ENABLED', value: (r) => (r.enabled ? 'yes' : 'no') },
      { title: 'LAST JOB', value: (r) => r.last_job ?? '' },
    ],
    none: 'no schedules',
  }),
  resource: listing<ResourceListItem>({
    path: '/resources/list',
    columns: [
      { title: 'PATH', value: at('path') },
      { title: 'TYPE', value: at('resource_type') },
      { title: 'DESCRIPTION', value: at('description') },
    ],
    none: 'no resources',
  }),
  variable: listing<VariableView>({
    path: '/variables/list',
    // A secret's value is never listed by the server; a plain one is left out too, lists are for finding.
    columns: [
      { title: 'PATH', value: at('path') },
      { title: 'SECRET', value: (r) => (r.is_secret ? 'yes' : 'no') },
      { title: 'DESCRIPTION', value: at('description') },
    ],
    none: 'no variables',
  }),
  job: listing<JobWithFlowStatus>({
    path: '/jobs/list',
    columns: [
      { title: 'ID', value: at('id') },
      { title: 'STATUS', value: at('status') },
      { title: 'KIND', value: at('job_kind') },
      { title: 'PATH', value: (r) => r.script_path ?? '(inline)' },
      { title: 'BY', value: at('created_by') },
      { title: 'CREATED', value: at('created_at') },
    ],
    none: 'no runs',
  }),
};

export type ListKind = keyof typeof LISTINGS;

export interface JobListFlags {
  status?: string;
  path?: string;
  limit?: string;
  /** Steps of flows too (they are folded under their flow otherwise). */
  all?: boolean;
}

export async function listCommand(kind: ListKind, flags: ConnectionFlags & JsonFlag & JobListFlags, io: Io): Promise<ExitCode> {
  // Each listing reads its own answer's type; here the rows are only passed to its columns.
  const listing = LISTINGS[kind] as unknown as Listing<Row>;
  const remote = connect(flags, io);
  let rows = await remote.get<Row[]>(kind === 'job' ? `${listing.path}?${jobQuery(flags)}` : listing.path);
  // Runs a user started, not the steps and sub-flows a flow ran for them.
  if (kind === 'job' && !flags.all) rows = rows.filter((r) => r.parent_job === null || r.parent_job === undefined);
  if (flags.jsonOutput) {
    io.out(JSON.stringify(rows, null, 2));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    io.err(listing.none);
    return EXIT.ok;
  }
  io.out(table(listing.columns.map((c) => c.title), rows.map((r) => listing.columns.map((c) => cell(c.value(r))))));
  return EXIT.ok;
}

function jobQuery(flags: JobListFlags): string {
  const query = new URLSearchParams();
  if (flags.status) query.set('status', flags.status);
  if (flags.path) query.set('script_path_exact', flags.path);
  query.set('per_page', flags.limit ?? '50');
  return query.toString();
}

/** One line per value: a table cell never breaks its row, whatever a summary holds. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // eslint-disable-next-line no-control-regex -- control characters of a hostile name must not reach the terminal
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(titles: string[], rows: string[][]): string {
  const widths = titles.map((t, i) => Math.max(t.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(titles), ...rows.map(line)].join('\n');
}
