import { badRequest } from './errors.js';

/**
 * Fields Windmill writes that svc has no place for (worker tags, debouncing, ...), known by name
 * and by what they would do (docs/windmill.md). Windmill writes most of them at their defaults
 * whether used or not (`tag: null`, `is_template: false`, `envs: []`), so one left at its default
 * asks for nothing and goes; one set to something else asks for something svc does not do and is
 * reported: `svc sync push` lists it and leaves it out (functions/cli/wmill-fields.ts), the API
 * refuses the body with 400 naming it (withoutWindmillDefaults). A field nobody knows stays an
 * error either way.
 */

export type WindmillFileKind = 'script' | 'flow' | 'schedule' | 'resource' | 'variable' | 'folder' | 'resource_type' | 'app';
/** Request bodies of the API that no file holds: the editors' test runs (Windmill's Preview and FlowPreview). */
type WindmillBodyKind = WindmillFileKind | 'script_preview' | 'flow_preview';

const NO_WORKERS = 'svc has no worker groups or tags';
const NO_CONCURRENCY = 'svc has no debouncing';
const IN_VALUE = "svc takes a flow's run settings in its value (docs/flows.md)";
const NO_CACHE = 'svc keys its result cache on every argument';
const NO_ERROR_HANDLER = 'svc has no workspace error handler';
const RUN_AS = 'svc runs a job as whoever triggered it';
const OAUTH = 'svc has no OAuth accounts';

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

const NO_TEMP_SCRIPTS = 'svc runs what the body holds, not drafts of other scripts';

const WINDMILL_ONLY_FIELDS: Record<WindmillBodyKind, Record<string, string>> = {
  script: SCRIPT_FIELDS,
  flow: FLOW_FIELDS,
  script_preview: {
    tag: NO_WORKERS,
    dedicated_worker: NO_WORKERS,
    script_hash: 'svc test-runs the code in the body; a saved version runs at jobs/run/h/{hash}',
    flow_path: "svc test-runs a flow's inline step as code of its own",
    modules: 'svc scripts are one file; shared code is a script the script imports',
    temp_script_refs: NO_TEMP_SCRIPTS,
  },
  flow_preview: {
    tag: NO_WORKERS,
    restarted_from: 'svc test-runs a flow from its first step',
    temp_script_refs: NO_TEMP_SCRIPTS,
  },
  schedule: SCHEDULE_FIELDS,
  resource: { is_oauth: OAUTH, account: OAUTH },
  variable: { is_oauth: OAUTH, account: OAUTH, expires_at: OAUTH },
  folder: { display_name: 'svc names a folder by its path', default_permissioned_as: RUN_AS },
  resource_type: { format_extension: 'svc resource types have no file formats', is_fileset: 'svc resource types have no file sets' },
  app: { custom_path: 'svc serves an app at its own path', public: 'svc apps are for signed-in members' },
};

/** Windmill's fields of a flow step's inline script and script reference (its editor writes them at their defaults). */
const STEP_VALUE_FIELDS: Record<string, Record<string, string>> = {
  rawscript: {
    tag: NO_WORKERS,
    concurrent_limit: 'svc limits the concurrency of a flow, not of one inline step',
    concurrency_time_window_s: 'svc limits the concurrency of a flow, not of one inline step',
    custom_concurrency_key: 'svc limits the concurrency of a flow, not of one inline step',
    assets: 'svc does not track assets',
  },
  script: { tag_override: NO_WORKERS },
};

/** Whether a value is what Windmill writes when the field is not used. */
function isUnset(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** What a Windmill-only field that is set asks for: where it is, and why svc does not do it. */
export interface SetWindmillField {
  /** Dotted from the item's top (`tag`, `value.modules.0.value.tag`). */
  field: string;
  reason: string;
}

/**
 * Takes the Windmill-only fields out of `data` (in place), a flow's steps included, and answers
 * those that were set. Nothing else of `data` is touched. Windmill's `kind` of a script (`script`) or of a test run (`code`) is what every svc script is.
 */
export function takeWindmillOnlyFields(kind: WindmillBodyKind, data: Record<string, unknown>): SetWindmillField[] {
  const set: SetWindmillField[] = [];
  const plainKind = PLAIN_KIND[kind];
  if (plainKind && 'kind' in data) {
    if (data.kind !== plainKind && !isUnset(data.kind)) set.push({ field: 'kind', reason: `${String(data.kind)}: svc runs every script as a plain script` });
    delete data.kind;
  }
  takeFields(data, WINDMILL_ONLY_FIELDS[kind], '', set);
  if ((kind === 'flow' || kind === 'flow_preview') && isObject(data.value)) takeStepFields(data.value, 'value', set);
  return set;
}

/** Windmill's `kind` of a script (`script`) and of a test run (`code`): the one svc has. */
const PLAIN_KIND: Partial<Record<WindmillBodyKind, string>> = { script: 'script', script_preview: 'code' };

function takeFields(data: Record<string, unknown>, known: Record<string, string>, at: string, set: SetWindmillField[]): void {
  for (const field of Object.keys(data)) {
    if (!Object.hasOwn(known, field)) continue;
    if (!isUnset(data[field])) set.push({ field: at + field, reason: known[field] });
    delete data[field];
  }
}

/** Every step of a flow value, nested ones and the failure module included; anything malformed is left to the flow's own schema. */
function takeStepFields(value: Record<string, unknown>, at: string, set: SetWindmillField[]): void {
  const steps = (list: unknown, where: string) => {
    if (!Array.isArray(list)) return;
    list.forEach((m, i) => takeStep(m, `${where}.${i}`));
  };
  const takeStep = (m: unknown, where: string) => {
    if (!isObject(m) || !isObject(m.value)) return;
    const inner = m.value;
    const known = typeof inner.type === 'string' && Object.hasOwn(STEP_VALUE_FIELDS, inner.type) ? STEP_VALUE_FIELDS[inner.type] : undefined;
    if (known) takeFields(inner, known, `${where}.value.`, set);
    steps(inner.modules, `${where}.value.modules`);
    steps(inner.default, `${where}.value.default`);
    if (Array.isArray(inner.branches)) inner.branches.forEach((b, i) => isObject(b) && steps(b.modules, `${where}.value.branches.${i}.modules`));
  };
  steps(value.modules, `${at}.modules`);
  if (value.failure_module !== undefined) takeStep(value.failure_module, `${at}.failure_module`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A request body without the Windmill-only fields left at their defaults, so a body a Windmill
 * client or editor built is taken as it is; 400 naming the first one that is set. The caller's
 * object is not changed. Anything but an object is answered as it came, for its schema to refuse.
 */
export function withoutWindmillDefaults(kind: WindmillBodyKind, body: unknown): unknown {
  if (!isObject(body)) return body;
  const copy = structuredClone(body);
  const [first] = takeWindmillOnlyFields(kind, copy);
  if (first) throw badRequest('invalid_request', `${first.field}: ${first.reason}; leave it out or at its default`, { field: first.field });
  return copy;
}
