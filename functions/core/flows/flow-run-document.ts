import { klona } from 'klona/json';
import { findFlowVersion } from './flows.js';
import { childFields, type FlowModule } from './definition.js';
import { StoredDocumentError } from '../documents/parse.js';
import { withApart, withoutApart } from './results-apart.js';
import type { FlowRun, FlowRunDocument, FlowVersion } from './flow-documents.js';
import type { Store } from '../../ports.js';

/** A run of `modules` that has not started: a flow's, or a branch's or iteration's (its `outerResults`: what the enclosing runs had). */
export function newRun(flowJob: string, version: number, path: string, modules: FlowModule[], flowInput: Record<string, unknown>, outerResults: Record<string, unknown>): FlowRun {
  return {
    flow_job: flowJob,
    version,
    path,
    modules,
    flow_input: flowInput,
    outer_results: outerResults,
    results: {},
    previous_result: null,
    resume: null,
    resumes: [],
    approvers: [],
    index: 0,
    step: null,
    status: 'running',
    events: {},
    step_modules: {},
  };
}

/**
 * A flow run is stored without its modules: they never change during a run and are already in the
 * flow version, which is never deleted, so the document names where they are (`modules_at`) and
 * every turn writes, compares and checks only what changed — for a 40-step flow about a quarter
 * of the bytes. Runs stored before `modules_at` existed carry their modules and are read as they are.
 */

/** Where a top-level run's modules are; such a run also takes the version's failure module. */
export const TOP_LEVEL_MODULES = 'value.modules';

/** What is stored of `run`. */
export function runDocument(run: FlowRun): FlowRunDocument {
  const { outer_results, ...inner } = run;
  const stored = { ...inner, flow_input: ownInput(run), ...withoutApart(run) };
  const doc: FlowRunDocument = run.outer_from === undefined ? { ...stored, outer_results } : stored;
  if (run.modules_at === undefined) return doc;
  const { modules: _modules, failure_module: _failure, ...rest } = doc;
  return rest;
}

/** Reads the run of an enclosing flow job (run-cache.ts), for the results a branch or iteration sees. */
export type EnclosingRun = (flowJobId: string) => Promise<{ value: FlowRun } | null>;

/**
 * The run a document describes: its modules read from its flow version when it names them, and
 * the results it sees from its enclosing run when it names that and `enclosing` reads it. They
 * only matter to the expressions of a run still going (the interpreter's reads); without
 * `enclosing`, or with that run gone (a finished flow's, removed by retention), it sees none.
 */
export async function resolveRun(store: Store, workspaceId: string, doc: FlowRunDocument, enclosing: EnclosingRun | null): Promise<FlowRun> {
  const outer = doc.outer_from === undefined ? (doc.outer_results ?? {}) : enclosing ? await outerResults(enclosing, doc.outer_from) : {};
  const whole = await withApart(store, workspaceId, doc);
  const input = whole.input_from && enclosing ? await inputFrom(enclosing, whole.input_from.job, whole.flow_input) : whole.flow_input;
  return withModules(store, workspaceId, { ...whole, flow_input: input, outer_results: outer });
}

async function outerResults(enclosing: EnclosingRun, flowJobId: string): Promise<Record<string, unknown>> {
  const run = (await enclosing(flowJobId))?.value;
  return run ? { ...run.outer_results, ...run.results } : {};
}

/** A branch's or iteration's whole input: its enclosing run's with its own keys over it (input_from). */
async function inputFrom(enclosing: EnclosingRun, flowJobId: string, own: Record<string, unknown>): Promise<Record<string, unknown>> {
  const run = (await enclosing(flowJobId))?.value;
  return run ? { ...run.flow_input, ...own } : own;
}

/**
 * How a branch or iteration that `enclosing` starts with `input` names it: by the enclosing run and
 * its own keys, when it is the enclosing run's input with some keys added or replaced (what every
 * branch and iteration gets); undefined otherwise, and it is stored whole.
 */
export function inputFromEnclosing(enclosing: Pick<FlowRun, 'flow_job' | 'flow_input'>, input: Record<string, unknown>): FlowRun['input_from'] {
  const base = enclosing.flow_input;
  if (Object.keys(base).some((key) => !Object.hasOwn(input, key))) return undefined;
  return { job: enclosing.flow_job, keys: Object.keys(input).filter((key) => !Object.hasOwn(base, key) || base[key] !== input[key]) };
}

