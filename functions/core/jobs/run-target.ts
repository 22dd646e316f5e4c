import { rememberScript } from '../scripts/version-cache.js';
import { findFlowVersion, findLatestFlow } from '../flows/flows.js';
import type { FlowVersion } from '../flows/flow-documents.js';
import type { Job, Language, ScriptVersion, Store } from '../../ports.js';

/**
 * What a run names (a webhook URL or a flow step) and what it resolves to. The rules live here
 * once, for the HTTP routes of both shells and for the flow interpreter: a path names a script or
 * a flow (never both), a hash one script version, `fv/<id>` one flow version forever (spec 9); and
 * the caller must be allowed to run the item at the path it resolves to.
 */

export type RunTarget =
  /** The latest script or flow at the path; `only` narrows it to one of them (flow steps name which). */
  | { by: 'path'; path: string; only?: 'script' | 'flow' }
  | { by: 'hash'; hash: string }
  | { by: 'flow_version'; version: string };

export type Runnable = { kind: 'script'; script: ScriptVersion } | { kind: 'flow'; flow: FlowVersion };

/** Why a target does not resolve; `path` is what the caller may not run, `what` what is missing. */
export type Resolution =
  | { ok: true; runnable: Runnable }
  | { ok: false; reason: 'forbidden'; path: string }
  | { ok: false; reason: 'not_found'; what: string };

/**
 * Resolves the target for a caller who may run what `mayRun(path)` allows. By path, the check
 * comes before the lookup, so a caller without rights cannot probe which paths exist.
 */
export async function resolveRunTarget(store: Store, workspaceId: string, mayRun: (path: string) => boolean, target: RunTarget): Promise<Resolution> {
  const checked = (runnable: Runnable): Resolution => {
    const path = runnablePath(runnable);
    return mayRun(path) ? { ok: true, runnable } : { ok: false, reason: 'forbidden', path };
  };
  switch (target.by) {
    case 'path': {
      if (!mayRun(target.path)) return { ok: false, reason: 'forbidden', path: target.path };
      const flow = target.only === 'script' ? null : await findLatestFlow(store, workspaceId, target.path);
      if (flow) return { ok: true, runnable: { kind: 'flow', flow } };
      const script = target.only === 'flow' ? null : await store.getLatestScript(workspaceId, target.path);
      // The run's worker then finds the version without reading it again.
      if (script) return { ok: true, runnable: { kind: 'script', script: rememberScript(store, script) } };
      return { ok: false, reason: 'not_found', what: `${target.only ?? 'script or flow'} ${target.path}` };
    }
    case 'hash': {
      // Read, not taken from this process's cache: a path deleted through another process (a Lambda)
      // must stop its versions' webhooks too. The worker then runs the version without reading it.
      const stored = await store.getScriptByHash(workspaceId, target.hash);
      const script = stored && rememberScript(store, stored);
      return script ? checked({ kind: 'script', script }) : { ok: false, reason: 'not_found', what: `script version ${target.hash}` };
    }
    case 'flow_version': {
      const id = Number(target.version);
      const found = Number.isSafeInteger(id) && id > 0 ? await findFlowVersion(store, workspaceId, id) : null;
      // A test run's flow (the editor's) is not a version anyone can run again.
      const flow = found && !found.preview ? found : null;
      return flow ? checked({ kind: 'flow', flow }) : { ok: false, reason: 'not_found', what: `flow version ${target.version}` };
    }
  }
}

export function runnablePath(r: Runnable): string {
  return r.kind === 'script' ? r.script.path : r.flow.path;
}

/** The fields of a job that say what it runs. */
export type JobTarget = Pick<Job, 'kind' | 'script_path' | 'script_hash' | 'flow_version' | 'flow_module' | 'language'>;

export function scriptJobTarget(script: Pick<ScriptVersion, 'path' | 'hash' | 'language'>): JobTarget {
  return { kind: 'script', script_path: script.path, script_hash: script.hash, flow_version: null, flow_module: null, language: script.language };
}

/** A flow run, or an inline branch or iteration of one (`path` is then the flow's path and the module id). */
export function flowJobTarget(path: string, version: number): JobTarget {
  // A flow has no language of its own; its steps have theirs.
  return { kind: 'flow', script_path: path, script_hash: null, flow_version: version, flow_module: null, language: 'nativets' };
}

/** An inline script of a flow version: its code lives in that version's module. */
export function flowStepJobTarget(flowPath: string, version: number, moduleId: string, language: Language): JobTarget {
  return { kind: 'flowstep', script_path: `${flowPath}/${moduleId}`, script_hash: null, flow_version: version, flow_module: moduleId, language };
}

/**
 * The `script_hash` the job API has always shown: the script's hash, a flow's version id, or
 * `<flow version>:<module id>` for a flow step. Kept for clients that read it.
 */
export function legacyScriptHash(job: Pick<Job, 'kind' | 'script_hash' | 'flow_version' | 'flow_module'>): string {
  switch (job.kind) {
    case 'script':
      return job.script_hash ?? '';
    case 'flow':
      return String(job.flow_version);
    case 'flowstep':
      return `${job.flow_version}:${job.flow_module}`;
  }
}
