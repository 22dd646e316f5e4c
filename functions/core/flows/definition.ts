import { runSettingsFields, type RunSettingsInput } from '../jobs/run-settings.js';
import { z } from 'zod';
import { LANGUAGES } from '../../ports.js';
import { MAX_LOCK_CHARS } from '../dependencies/lock-header.js';

/**
 * The shape of a flow (spec 2.4, Windmill's OpenFlow): a list of modules run in order, each a
 * script (inline or by path), a sub-flow, or a branch/loop holding modules of its own.
 */

export const transform = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('static'), value: z.unknown() }),
  z.strictObject({ type: z.literal('javascript'), expr: z.string().min(1).max(10_000) }),
]);
export type Transform = z.infer<typeof transform>;

const inputTransforms = z.record(z.string(), transform).default({});

const resumeFormSchema = z
  .object({
    properties: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
    required: z.array(z.string()).default([]),
    order: z.array(z.string()).optional(),
  })
  .passthrough();

export const suspendSettings = z.strictObject({
  /** Approvals needed before the flow goes on. */
  required_events: z.number().int().min(1).max(100).default(1),
  /** Seconds after which a flow still missing approvals is cancelled. */
  timeout: z.number().positive().max(30 * 24 * 3600).optional(),
  /** At the timeout the flow resumes with this payload (and `timed_out: true`) instead of being cancelled. */
  default_on_timeout: z.record(z.string(), z.unknown()).optional(),
  hide_cancel: z.boolean().default(false),
  resume_form: z.strictObject({ schema: resumeFormSchema }).optional(),
  /** Only logged-in users may approve. */
  user_auth_required: z.boolean().default(false),
  /** The user who triggered the flow may not approve (spec 2.4 option b, 7.4). */
  self_approval_disabled: z.boolean().default(false),
  /** Windmill's name for the step's `continue_on_error` as it applies to the approval: a cancel or a timeout lets the flow go on. */
  continue_on_disapprove_timeout: z.boolean().optional(),
  /**
   * Only logged-in members of these groups may approve: a group name, a list of them, or a
   * transform (an expression over other nodes' output may return either).
   */
  user_groups_required: z
    .union([transform, z.string().min(1), z.array(z.string().min(1))])
    .transform((v): Transform => (typeof v === 'string' || Array.isArray(v) ? { type: 'static', value: v } : v))
    .optional(),
});
export type SuspendSettings = z.infer<typeof suspendSettings>;

/** Who may decide a ConsentGate: a username, `role:<admin|developer|operator>` or `group:<name>`. */
const approverRef = z.string().regex(/^(role:(admin|developer|operator)|group:[A-Za-z0-9_][A-Za-z0-9_-]{0,49}|[A-Za-z0-9_.@-]{1,100})$/, 'a username, role:<admin|developer|operator> or group:<name>');

/**
 * Where a gate's approvers are told (spec 1.4, 2.7). `sns` is checked per instance at create;
 * `chat` posts to a channel through the workspace's chat connection named by `resource`, Slack or
 * Teams (docs/chat-approvals.md).
 */
export const notifyChannel = z.discriminatedUnion('channel', [
  z.strictObject({ channel: z.literal('email') }),
  z.strictObject({ channel: z.literal('webhook'), url: z.string().url().max(2000), secret: z.string().min(1).max(500).optional() }),
  z.strictObject({ channel: z.literal('sns'), topic_arn: z.string().max(300).optional() }),
  z.strictObject({ channel: z.literal('chat'), resource: z.string().min(1).max(500), channel_id: z.string().min(1).max(200) }),
]);
export type NotifyChannel = z.infer<typeof notifyChannel>;

export const consentGateValue = z.strictObject({
  type: z.literal('consentgate'),
  approvers: z.array(approverRef).min(1).max(100),
  /** Seconds with no decision after which the gate rejects with reason `timeout`. */
  timeout: z.number().positive().max(30 * 24 * 3600).optional(),
  notify: z.array(notifyChannel).max(20).default([]),
  /** Shown to approvers: `{{ workflow.name }}`, `{{ run.triggered_by }}`, `{{ context.<key> }}`. */
  message: z.string().max(10_000).default(''),
  /** The user who triggered the run may decide too (by default they may not: spec 7.7). */
  self_approval: z.boolean().default(false),
});
export type ConsentGateValue = z.infer<typeof consentGateValue>;

/** Numbers of seconds are whole or fractional; a day at most between two attempts. */
const retrySeconds = z.number().min(0).max(86_400);

/**
 * Retries of a failed step (the modelled service's `retry`): first `constant.attempts` retries
 * `constant.seconds` apart, then `exponential.attempts` more, the n-th retry (counting the constant
 * ones) after `multiplier × seconds^n` seconds, plus up to `random_factor` percent.
 */
