import { forgetScriptPath } from './version-cache.js';
import { z } from 'zod';
import { conflict, notFound, badRequest } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { sha256Hex } from '../common/crypto.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { SchemaInferenceError } from '../schema/index.js';
import { LANGUAGES, type Clock, type InputSchema, type Language, type PrebuiltBinary, type ScriptCompiler, type ScriptVersion, type Store } from '../../ports.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import { workspaceAnnouncer } from '../events/announce.js';
import { definedRunSettings, runSettingsFields } from '../jobs/run-settings.js';
import { lockEcosystem, lockScript } from '../dependencies/lock-script.js';
import { MAX_LOCK_CHARS, splitLock } from '../dependencies/lock-header.js';
import { inferScriptSchema } from '../dependencies/workspace-imports.js';

/** Script versions: every create is a new immutable version addressed by its hash (spec 2.1, 9). */

const inputSchemaShape = z.object({
  type: z.literal('object'),
  properties: z.record(z.string(), z.record(z.string(), z.unknown())),
  required: z.array(z.string()).default([]),
  order: z.array(z.string()).optional(),
}).passthrough();

/**
 * Fits the API's request body limit (4 MiB on AWS) beside a script's content; a Go binary built with
 * `-ldflags=-s -w` and gzipped is well under it.
 */
export const GO_BINARY_MAX_BASE64_CHARS = 3_000_000;

const goBinaryBody = z.strictObject({
  gzip_base64: z.string().min(1).max(GO_BINARY_MAX_BASE64_CHARS).regex(/^[A-Za-z0-9+/]+=*$/, 'base64'),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'lowercase hex sha256 of the binary'),
});

export const createScriptBody = z.strictObject({
  path: z.string(),
  content: z.string().max(1_000_000),
  language: z.enum(LANGUAGES),
  summary: z.string().max(1000).default(''),
  description: z.string().max(10_000).default(''),
  schema: inputSchemaShape.optional(),
  parent_hash: z.string().nullish(),
  delete_after_use: z.boolean().default(false),
  timeout: z.number().int().positive().max(86_400).nullish(),
  /** Recorded on the version: why it was made (the CLI's `message`). */
  deployment_message: z.string().max(1000).nullish(),
  /** The dependency lock (README: Dependencies): installed exactly; resolved from the imports when absent. */
  lock: z.string().max(MAX_LOCK_CHARS).nullish(),
  /** A Go script's binary built off the server, for shells that build nothing (README: Go scripts on AWS). */
  go_binary: goBinaryBody.nullish(),
  /** Result cache, concurrency limit and priority (core/jobs/run-settings.ts, docs/flows.md). */
  ...runSettingsFields,
});

export async function createScript(deps: Pick<CoreDeps, 'store' | 'clock' | 'config' | 'compiler' | 'dependencies'>, rights: Rights, body: unknown): Promise<ScriptVersion> {
  const { store, clock } = deps;
  const input = parseBody(createScriptBody, withoutWindmillDefaults('script', body));
  assertItemPath(input.path);
  rights.check('scripts', 'write', input.path);
  const workspaceId = rights.workspaceId;
  const username = rights.principal.username;
  const language = input.language;
  let schema: InputSchema;
  try {
    schema = input.schema ?? inferScriptSchema(language, input.content);
  } catch (e) {
    if (e instanceof SchemaInferenceError) throw badRequest('invalid_script', `content: ${e.message}`, { field: 'content' });
    throw e;
  }
  if (await store.getEntity('flow', workspaceId, input.path)) throw conflict(`a flow already exists at ${input.path}`);
  const latest = await store.getLatestScript(workspaceId, input.path);
  const parentHash = input.parent_hash ?? null;
  // Optimistic concurrency: a new version must name the version it replaces, so two editors
  // (or a CLI push after someone else's change) never overwrite each other silently.
  if (latest && parentHash !== latest.hash) {
    throw conflict(`a script already exists at ${input.path}: pass parent_hash=${latest.hash} to create a new version of it`);
  }
  if (!latest && parentHash !== null) {
    throw conflict(`parent_hash ${parentHash} is not the latest version of ${input.path}`);
  }
  if (input.go_binary && language !== 'go') throw badRequest('invalid_request', 'go_binary is only for go scripts', { field: 'go_binary' });
  await compileIfNeeded(deps.compiler, language, input.content, input.go_binary ? { workspaceId, gzipBase64: input.go_binary.gzip_base64, sha256: input.go_binary.sha256 } : undefined);
  const lock = await lockScript(deps, rights, { path: input.path, language, content: input.content }, input.lock ?? undefined);
  const createdAt = clock.now().toISOString();
  const hash = (sha256Hex(JSON.stringify([workspaceId, input.path, parentHash, language, input.content, createdAt, globalThis.crypto.randomUUID()]))).slice(0, 16);
  const version: ScriptVersion = {
    workspace_id: workspaceId,
    path: input.path,
    hash,
    parent_hash: parentHash,
    content: input.content,
    language,
    summary: input.summary,
    description: input.description,
    schema,
    delete_after_use: input.delete_after_use,
    timeout: input.timeout ?? null,
    ...(input.deployment_message ? { deployment_message: input.deployment_message } : {}),
    ...(lock ? { lock } : {}),
    ...definedRunSettings(input),
    created_by: username,
    created_at: createdAt,
  };
  const announce = await workspaceAnnouncer(deps, workspaceId, username);
  const events = announce(latest ? 'UpdateScript' : 'CreateScript', { kind: 'script', path: version.path, hash: version.hash, extra: { parent_hash: version.parent_hash } });
  if (!(await store.insertScriptVersion(version, latest?.hash ?? null, events))) {
    throw conflict(`${input.path} changed while this version was being created; fetch it and retry`);
  }
  // Installed off the request path: the create answers now, a run of the version waits for it.
  const ecosystem = lockEcosystem(language);
  const packages = splitLock(lock).packages;
  if (packages && ecosystem && deps.dependencies?.ecosystems.includes(ecosystem)) deps.dependencies.prepare(ecosystem, packages);
  return version;
}

