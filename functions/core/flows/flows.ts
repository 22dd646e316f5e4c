import { z } from 'zod';
import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { chatConnectionPlatform } from '../chat/chat-settings.js';
import { assertItemPath } from '../common/paths.js';
import { objectBody, parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { jsonSchemaPatternProblem } from '../common/json-schema.js';
import { workspaceAnnouncer } from '../events/announce.js';
import { createEntity, getEntityValue, listEntityValues, requireEntity, updateEntity, deleteEntity } from '../store/entities.js';
import { inferSchema, SchemaInferenceError } from '../schema/index.js';
import { nextSequence } from '../store/sequences.js';
import { compileIfNeeded } from '../scripts/scripts.js';
import { lockInlineSteps, prepareInlineSteps } from './inline-step-locks.js';
import { derivedOnce } from '../scripts/version-cache.js';
import { deepFreeze } from '../common/deep-freeze.js';
import { allModules, flowModules, flowValue, type ConsentGateValue, type FlowModule, type FlowValue } from './definition.js';
import { unknownMessageKeys } from '../approvals/gate-message.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { InputSchema, Store } from '../../ports.js';
import type { FlowVersion } from './flow-documents.js';

/**
 * Flows and their versions (spec 2.4, 4.1, 9). Every create or update makes a new version with a
 * numeric id, global and increasing; `fv/<id>` URLs run that version forever, `p/<path>` the latest.
 */

export const flowBody = z.strictObject({
  path: z.string(),
  summary: z.string().max(1000).default(''),
  description: z.string().max(10_000).default(''),
  value: flowValue,
  schema: z
    .object({ type: z.literal('object'), properties: z.record(z.string(), z.record(z.string(), z.unknown())), required: z.array(z.string()).default([]) })
    .passthrough()
    // Its patterns are checked on RE2 (common/json-schema.ts); one RE2 does not take would go unchecked.
    .superRefine((schema, ctx) => {
      const problem = jsonSchemaPatternProblem(schema);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .nullish(),
  deployment_message: z.string().max(1000).nullish(),
});

const VERSIONS = 'flow_version';
const versionKey = (id: number) => String(id).padStart(12, '0');
const what = (path: string) => `flow ${path}`;

export function checkDefinition(value: FlowValue, snsAvailable: boolean): void {
  const count = flowModules(value).length;
  if (count > MAX_MODULES) throw badRequest('invalid_flow', `value.modules: the flow has ${count} modules, nested ones included; at most ${MAX_MODULES}`, { field: 'value.modules' });
  const seen = new Set<string>();
  for (const [m, path] of modulePaths(value)) checkStepSettings(m, path);
  for (const m of flowModules(value)) {
    if (seen.has(m.id)) throw badRequest('invalid_flow', `value.modules: module id ${m.id} is used twice`, { field: 'value.modules', step: m.id });
    seen.add(m.id);
    if (m.value.type === 'rawscript') {
      try {
        inferSchema(m.value.language, m.value.content);
      } catch (e) {
        if (e instanceof SchemaInferenceError) throw badRequest('invalid_flow', `value.modules: module ${m.id}: ${e.message}`, { field: 'value.modules', step: m.id });
        throw e;
      }
    }
    if (m.value.type === 'script' || m.value.type === 'flow') assertItemPath(m.value.path, `value.modules.${m.id}.path`);
    if (m.value.type === 'consentgate') checkNotifyChannels(m.id, m.value, snsAvailable);
  }
  if (value.failure_module) checkFailureModule(value.failure_module);
  if (value.early_return !== undefined && !value.modules.some((m) => m.id === value.early_return)) {
    throw badRequest('invalid_flow', `value.early_return: no top-level module ${value.early_return}`, { field: 'value.early_return' });
  }
}

/** Every module with its path in the definition (`value.modules.0.value.branches.1.modules.0`), the failure module's too. */
function modulePaths(value: FlowValue): [FlowModule, string][] {
  const walk = (list: readonly FlowModule[], at: string): [FlowModule, string][] =>
    list.flatMap((m, i) => {
      const path = `${at}.${i}`;
      const v = m.value;
      const inner =
        v.type === 'branchone'
          ? [...v.branches.flatMap((b, j) => walk(b.modules, `${path}.value.branches.${j}.modules`)), ...walk(v.default, `${path}.value.default`)]
          : v.type === 'branchall'
            ? v.branches.flatMap((b, j) => walk(b.modules, `${path}.value.branches.${j}.modules`))
            : v.type === 'forloopflow' || v.type === 'whileloopflow'
              ? walk(v.modules, `${path}.value.modules`)
              : [];
      return [[m, path] as [FlowModule, string], ...inner];
    });
  return [...walk(value.modules, 'value.modules'), ...(value.failure_module ? ([[value.failure_module, 'value.failure_module']] as [FlowModule, string][]) : [])];
}

/**
 * Step settings that mean nothing on a kind of module are refused with the setting's path rather
 * than ignored (docs/flows.md, "Step settings").
 */
function checkStepSettings(m: FlowModule, path: string): void {
  const refuse = (setting: string, why: string) => {
    throw badRequest('invalid_flow', `${path}.${setting}: module ${m.id}: ${setting} ${why}`, { field: `${path}.${setting}`, step: m.id });
  };
  const type = m.value.type;
  const loop = type === 'forloopflow' || type === 'whileloopflow';
  const scriptStep = type === 'rawscript' || type === 'script';
  if (m.timeout !== undefined && !scriptStep) refuse('timeout', 'applies to script steps (rawscript or script) only');
  if (m.cache_ttl != null && !scriptStep) refuse('cache_ttl', 'applies to script steps (rawscript or script) only');
  if (m.cache_ttl != null && m.suspend) refuse('cache_ttl', 'does not apply to an approval step: each run asks for its own approvals');
  if (m.cache_ttl != null && path === 'value.failure_module') refuse('cache_ttl', 'does not apply to a failure module: it runs for each failure');
  if (m.priority != null && !scriptStep && type !== 'flow') refuse('priority', 'applies to steps that run a job (rawscript, script or flow) only');
  if (m.stop_after_all_iters_if && !loop) refuse('stop_after_all_iters_if', 'applies to for and while loops only');
  if (m.stop_after_if && type === 'forloopflow') refuse('stop_after_if', 'on a for loop is not supported: use stop_after_all_iters_if (after all iterations) or a while loop');
  if (type === 'whileloopflow' && !m.stop_after_if) refuse('a while loop', 'needs a stop_after_if saying when it ends');
  if (m.sleep !== undefined && (m.suspend || type === 'consentgate')) refuse('sleep', 'cannot follow an approval step or a ConsentGate');
  if (m.retry && type === 'consentgate') refuse('retry', 'does not apply to a ConsentGate: a rejection is a decision, not a failure');
  // An approval step waits on the job it ran (its resume URLs name it): a module that runs none has nothing to approve.
  if (m.suspend && type === 'consentgate') refuse('suspend', 'does not apply to a ConsentGate: it waits for its own decision');
  if (m.suspend && (type === 'identity' || type === 'branchall' || loop)) refuse('suspend', 'applies to steps that run one job (rawscript, script, flow or branchone) only');
  // Each branch of a branchall is a job of every run (a branchone's conditions one evaluation): as a step list, 200 at most.
  if ((m.value.type === 'branchall' || m.value.type === 'branchone') && m.value.branches.length > MAX_BRANCHES) {
    throw badRequest('invalid_flow', `${path}.value.branches: module ${m.id}: at most ${MAX_BRANCHES} branches`, { field: `${path}.value.branches`, step: m.id });
  }
}

/** Checked at create and update only: a version stored before the limit still runs. */
const MAX_BRANCHES = 200;
/**
 * Modules of a flow, nested ones and the failure module included: each inline script's parameters
 * are read at save, and every turn of a run walks the list, so 80,000 in a 10 MB body held the
 * API process for seconds per request.
 */
export const MAX_MODULES = 1000;

/** The failure module is one script step that runs once: what would make it wait or run again is refused. */
function checkFailureModule(m: FlowModule): void {
  const field = 'value.failure_module';
  if (m.value.type !== 'rawscript' && m.value.type !== 'script') throw badRequest('invalid_flow', `${field}: a failure module is a rawscript or script step`, { field });
  for (const setting of ['retry', 'sleep', 'skip_if', 'stop_after_if', 'suspend'] as const) {
    if (m[setting] !== undefined) throw badRequest('invalid_flow', `${field}: ${setting} does not apply to a failure module`, { field: `${field}.${setting}` });
  }
}

/** Inline steps of a compiled language (Go) are built now, as scripts are at create: a run never compiles. */
async function compileInlineScripts(deps: Pick<CoreDeps, 'compiler'>, value: FlowValue): Promise<void> {
  for (const m of flowModules(value)) {
    if (m.value.type !== 'rawscript') continue;
    try {
      await compileIfNeeded(deps.compiler, m.value.language, m.value.content);
    } catch (e) {
      if (e instanceof ApiError && e.status === 400) throw badRequest('invalid_flow', `value.modules: module ${m.id}: ${e.message}`, { field: 'value.modules' });
      throw e;
    }
  }
}

/**
 * Channels this instance cannot deliver are refused when the flow is created, not when a run
 * reaches the gate: SNS needs the AWS shell (its approvals topic).
 */
function checkNotifyChannels(moduleId: string, gate: ConsentGateValue, snsAvailable: boolean): void {
  for (const [i, n] of gate.notify.entries()) {
    const field = `value.modules.${moduleId}.value.notify.${i}`;
    if (n.channel === 'sns' && !snsAvailable) throw badRequest('invalid_flow', `${field}: the sns channel is not available on this instance (use email or webhook)`, { field, step: moduleId });
  }
}

/** What the create answer warns about: placeholders of gate messages that will render empty. */
export function flowWarnings(version: FlowVersion): string[] {
  return unknownMessageKeys(version.value.modules, Object.keys(version.schema?.properties ?? {}));
}

/**
 * A gate's chat channel names one of the workspace's chat connections (core/chat/chat-settings.ts),
 * which a workspace admin sets up: the flow only names it, and cannot bring its own.
 */
export async function checkChatChannels(deps: Pick<CoreDeps, 'store'>, rights: Rights, value: FlowValue): Promise<void> {
  for (const m of allModules(value.modules)) {
    if (m.value.type !== 'consentgate') continue;
    for (const [i, n] of m.value.notify.entries()) {
      if (n.channel !== 'chat') continue;
      const field = `value.modules.${m.id}.value.notify.${i}.resource`;
      if (!(await chatConnectionPlatform(deps, rights.workspaceId, n.resource))) {
        throw badRequest('invalid_flow', `${field}: workspace ${rights.workspaceId} has no chat connection ${n.resource} (a workspace admin connects chat platforms in the workspace settings)`, { field, step: m.id });
      }
    }
  }
}

export async function storeVersion(deps: Pick<CoreDeps, 'store' | 'clock' | 'topics' | 'compiler' | 'dependencies'>, rights: Rights, input: z.infer<typeof flowBody>, preview = false): Promise<FlowVersion> {
  checkDefinition(input.value, !!deps.topics);
  await checkChatChannels(deps, rights, input.value);
  await compileInlineScripts(deps, input.value);
  const stepLocks = await lockInlineSteps(deps, rights, input.path, input.value);
  const id = await nextSequence(deps.store, deps.clock, VERSIONS);
  const version: FlowVersion = {
    id,
    path: input.path,
    summary: input.summary,
    description: input.description,
    value: input.value,
    schema: input.schema ?? null,
    ...(input.deployment_message ? { deployment_message: input.deployment_message } : {}),
    created_by: rights.principal.username,
    created_at: deps.clock.now().toISOString(),
    ...(preview ? { preview: true as const } : {}),
    ...(Object.keys(stepLocks).length > 0 ? { step_locks: stepLocks } : {}),
  };
  await createEntity(deps.store, deps.clock, 'flow_version', rights.workspaceId, versionKey(id), version, `flow version ${id}`);
  prepareInlineSteps(deps, input.value, stepLocks);
  return version;
}

export async function createFlow(deps: Pick<CoreDeps, 'store' | 'clock' | 'topics' | 'config' | 'compiler' | 'dependencies'>, rights: Rights, body: unknown): Promise<FlowVersion> {
  const input = parseBody(flowBody, withoutWindmillDefaults('flow', body));
  assertItemPath(input.path);
  rights.check('flows', 'write', input.path);
  // A path names one thing, so `/p/<path>` is never ambiguous.
  if (await deps.store.getLatestScript(rights.workspaceId, input.path)) throw conflict(`a script already exists at ${input.path}`);
  if (await deps.store.getEntity('flow', rights.workspaceId, input.path)) throw conflict(`${what(input.path)} already exists: update it instead`);
  const version = await storeVersion(deps, rights, input);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await createEntity(deps.store, deps.clock, 'flow', rights.workspaceId, input.path, { path: input.path, version: version.id }, what(input.path), () => announce('CreateFlow', { kind: 'flow', path: input.path, version: version.id }));
  return version;
}

export async function updateFlow(deps: Pick<CoreDeps, 'store' | 'clock' | 'topics' | 'config' | 'compiler' | 'dependencies'>, rights: Rights, path: string, body: unknown): Promise<FlowVersion> {
  rights.check('flows', 'write', path);
  const input = parseBody(flowBody, withoutWindmillDefaults('flow', { path, ...objectBody(body) }));
  if (input.path !== path) throw badRequest('invalid_request', 'path: a flow cannot be moved by an update', { field: 'path' });
  await requireEntity(deps.store, 'flow', rights.workspaceId, path, what(path));
  const version = await storeVersion(deps, rights, input);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await updateEntity(deps.store, deps.clock, 'flow', rights.workspaceId, path, what(path), (h) => ({ ...h, version: Math.max(h.version, version.id) }), () => announce('UpdateFlow', { kind: 'flow', path, version: version.id }));
  return version;
}

/** The latest version of a flow, or null when there is no flow at the path. */
export async function findLatestFlow(store: Store, workspaceId: string, path: string): Promise<FlowVersion | null> {
  const head = await getEntityValue(store, 'flow', workspaceId, path);
  return head ? findFlowVersion(store, workspaceId, head.version) : null;
}

/**
 * A flow version, read and parsed once per process: versions are never changed or deleted (deleting
 * a flow deletes its head, findLatestFlow's first read) and their ids are never reused. A run reads
 * its version when it starts, at each turn its run is not this process's last write, and when it
 * ends. Deeply frozen: every caller shares it.
 */
export async function findFlowVersion(store: Store, workspaceId: string, id: number): Promise<FlowVersion | null> {
  return derivedOnce(store, `flowversion\n${workspaceId}\n${id}`, async () => deepFreeze(await getEntityValue(store, 'flow_version', workspaceId, versionKey(id))));
}

export async function getFlow(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<FlowVersion> {
  rights.check('flows', 'read', path);
  return (await findLatestFlow(deps.store, rights.workspaceId, path)) ?? (() => { throw notFound(what(path)); })();
}

/** Archived flows only with `showArchived`. */
export async function listFlows(deps: Pick<CoreDeps, 'store'>, rights: Rights, showArchived = false): Promise<{ path: string; version: number; archived?: boolean }[]> {
  rights.check('flows', 'read');
  return (await listEntityValues(deps.store, 'flow', rights.workspaceId)).map((e) => e.value).filter((h) => rights.can('flows', 'read', h.path) && (showArchived || !h.archived));
}

export const archiveBody = z.strictObject({ archived: z.boolean().default(true) });

/** Archives (or, with `archived: false`, restores) a flow: announced as ArchiveFlow with `data.archived`. */
export async function archiveFlow(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, rights: Rights, path: string, body: unknown): Promise<{ path: string; archived: boolean }> {
  rights.check('flows', 'write', path);
  const input = parseBody(archiveBody, body);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const head = await updateEntity(deps.store, deps.clock, 'flow', rights.workspaceId, path, what(path), (h) => ({ ...h, archived: input.archived }), (next) =>
    announce('ArchiveFlow', { kind: 'flow', path, version: next.value.version, extra: { archived: input.archived } }),
  );
  return { path, archived: head.value.archived ?? false };
}

/** Newest first (spec 9: numeric version ids). */
export async function flowHistory(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<{ id: number; created_at: string; created_by: string; summary: string; deployment_message?: string }[]> {
  rights.check('flows', 'read', path);
  const versions = (await listEntityValues(deps.store, 'flow_version', rights.workspaceId)).map((e) => e.value).filter((v) => v.path === path && !v.preview);
  if (versions.length === 0) throw notFound(what(path));
  return versions.sort((a, b) => b.id - a.id).map((v) => ({ id: v.id, created_at: v.created_at, created_by: v.created_by, summary: v.summary, ...(v.deployment_message ? { deployment_message: v.deployment_message } : {}) }));
}

/** Removes the path; its versions stay, so `fv/<id>` URLs already handed out keep working. */
export async function deleteFlow(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, rights: Rights, path: string): Promise<void> {
  rights.check('flows', 'write', path);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'flow', rights.workspaceId, path, what(path), announce('DeleteFlow', { kind: 'flow', path }));
}