export const retrySettings = z.strictObject({
  constant: z.strictObject({ attempts: z.number().int().min(0).max(100), seconds: retrySeconds }).optional(),
  exponential: z
    .strictObject({
      attempts: z.number().int().min(0).max(100),
      multiplier: z.number().min(0).max(1000).default(1),
      seconds: z.number().min(0).max(3600),
      random_factor: z.number().int().min(0).max(100).optional(),
    })
    .optional(),
});
export type RetrySettings = z.infer<typeof retrySettings>;

/** `stop_after_if` / `stop_after_all_iters_if`: `expr` sees `result` (the step's) beside the flow's scope. */
export const stopAfterIf = z.strictObject({
  expr: z.string().min(1).max(10_000),
  /** The flow ends successfully and is shown as skipped rather than stopped. */
  skip_if_stopped: z.boolean().optional(),
  /** The flow ends as failed, with this message. */
  error_message: z.string().max(10_000).nullish(),
});
export type StopAfterIf = z.infer<typeof stopAfterIf>;

/** Seconds given as a number or as a transform (a static value or an expression). */
const secondsSetting = z.union([z.number().min(0).max(30 * 24 * 3600), transform]);
export type SecondsSetting = z.infer<typeof secondsSetting>;

export interface FlowModule {
  id: string;
  summary?: string;
  value: ModuleValue;
  continue_on_error?: boolean;
  retry?: RetrySettings;
  /** Seconds a script step may run before it is stopped and fails with a TimeoutError. */
  timeout?: SecondsSetting;
  /** Seconds the flow waits after this step, holding no worker. */
  sleep?: SecondsSetting;
  skip_if?: { expr: string };
  stop_after_if?: StopAfterIf;
  stop_after_all_iters_if?: StopAfterIf;
  is_trigger?: boolean;
  same_worker?: boolean;
  suspend?: SuspendSettings;
  /** Seconds a script step's result answers an identical step (same code, arguments and starter) without running it. */
  cache_ttl?: number | null;
  /** The step's job is taken before lower ones when every worker is busy (0 to 100). */
  priority?: number | null;
  /** The module's input schema, as editors send it; kept as given. */
  schema?: Record<string, unknown>;
}

export type ModuleValue =
  | { type: 'rawscript'; content: string; language: (typeof LANGUAGES)[number]; input_transforms: Record<string, Transform>; path?: string; lock?: string | null; is_trigger?: boolean }
  | { type: 'script'; path: string; hash?: string; input_transforms: Record<string, Transform>; is_trigger?: boolean }
  | { type: 'flow'; path: string; input_transforms: Record<string, Transform> }
  | { type: 'branchone'; branches: { summary?: string; expr: string; modules: FlowModule[] }[]; default: FlowModule[] }
  | { type: 'branchall'; branches: { summary?: string; skip_failure?: boolean; modules: FlowModule[] }[]; parallel: boolean }
  | { type: 'forloopflow'; iterator: Transform; modules: FlowModule[]; skip_failures: boolean; parallel: boolean; parallelism?: number }
  | { type: 'whileloopflow'; modules: FlowModule[]; skip_failures: boolean; parallel?: false }
  | { type: 'identity' }
  | ConsentGateValue;

const MODULE_ID = /^[a-z_][a-z0-9_]{0,63}$/;

export const flowModule: z.ZodType<FlowModule> = z.lazy(() =>
  z.strictObject({
    id: z
      .string()
      .regex(MODULE_ID, 'lowercase letters, digits and _, starting with a letter or _')
      // The engine keys its records by step id: one that Object.prototype holds would read its value.
      .refine((id) => !(id in Object.prototype), 'not a name every JavaScript object has (__proto__, constructor)'),
    summary: z.string().max(1000).optional(),
    value: moduleValue,
    continue_on_error: z.boolean().optional(),
    retry: retrySettings.optional(),
    timeout: z.union([z.number().positive().max(30 * 24 * 3600), transform]).optional(),
    sleep: secondsSetting.optional(),
    skip_if: z.strictObject({ expr: z.string().min(1).max(10_000) }).optional(),
    stop_after_if: stopAfterIf.optional(),
    stop_after_all_iters_if: stopAfterIf.optional(),
    is_trigger: z.boolean().optional(),
    same_worker: z.boolean().optional(),
    suspend: suspendSettings.optional(),
    cache_ttl: runSettingsFields.cache_ttl,
    priority: runSettingsFields.priority,
    schema: z.record(z.string(), z.unknown()).optional(),
  }),
) as z.ZodType<FlowModule>;

const modules = z.array(z.lazy(() => flowModule)).max(200);

