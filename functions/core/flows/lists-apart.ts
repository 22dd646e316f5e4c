import { StoredDocumentError } from '../documents/parse.js';
import type { FlowRun, FlowRunDocument, FlowStep, ListsApart } from './flow-documents.js';

type ChildrenStep = Extract<FlowStep, { kind: 'children' }>;

/**
 * A loop's or branchall's step keeps the ids of its iterations (or branches) and whether each may
 * fail (`jobs`, `skip_failures`), and the run lists the ids again for the console (`child_jobs`).
 * All are made once, when the step starts, yet were written with every turn of the run, as was
 * which of them have ended: a loop over 1,000 records wrote about 88 KB per turn, and cost 1.7
 * times as much per iteration as a loop over 10. Lists of at least APART_CHARS characters of JSON
 * are kept apart like large results (results-apart.ts), each once; the stored step holds which
 * have ended only from the first still open (`ended_before`), and a flag all share once
 * (`skip_all`): a turn writes what the iterations running at the moment need, however long the
 * loop. A run read back has every list whole.
 */

/** Writes a value once when it is large, answering its `flow_result` key (results-apart.ts). */
type Put = (value: unknown) => Promise<string | undefined>;

/**
 * Decides which of `run`'s lists are kept apart. A list taken over from `previous` (the same
 * array: copyRun shares them, as no turn changes one) keeps what was decided for it, so each is
 * measured and written once.
 */
export async function putListsApart(run: FlowRun, previous: FlowRun | null, put: Put): Promise<void> {
  const before = previous?.lists_apart;
  const lists: ListsApart = {};
  if (run.step?.kind === 'children') {
    const last = previous?.step?.kind === 'children' ? previous.step : null;
    const jobs = last?.jobs === run.step.jobs ? before?.jobs : await put(run.step.jobs);
    if (jobs) lists.jobs = jobs;
  }
  // Only a children step's list (the same document as its `jobs`): a while loop's grows by an id
  // per iteration, and kept apart each turn it would be written whole again each time.
  const childJobs: Record<string, string> = {};
  for (const [module, ids] of Object.entries(run.child_jobs ?? {})) {
    const kept = previous?.child_jobs?.[module] === ids;
    const key = kept ? before?.child_jobs?.[module] : run.step?.kind === 'children' && run.step.jobs === ids ? await put(ids) : undefined;
    if (key) childJobs[module] = key;
  }
  if (Object.keys(childJobs).length > 0) lists.child_jobs = childJobs;
  if (Object.keys(lists).length > 0) run.lists_apart = lists;
  else delete run.lists_apart;
}

/** Each list of `run` kept apart, with its key (results-apart.ts apartValues). */
export function listsApart(run: Pick<FlowRun, 'step' | 'child_jobs' | 'lists_apart'>): [string, unknown][] {
  const apart = run.lists_apart;
  const out: [string, unknown][] = [];
  if (run.step?.kind === 'children' && apart?.jobs) out.push([apart.jobs, run.step.jobs]);
  for (const [module, key] of Object.entries(apart?.child_jobs ?? {})) out.push([key, run.child_jobs?.[module]]);
  return out;
}

/** The stored form of the run's step and `child_jobs`: lists kept apart left empty, `ended` from the first open one, one shared flag once (runDocument). */
export function withoutLists(run: Pick<FlowRun, 'step' | 'child_jobs' | 'lists_apart'>): Partial<Pick<FlowRunDocument, 'step' | 'child_jobs'>> {
  const apart = run.lists_apart;
  const out: Partial<Pick<FlowRunDocument, 'step' | 'child_jobs'>> = {};
  if (run.step?.kind === 'children') out.step = storedChildren(run.step, apart);
  if (apart?.child_jobs && run.child_jobs) {
    const kept = apart.child_jobs;
    out.child_jobs = Object.fromEntries(Object.entries(run.child_jobs).map(([module, ids]) => [module, Object.hasOwn(kept, module) ? [] : ids]));
  }
  return out;
}

function storedChildren(step: ChildrenStep, apart: ListsApart | undefined): ChildrenStep {
  const skips = step.skip_failures;
  const shared = skips.length === step.jobs.length && skips.length > 1 && skips.every((skip) => skip === skips[0]);
  const stored = { ...step, jobs: apart?.jobs ? [] : step.jobs, ...(shared ? { skip_failures: [], skip_all: skips[0] } : {}) };
  // Only what is true of every step: none after `started` has ended (none of them ran).
  if (step.ended.length !== step.jobs.length || step.ended.slice(step.started).some(Boolean)) return stored;
  let first = 0;
  while (first < step.started && step.ended[first]) first++;
  return { ...stored, ended: step.ended.slice(first, step.started), ended_before: first };
}

/** A stored run's step and `child_jobs` with their lists read back in (resolveRun); `value` reads a `flow_result`. */
export async function withLists<D extends Pick<FlowRunDocument, 'flow_job' | 'step' | 'child_jobs' | 'lists_apart'>>(doc: D, workspaceId: string, value: (key: string) => Promise<unknown>): Promise<D> {
  const apart = doc.lists_apart;
  const step = doc.step?.kind === 'children' ? doc.step : null;
  if (!apart && step?.ended_before === undefined && step?.skip_all === undefined) return doc;
  const what = `flow_run ${doc.flow_job} in ${workspaceId}`;
  const ids = async (key: string, field: string): Promise<string[]> => {
    const v = await value(key);
    if (!Array.isArray(v) || !v.every(isId)) throw new StoredDocumentError(what, `lists_apart.${field}`, `its list ${key} is not a list of job ids`);
    return v;
  };
  const out = { ...doc };
  if (step) {
    const jobs = apart?.jobs ? await ids(apart.jobs, 'jobs') : step.jobs;
    const { ended_before: first, skip_all: skip, ...rest } = step;
    const skips = skip === undefined ? step.skip_failures : Array<boolean>(jobs.length).fill(skip);
    const ended = first === undefined ? step.ended : [...Array<boolean>(first).fill(true), ...step.ended, ...Array<boolean>(Math.max(0, jobs.length - first - step.ended.length)).fill(false)];
    out.step = { ...rest, jobs, skip_failures: skips, ended };
  }
  if (apart?.child_jobs && doc.child_jobs) {
    const childJobs = { ...doc.child_jobs };
    for (const [module, key] of Object.entries(apart.child_jobs)) childJobs[module] = await ids(key, `child_jobs.${module}`);
    out.child_jobs = childJobs;
  }
  return out;
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
