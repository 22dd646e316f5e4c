import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { newJobId } from '../common/crypto.js';
import { parseBody } from '../common/validation.js';
import { SchemaInferenceError } from '../schema/index.js';
import { inferScriptSchema } from '../dependencies/workspace-imports.js';
import { lockEcosystem, lockScript } from '../dependencies/lock-script.js';
import { MAX_LOCK_CHARS, splitLock } from '../dependencies/lock-header.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { compileIfNeeded } from './scripts.js';
import { getEntityValue, tryCreateEntity } from '../store/entities.js';
import { pushJob, type CallerWait, type JobOrigin } from '../jobs/jobs.js';
import { LANGUAGES, type InputSchema, type Job, type Language, type ScriptVersion, type Store } from '../../ports.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';

/**
 * Test runs of code that is not saved (Windmill's `jobs/run/preview`): the script editor runs what
 * is in the editor with the arguments of its form. The code is kept as a `script_preview` document
 * under the job's id until the job ends, so a worker in another process (a Lambda) finds it as it
 * finds a saved version; the job is an ordinary script job whose hash is `preview-<job id>`.
 *
 * Who may: whoever may both write a script at the path and run what is there — a test run does
 * nothing a save followed by a run could not. Windmill's clients may leave the path out (its
 * `runScriptPreviewAndWaitResult` sends code, language and arguments only): the run is then at
 * `u/<caller>/preview`, in the caller's own folder.
 */

export const PREVIEW_HASH_PREFIX = 'preview-';

export const previewBody = z.strictObject({
  path: z.string().optional(),
  language: z.enum(LANGUAGES),
  content: z.string().max(1_000_000),
  args: z.record(z.string(), z.unknown()).default({}),
  /** As at create: installed exactly when given, else resolved from the imports. */
  lock: z.string().max(MAX_LOCK_CHARS).nullish(),
});

/** Where a test run without a path runs: the caller's own folder, as Windmill runs it under the caller. */
export function defaultPreviewPath(rights: Rights, name: string): string {
  return `u/${rights.principal.username}/${name}`;
}

export const inferSchemaBody = z.strictObject({
  language: z.enum(LANGUAGES),
  content: z.string().max(1_000_000),
});

/** The input schema a save of this code would store (the editor's live form), without saving anything. */
export function inferSchemaForEditor(rights: Rights, body: unknown): InputSchema {
  const input = parseBody(inferSchemaBody, body);
  // Only those who may write some script need it; it reads nothing stored.
  rights.check('scripts', 'write');
  return schemaOrBadRequest(input.language, input.content);
}

function schemaOrBadRequest(language: Language, content: string): InputSchema {
  try {
    return inferScriptSchema(language, content);
  } catch (e) {
    if (e instanceof SchemaInferenceError) throw badRequest('invalid_script', `content: ${e.message}`, { field: 'content' });
    throw e;
  }
}

/** Starts a test run of unsaved code (as job `id`); answers the job, which runs like a saved script's. */
export async function startPreview(deps: CoreDeps, rights: Rights, body: unknown, origin: JobOrigin = {}, wait: CallerWait = {}, id: string = newJobId()): Promise<Job> {
  const input = parseBody(previewBody, withoutWindmillDefaults('script_preview', body));
  const path = input.path ?? defaultPreviewPath(rights, 'preview');
  assertItemPath(path);
  rights.check('scripts', 'write', path);
  rights.check('jobs', 'run', path);
  const schema = schemaOrBadRequest(input.language, input.content);
  await compileIfNeeded(deps.compiler, input.language, input.content);
  const lock = await lockScript(deps, rights, { path, language: input.language, content: input.content }, input.lock ?? undefined);
  const version: ScriptVersion = {
    workspace_id: rights.workspaceId,
    path,
    hash: `${PREVIEW_HASH_PREFIX}${id}`,
    parent_hash: null,
    content: input.content,
    language: input.language,
    summary: '',
    description: '',
    schema,
    delete_after_use: false,
    timeout: null,
    ...(lock ? { lock } : {}),
    created_by: rights.principal.username,
    created_at: deps.clock.now().toISOString(),
  };
  await tryCreateEntity(deps.store, deps.clock, 'script_preview', rights.workspaceId, id, version);
  const ecosystem = lockEcosystem(input.language);
  const packages = splitLock(lock).packages;
  if (packages && ecosystem && deps.dependencies?.ecosystems.includes(ecosystem)) deps.dependencies.prepare(ecosystem, packages);
  return pushJob(deps, rights.principal, version, input.args, id, origin, wait);
}

export function isPreviewHash(hash: string): boolean {
  return hash.startsWith(PREVIEW_HASH_PREFIX);
}

/** The code of a preview job, while it is kept (until the job ends). */
export async function previewCode(store: Store, workspaceId: string, hash: string): Promise<ScriptVersion | null> {
  return getEntityValue(store, 'script_preview', workspaceId, hash.slice(PREVIEW_HASH_PREFIX.length));
}

/** Once a preview job has ended, its code goes: nothing runs it again. */
export async function forgetPreview(store: Store, job: Pick<Job, 'workspace_id' | 'kind' | 'script_hash' | 'id'>): Promise<void> {
  if (job.kind !== 'script' || !job.script_hash || !isPreviewHash(job.script_hash)) return;
  await store.deleteEntity('script_preview', job.workspace_id, job.id).catch(() => undefined);
}