/**
 * The input a run's document and job hold: only its own keys when the rest is its enclosing run's
 * (an iteration's job shows `{iter}` as its arguments).
 */
export function ownInput(run: Pick<FlowRun, 'flow_input' | 'input_from'>): Record<string, unknown> {
  const from = run.input_from;
  return from ? Object.fromEntries(from.keys.map((key) => [key, run.flow_input[key]])) : run.flow_input;
}

async function withModules(store: Store, workspaceId: string, doc: Omit<FlowRunDocument, 'outer_results'> & { outer_results: Record<string, unknown> }): Promise<FlowRun> {
  if (doc.modules) return { ...doc, modules: doc.modules };
  const what = `flow_run ${doc.flow_job} in ${workspaceId}`;
  if (doc.modules_at === undefined) throw new StoredDocumentError(what, 'modules', 'neither modules nor modules_at');
  const version = await findFlowVersion(store, workspaceId, doc.version);
  const modules = version ? listAt(version, doc.modules_at) : undefined;
  if (!modules) throw new StoredDocumentError(what, 'modules_at', `flow version ${doc.version} has no module list at ${doc.modules_at}`);
  const failure = doc.modules_at === TOP_LEVEL_MODULES ? version!.value.failure_module : undefined;
  return { ...doc, modules, ...(failure ? { failure_module: failure } : {}) };
}

/**
 * A copy of `run` to change: everything but its modules, which are shared (and frozen, see
 * run-cache.ts) since no turn changes them, and its results, which a turn adds to or replaces but
 * never changes inside.
 */
export function copyRun(run: FlowRun): FlowRun {
  // The enclosing run's results are not changed by any turn either, and may be large (a loop's
  // list), as a step's result or the flow's input may be; sharing them is also how a turn knows
  // which results are new (results-apart.ts). The rest is JSON, copied by klona's JSON copy at
  // about a tenth of structuredClone's cost: this runs at every turn of every flow.
  const { modules, failure_module, outer_results, results, previous_result, flow_input, step, child_jobs, ...rest } = run;
  const copy = klona(rest) as FlowRun;
  // Replaced whole by a turn that changes it, never changed inside (lists-apart.ts).
  if (child_jobs) copy.child_jobs = child_jobs;
  copy.step = copyStep(step);
  copy.results = { ...results };
  copy.previous_result = previous_result;
  copy.flow_input = flow_input;
  copy.modules = modules;
  copy.outer_results = outer_results;
  if (failure_module) copy.failure_module = failure_module;
  return copy;
}

/**
 * A while loop's results so far are shared too: a turn appends to a new list, never changes one;
 * and so are a children step's ids and flags, made once when it starts (only `ended` changes).
 */
function copyStep(step: FlowRun['step']): FlowRun['step'] {
  if (step?.kind === 'while') {
    const { results, ...rest } = step;
    return { ...klona(rest), results };
  }
  if (step?.kind === 'children') {
    const { jobs, skip_failures, ...rest } = step;
    return { ...klona(rest), jobs, skip_failures };
  }
  return klona(step);
}

/**
 * Where the run's `module` keeps `list` (a branch's or a loop's modules) in the version, for the
 * inline flow that runs it; undefined for a run that carries its modules.
 */
export function childModulesAt(run: FlowRun, module: FlowModule, list: FlowModule[]): string | undefined {
  if (run.modules_at === undefined) return undefined;
  const index = run.modules.indexOf(module);
  const field = module === run.failure_module ? 'value.failure_module' : index === -1 ? undefined : `${run.modules_at}.${index}`;
  return field === undefined ? undefined : childFields(module, field).find(([child]) => child === list)?.[1];
}

/** The module list at `at` (a path of own properties from the version), if there is one. */
function listAt(version: FlowVersion, at: string): FlowModule[] | undefined {
  let here: unknown = version;
  for (const part of at.split('.')) {
    if (typeof here !== 'object' || here === null || !Object.hasOwn(here, part)) return undefined;
    here = (here as Record<string, unknown>)[part];
  }
  return Array.isArray(here) ? (here as FlowModule[]) : undefined;
}