const moduleValue = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('rawscript'),
    content: z.string().max(1_000_000),
    language: z.enum(LANGUAGES),
    input_transforms: inputTransforms,
    /** Presentation only (the modelled service's label of an inline script, and its dependency lock): kept as given. */
    path: z.string().max(1000).optional(),
    lock: z.string().max(MAX_LOCK_CHARS).nullish(),
    /** Where Windmill's editor writes a step's `is_trigger`: the same as on the step (`isTriggerStep`). */
    is_trigger: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('script'), path: z.string().min(1), hash: z.string().optional(), input_transforms: inputTransforms, is_trigger: z.boolean().optional() }),
  z.strictObject({ type: z.literal('flow'), path: z.string().min(1), input_transforms: inputTransforms }),
  z.strictObject({
    type: z.literal('branchone'),
    branches: z.array(z.strictObject({ summary: z.string().optional(), expr: z.string().min(1), modules })),
    default: modules.default([]),
  }),
  z.strictObject({
    type: z.literal('branchall'),
    branches: z.array(z.strictObject({ summary: z.string().optional(), skip_failure: z.boolean().optional(), modules })),
    parallel: z.boolean().default(true),
  }),
  z.strictObject({
    type: z.literal('forloopflow'),
    iterator: transform,
    modules,
    skip_failures: z.boolean().default(false),
    parallel: z.boolean().default(false),
    parallelism: z.number().int().min(1).max(100).optional(),
  }),
  z.strictObject({
    type: z.literal('whileloopflow'),
    modules,
    skip_failures: z.boolean().default(false),
    /** Iterations run one after the other: each decides whether there is another. */
    parallel: z.literal(false, 'a while loop runs its iterations one after the other').optional(),
  }),
  z.strictObject({ type: z.literal('identity') }),
  consentGateValue,
]);

/** The modelled service's sticky notes of the flow editor: presentation only, kept as given. */
const notes = z.array(z.record(z.string(), z.unknown())).max(500);

export const flowValue = z.strictObject({
  modules,
  notes: notes.optional(),
  /** Runs when the flow fails; its result is the failed flow's result. */
  failure_module: z.lazy(() => flowModule).optional(),
  /** The module at whose completion sync endpoints answer; the flow goes on asynchronously (spec 4.4). */
  early_return: z.string().optional(),
  /** Every step runs as if on one worker: they share a `./shared` folder (Windmill's same_worker). */
  same_worker: z.boolean().optional(),
  /** Result cache, concurrency limit and priority of the flow's runs (core/jobs/run-settings.ts). */
  ...runSettingsFields,
});
export type FlowValue = { modules: FlowModule[]; notes?: Record<string, unknown>[]; failure_module?: FlowModule; early_return?: string; same_worker?: boolean } & RunSettingsInput;

/** A trigger step: `is_trigger` on the step (svc's place) or on its script (where Windmill's editor writes it). */
export function isTriggerStep(module: FlowModule): boolean {
  const v = module.value;
  return module.is_trigger === true || ((v.type === 'rawscript' || v.type === 'script') && v.is_trigger === true);
}

/** Every module of the flow, nested ones included, in definition order. */
export function allModules(list: readonly FlowModule[]): FlowModule[] {
  return list.flatMap((m) => [m, ...allModules(childLists(m.value).flat())]);
}

export function childLists(v: ModuleValue): FlowModule[][] {
  switch (v.type) {
    case 'branchone':
      return [...v.branches.map((b) => b.modules), v.default];
    case 'branchall':
      return v.branches.map((b) => b.modules);
    case 'forloopflow':
    case 'whileloopflow':
      return [v.modules];
    default:
      return [];
  }
}

/** Every module of a flow version, its failure module too. */
export function flowModules(value: Pick<FlowValue, 'modules' | 'failure_module'>): FlowModule[] {
  return allModules(value.failure_module ? [...value.modules, value.failure_module] : value.modules);
}

export function findModule(list: readonly FlowModule[], id: string): FlowModule | undefined {
  return allModules(list).find((m) => m.id === id);
}

/**
 * Every module of a flow value with the field that holds it (`value.modules.1.value.branches.0.modules.2`,
 * `value.failure_module`), in definition order: how an error names the step it is about.
 */
export function moduleFields(value: Pick<FlowValue, 'modules' | 'failure_module'>): { module: FlowModule; field: string }[] {
  const visit = (list: readonly FlowModule[], at: string): { module: FlowModule; field: string }[] =>
    list.flatMap((m, i) => {
      const field = `${at}.${i}`;
      return [{ module: m, field }, ...childFields(m, field).flatMap(([child, where]) => visit(child, where))];
    });
  const top = visit(value.modules, 'value.modules');
  return value.failure_module ? [...top, { module: value.failure_module, field: 'value.failure_module' }, ...childFields(value.failure_module, 'value.failure_module').flatMap(([c, w]) => visit(c, w))] : top;
}

export function childFields(m: FlowModule, field: string): [FlowModule[], string][] {
  const v = m.value;
  switch (v.type) {
    case 'branchone':
      return [...v.branches.map((b, i): [FlowModule[], string] => [b.modules, `${field}.value.branches.${i}.modules`]), [v.default, `${field}.value.default`]];
    case 'branchall':
      return v.branches.map((b, i): [FlowModule[], string] => [b.modules, `${field}.value.branches.${i}.modules`]);
    case 'forloopflow':
    case 'whileloopflow':
      return [[v.modules, `${field}.value.modules`]];
    default:
      return [];
  }
}
