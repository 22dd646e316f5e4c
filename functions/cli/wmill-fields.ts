import { posix } from 'node:path';
import { readLocal } from './local-files.js';
import { ItemFileError, type SyncContext } from './items.js';

/**
 * Folders written by Windmill's CLI (`wmill sync pull`) push as they are (docs/windmill.md). Their
 * files carry fields svc has no place for (worker tags, debouncing, ...). Those fields are
 * known by name and kind: each one set to something other than its default is reported by path
 * and reason (`svc sync push --dry-run` lists them) and left out; a field nobody knows is still an
 * error naming the file, as svc.yaml's strict schema makes it.
 */

export type WindmillFileKind = 'script' | 'flow' | 'schedule' | 'resource' | 'variable' | 'folder' | 'resource_type' | 'app';

const NO_WORKERS = 'svc has no worker groups or tags';
const NO_CONCURRENCY = 'svc has no debouncing';
const IN_VALUE = "svc takes a flow's run settings in its value (docs/flows.md)";
const NO_CACHE = 'svc keys its result cache on every argument';
const NO_ERROR_HANDLER = 'svc has no workspace error handler';
const RUN_AS = 'svc runs a job as whoever triggered it';

const SCRIPT_FIELDS: Record<string, string> = {
  tag: NO_WORKERS,
  dedicated_worker: NO_WORKERS,
  envs: 'svc gives jobs no extra environment variables',
  ws_error_handler_muted: NO_ERROR_HANDLER,
  debounce_key: NO_CONCURRENCY,
  debounce_delay_s: NO_CONCURRENCY,
  debounce_args_to_accumulate: NO_CONCURRENCY,
  max_total_debouncing_time: NO_CONCURRENCY,
  max_total_debounces_amount: NO_CONCURRENCY,
  cache_ignore_s3_path: NO_CACHE,
  restart_unless_cancelled: 'svc does not restart finished jobs',
  visible_to_runner_only: 'svc shows a job to whoever may read its script',
  on_behalf_of_email: RUN_AS,
  no_main_func: 'svc runs a script through its main function',
  has_preprocessor: 'svc has no preprocessors',
  is_template: 'svc has no script templates',
  codebase: 'svc bundles codebases from svc.yaml codebases',
  assets: 'svc does not track assets',
};

const FLOW_FIELDS: Record<string, string> = {
  tag: NO_WORKERS,
  dedicated_worker: NO_WORKERS,
  ws_error_handler_muted: NO_ERROR_HANDLER,
  priority: IN_VALUE,
  concurrent_limit: IN_VALUE,
  concurrency_time_window_s: IN_VALUE,
  concurrency_key: IN_VALUE,
  visible_to_runner_only: 'svc shows a job to whoever may read its flow',
  on_behalf_of_email: RUN_AS,
  draft_only: 'svc has no drafts',
};

const SCHEDULE_FIELDS: Record<string, string> = {
  description: 'svc schedules have a summary only',
  on_success: 'svc has no success handlers',
  on_success_extra_args: 'svc has no success handlers',
  ws_error_handler_muted: NO_ERROR_HANDLER,
  retry: 'svc retries are set on flow steps',
  no_flow_overlap: 'svc schedules do not skip a tick while the previous run goes on',
  tag: NO_WORKERS,
  paused_until: 'svc pauses a schedule with enabled: false',
  cron_version: 'svc reads cron expressions one way',
  dynamic_skip: 'svc has no skip handlers for schedules',
  email: RUN_AS,
  permissioned_as: RUN_AS,
};

const OAUTH = 'svc has no OAuth accounts';
const FIELDS: Record<WindmillFileKind, Record<string, string>> = {
  script: SCRIPT_FIELDS,
  flow: FLOW_FIELDS,
  schedule: SCHEDULE_FIELDS,
  resource: { is_oauth: OAUTH, account: OAUTH },
  variable: { is_oauth: OAUTH, account: OAUTH, expires_at: OAUTH },
  folder: { display_name: 'svc names a folder by its path', default_permissioned_as: RUN_AS },
  resource_type: { format_extension: 'svc resource types have no file formats', is_fileset: 'svc resource types have no file sets' },
  app: { custom_path: 'svc serves an app at its own path', public: 'svc apps are for signed-in members' },
};

/** Whether a value is what Windmill writes when the field is not used. */
function isUnset(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Takes the Windmill-only fields out of a parsed file, reporting each one that is set (nothing in
 * `data` that is not Windmill's is touched). `kind: script` is what every script is in svc.
 */
export function takeWindmillFields(kind: WindmillFileKind, file: string, data: Record<string, unknown>, ctx: Pick<SyncContext, 'skip'>): void {
  const known = FIELDS[kind];
  for (const field of Object.keys(data)) {
    if (kind === 'script' && field === 'kind') {
      if (data.kind !== 'script' && !isUnset(data.kind)) ctx.skip?.(file, `kind: ${String(data.kind)}: svc runs every script as a plain script`);
      delete data.kind;
      continue;
    }
    if (!(field in known)) continue;
    if (!isUnset(data[field])) ctx.skip?.(file, `${field}: ${known[field]}; left out`);
    delete data[field];
  }
}

const INLINE = '!inline ';

/**
 * A `lock` of a `.script.yaml` as Windmill writes it: `'!inline <file>'` (a file of the folder,
 * named from the folder's root), the lock itself, or (older CLIs) its lines. Null: no lock.
 */
export function windmillLock(lock: unknown, metaFile: string, ctx: Pick<SyncContext, 'root' | 'localFiles'>): string | null {
  if (lock === undefined || lock === null || lock === '') return null;
  if (Array.isArray(lock) && lock.every((l) => typeof l === 'string')) return lock.join('\n');
  if (typeof lock !== 'string') throw new ItemFileError(metaFile, 'lock: expected a string');
  if (!lock.startsWith(INLINE)) return lock;
  const ref = lock.slice(INLINE.length).trim();
  return readInlineRef(ref, metaFile, ctx);
}

/** A referenced file, only if it is one of the folder's own files: never outside it, never `..`. */
export function readInlineRef(ref: string, from: string, ctx: Pick<SyncContext, 'root' | 'localFiles'>): string {
  const normalized = posix.normalize(ref);
  if (posix.isAbsolute(normalized) || normalized.startsWith('../') || normalized === '..' || !ctx.localFiles?.has(normalized)) {
    throw new ItemFileError(from, `lock: ${ref} is not a file of this folder`);
  }
  return readLocal(ctx.root, normalized);
}

/**
 * What of a Windmill app svc does not run: the files of its folder beside app.yaml (inline
 * scripts Windmill's CLI writes out) and its frontend scripts, which run in Windmill's browser
 * runtime. The app itself is pushed with its definition as it is.
 */
export function reportWindmillAppParts(appYaml: string, files: string[], value: unknown, ctx: Pick<SyncContext, 'skip'>): void {
  for (const file of files) if (file !== appYaml) ctx.skip?.(file, 'svc apps keep their definition in app.yaml only; this file is not pushed');
  const seen = new Set<unknown>();
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const inline = (node as { inlineScript?: { language?: unknown } }).inlineScript;
    if (inline && typeof inline === 'object' && inline.language === 'frontend') {
      ctx.skip?.(appYaml, `${at}.inlineScript: frontend script: svc does not run an app's browser-side scripts`);
    }
    for (const [key, child] of Object.entries(node)) walk(child, at ? `${at}.${key}` : key);
  };
  walk(value, 'value');
}
