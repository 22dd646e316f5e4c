import { sha256Hex } from '../common/crypto.js';
import { StoredDocumentError } from '../documents/parse.js';
import { readEntity, tryCreateEntity } from '../store/entities.js';
import type { FlowRun, FlowRunDocument, FlowStep } from './flow-documents.js';
import type { Clock, Store } from '../../ports.js';
import { listsApart, putListsApart, withLists, withoutLists } from './lists-apart.js';

type WhileStep = Extract<FlowStep, { kind: 'while' }>;

/**
 * A flow run is stored again at every turn, and it holds the results its later steps may read. A
 * large result (a step's fetched records) was so written once per later step: 20 steps after a
 * 1 MB result took 8 ms each instead of 2, and a large input once per step or loop iteration.
 * Results and inputs of at least APART_CHARS characters of JSON are kept apart instead, each once,
 * in a `flow_result` document whose key is the run's key and the SHA-256 of the value (the same
 * value is the same document, whoever writes it); the stored run names them (`results_apart`,
 * `previous_apart`, `input_apart`) and is read with them put back (resolveRun), so nothing outside
 * the stored form changes.
 */
export const APART_CHARS = 8 * 1024;

/**
 * Keeps apart the large results `run` has that `previous` (the run it was copied from, copyRun)
 * did not: writes their `flow_result` documents, and records in `run` which are apart. A result
 * taken over from `previous` unchanged (the same value: copyRun shares them) keeps what was
 * decided for it, so each result is measured once; `measured` gets the size of each value kept
 * apart that was measured now, by its key. A while loop's results so far (its step's) are
 * appended to, never changed: those `previous` had keep what was decided for them.
 */
export async function putResultsApart(
  deps: { store: Store; clock: Clock },
  workspaceId: string,
  runKey: string,
  run: FlowRun,
  previous: FlowRun | null,
  measured?: Map<string, number>,
): Promise<void> {
  // A finished run is written this once more: nothing new is worth a document of its own then.
  const put = (value: unknown) => (run.status === 'finished' ? Promise.resolve(undefined) : storeIfLarge(deps, workspaceId, runKey, run, value, measured));
  const apart: Record<string, string> = {};
  for (const [id, value] of Object.entries(run.results)) {
    const kept = previous && previous.results[id] === value && Object.hasOwn(previous.results, id);
    const key = kept ? previous.results_apart?.[id] : await put(value);
    if (key) apart[id] = key;
  }
  setOrDrop(run, 'results_apart', Object.keys(apart).length ? apart : undefined);
  const sharedWith = Object.keys(run.results).find((id) => run.results[id] === run.previous_result && apart[id]);
  const previousKey = sharedWith ? apart[sharedWith] : previous && previous.previous_result === run.previous_result ? previous.previous_apart : await put(run.previous_result);
  setOrDrop(run, 'previous_apart', previousKey);
  // A flow's input is read by every step and changes never; a branch's or iteration's names its
  // enclosing run's (input_from) instead.
  const inputKey = run.input_from ? undefined : previous && previous.flow_input === run.flow_input ? previous.input_apart : await put(run.flow_input);
  setOrDrop(run, 'input_apart', inputKey);
  if (run.step?.kind === 'while') await putIterationsApart(run.step, previous?.step, put);
  await putListsApart(run, previous, put);
}

async function putIterationsApart(step: WhileStep, before: FlowStep | null | undefined, put: (value: unknown) => Promise<string | undefined>): Promise<void> {
  const known = before?.kind === 'while' && before.module === step.module ? before : null;
  const apart: Record<string, string> = {};
  for (const [index, value] of step.results.entries()) {
    const key = known && index < known.results.length ? known.results_apart?.[index] : await put(value);
    if (key) apart[index] = key;
  }
  if (Object.keys(apart).length) step.results_apart = apart;
  else delete step.results_apart;
}

/** The stored form of the results and input: those kept apart are left out (runDocument). */
export function withoutApart(
  run: Pick<FlowRun, 'results' | 'results_apart' | 'previous_result' | 'previous_apart' | 'input_apart' | 'step' | 'child_jobs' | 'lists_apart'>,
): Partial<Pick<FlowRunDocument, 'results' | 'previous_result' | 'flow_input' | 'step' | 'child_jobs'>> {
  const apart = run.results_apart;
  const results = apart ? Object.fromEntries(Object.entries(run.results).filter(([id]) => !Object.hasOwn(apart, id))) : run.results;
  const step = run.step?.kind === 'while' && run.step.results_apart ? { step: storedIterations(run.step, run.step.results_apart) } : {};
  return { results, previous_result: run.previous_apart ? null : run.previous_result, ...(run.input_apart ? { flow_input: {} } : {}), ...step, ...withoutLists(run) };
}

