import { findFlowVersion } from './flows.js';
import { childFields, type FlowModule } from './definition.js';
import { StoredDocumentError } from '../documents/parse.js';
import type { FlowRun, FlowRunDocument, FlowVersion } from './flow-documents.js';
import type { Store } from '../../ports.js';

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
  if (run.modules_at === undefined) return run;
  const { modules: _modules, failure_module: _failure, ...rest } = run;
  return rest;
}

/** The run a document describes, its modules read from its flow version when it names them. */
export async function resolveRun(store: Store, workspaceId: string, doc: FlowRunDocument): Promise<FlowRun> {
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
 * run-cache.ts) since no turn changes them.
 */
export function copyRun(run: FlowRun): FlowRun {
  const { modules, failure_module, ...rest } = run;
  return { ...structuredClone(rest), modules, ...(failure_module ? { failure_module } : {}) };
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