/** Languages whose scripts run as a binary built at create (README: Go scripts). */
export const COMPILED_LANGUAGES: readonly Language[] = ['go'];

/**
 * A compiled language is built when its version is created, so a run never compiles and a
 * script that does not build is refused now, with the compiler's file, line and column.
 */
export async function compileIfNeeded(compiler: ScriptCompiler | null | undefined, language: Language, content: string, prebuilt?: PrebuiltBinary): Promise<void> {
  if (!COMPILED_LANGUAGES.includes(language)) return;
  if (!compiler?.languages.includes(language)) {
    throw badRequest('language_unavailable', `${language} scripts cannot be created on this server: it has no ${language} toolchain to build them (docs/scripts.md, Go scripts)`, { field: 'language' });
  }
  const target = compiler.prebuiltTarget;
  if (target && !prebuilt) {
    throw badRequest(
      'language_unavailable',
      `this server has no ${language} toolchain: create ${language} scripts with go_binary, their binary built for GOOS=${target.goos} GOARCH=${target.goarch} (svc sync push builds it; docs/scripts.md, Go scripts on AWS)`,
      { field: 'go_binary' },
    );
  }
  const built = await compiler.compile(language, content, prebuilt);
  if (!built.ok) throw badRequest('invalid_script', `content: ${built.message}`, { field: 'content' });
}

export async function getScriptByPath(store: Store, rights: Rights, path: string): Promise<ScriptVersion> {
  rights.check('scripts', 'read', path);
  return (await store.getLatestScript(rights.workspaceId, path)) ?? fail(`script ${path}`);
}

/**
 * A script's versions, newest first, by following each version's parent hash from the latest; at
 * most `limit` (a long history is cut, the newest kept). A version whose path changed (a rename)
 * ends the walk: the history is that of this path.
 */
export async function scriptHistory(store: Store, rights: Rights, path: string, limit = 20): Promise<Pick<ScriptVersion, 'hash' | 'created_at' | 'created_by' | 'summary' | 'deployment_message'>[]> {
  const versions: ScriptVersion[] = [await getScriptByPath(store, rights, path)];
  while (versions.length < limit) {
    const parent = versions[versions.length - 1].parent_hash;
    const older = parent ? await store.getScriptByHash(rights.workspaceId, parent) : null;
    if (!older || older.path !== path) break;
    versions.push(older);
  }
  return versions.map((v) => ({ hash: v.hash, created_at: v.created_at, created_by: v.created_by, summary: v.summary, ...(v.deployment_message ? { deployment_message: v.deployment_message } : {}) }));
}

export async function getScriptByHash(store: Store, rights: Rights, hash: string): Promise<ScriptVersion> {
  const script = await store.getScriptByHash(rights.workspaceId, hash);
  // A version the caller may not read answers as an unknown hash: a hash must not reveal its path.
  if (!script || !rights.can('scripts', 'read', script.path)) fail(`script version ${hash}`);
  return script;
}

export async function listScripts(store: Store, rights: Rights): Promise<ReturnType<typeof scriptSummary>[]> {
  rights.check('scripts', 'read');
  return (await store.listLatestScripts(rights.workspaceId)).filter((s) => rights.can('scripts', 'read', s.path)).map(scriptSummary);
}

/** Removes every version at the path: DeleteScriptPath (a single version is never deleted alone here). */
export async function deleteScript(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, rights: Rights, path: string): Promise<void> {
  rights.check('scripts', 'write', path);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const deleted = await deps.store.deleteScriptPath(rights.workspaceId, path, announce('DeleteScriptPath', { kind: 'script', path }));
  forgetScriptPath(deps.store, rights.workspaceId, path);
  if (deleted === 0) fail(`script ${path}`);
}

/** The listing leaves out the content; `get` returns it. */
export function scriptSummary(s: ScriptVersion) {
  const { content: _content, ...rest } = s;
  return rest;
}

function fail(what: string): never {
  throw notFound(what);
}