function storedIterations(step: WhileStep, apart: Record<string, string>): WhileStep {
  return { ...step, results: step.results.map((r, i) => (Object.hasOwn(apart, i) ? null : r)) };
}

/** The results of a stored run with those kept apart read back in (resolveRun). */
export async function withApart<
  D extends Pick<FlowRunDocument, 'flow_job' | 'results' | 'results_apart' | 'previous_result' | 'previous_apart' | 'flow_input' | 'input_apart' | 'step' | 'child_jobs' | 'lists_apart'>,
>(store: Store, workspaceId: string, stored: D): Promise<D> {
  const read = new Map<string, Promise<unknown>>();
  const value = (key: string) => read.get(key) ?? read.set(key, readApart(store, workspaceId, stored.flow_job, key)).get(key)!;
  const doc = await withLists(stored, workspaceId, value);
  const step = doc.step?.kind === 'while' && doc.step.results_apart ? doc.step : null;
  if (!doc.results_apart && !doc.previous_apart && !doc.input_apart && !step) return doc;
  const results = { ...doc.results };
  for (const [id, key] of Object.entries(doc.results_apart ?? {})) results[id] = await value(key);
  const previous_result = doc.previous_apart ? await value(doc.previous_apart) : doc.previous_result;
  const flow_input = doc.input_apart ? ((await value(doc.input_apart)) as Record<string, unknown>) : doc.flow_input;
  const iterations = step ? { step: { ...step, results: await Promise.all(step.results.map((r, i) => (step.results_apart![i] ? value(step.results_apart![i]) : r))) } } : {};
  return { ...doc, results, previous_result, flow_input, ...iterations };
}

/** The `flow_result` documents written for a stored run (`apart_written`), to delete with it; read as it is stored, checked or not. */
export function apartKeys(doc: Record<string, unknown>): string[] {
  const written = Array.isArray(doc.apart_written) ? doc.apart_written : [];
  return written.filter((key): key is string => typeof key === 'string');
}

/**
 * Each value of `run` kept apart, with its key (a value kept under two names, once): what a run
 * holds beyond its stored document, which the cache of runs weighs (run-cache.ts).
 */
export function apartValues(run: FlowRun): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [id, key] of Object.entries(run.results_apart ?? {})) out.set(key, run.results[id]);
  if (run.previous_apart) out.set(run.previous_apart, run.previous_result);
  if (run.input_apart) out.set(run.input_apart, run.flow_input);
  const step = run.step;
  if (step?.kind === 'while') for (const [index, key] of Object.entries(step.results_apart ?? {})) out.set(key, step.results[Number(index)]);
  for (const [key, list] of listsApart(run)) out.set(key, list);
  return out;
}

/** The key of the `flow_result` holding `value` when it is large, written (once) and listed in the run's `apart_written`. */
async function storeIfLarge(deps: { store: Store; clock: Clock }, workspaceId: string, runKey: string, run: FlowRun, value: unknown, measured?: Map<string, number>): Promise<string | undefined> {
  // Numbers, booleans and null are never large; strings and containers are measured.
  if (value === null || (typeof value !== 'string' && typeof value !== 'object')) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined || text.length < APART_CHARS) return undefined;
  const key = `${runKey}/${sha256Hex(text)}`;
  measured?.set(key, text.length);
  // Taken already: the same result, stored by an earlier turn or a racing one.
  await tryCreateEntity(deps.store, deps.clock, 'flow_result', workspaceId, key, { value });
  if (!run.apart_written?.includes(key)) run.apart_written = [...(run.apart_written ?? []), key];
  return key;
}

async function readApart(store: Store, workspaceId: string, flowJob: string, key: string): Promise<unknown> {
  const stored = await readEntity(store, 'flow_result', workspaceId, key);
  if (!stored) throw new StoredDocumentError(`flow_run ${flowJob} in ${workspaceId}`, 'results_apart', `its result ${key} is missing`);
  return stored.value.value;
}

function setOrDrop<K extends 'results_apart' | 'previous_apart' | 'input_apart'>(run: FlowRun, field: K, value: FlowRun[K] | undefined): void {
  if (value === undefined) delete run[field];
  else run[field] = value;
}
