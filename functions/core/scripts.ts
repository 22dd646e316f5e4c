import { z } from 'zod';
import { conflict, notFound, badRequest } from './errors.js';
import { assertItemPath } from './paths.js';
import { sha256Hex } from './crypto.js';
import { parseBody } from './validation.js';
import { inferSchema, SchemaInferenceError } from './schema/index.js';
import { LANGUAGES, type Clock, type InputSchema, type ScriptVersion, type Store } from '../ports.js';

/** Script versions: every create is a new immutable version addressed by its hash (spec 2.1, 9). */

const inputSchemaShape = z.object({
  type: z.literal('object'),
  properties: z.record(z.string(), z.record(z.string(), z.unknown())),
  required: z.array(z.string()).default([]),
  order: z.array(z.string()).optional(),
}).passthrough();

export const createScriptBody = z.object({
  path: z.string(),
  content: z.string().max(1_000_000),
  language: z.enum(LANGUAGES as [string, ...string[]]),
  summary: z.string().max(1000).default(''),
  description: z.string().max(10_000).default(''),
  schema: inputSchemaShape.optional(),
  parent_hash: z.string().nullish(),
  delete_after_use: z.boolean().default(false),
  timeout: z.number().int().positive().max(86_400).nullish(),
});

export async function createScript(store: Store, clock: Clock, workspaceId: string, username: string, body: unknown): Promise<ScriptVersion> {
  const input = parseBody(createScriptBody, body);
  assertItemPath(input.path);
  const language = input.language as ScriptVersion['language'];
  let schema: InputSchema;
  try {
    schema = (input.schema as InputSchema | undefined) ?? inferSchema(language, input.content);
  } catch (e) {
    if (e instanceof SchemaInferenceError) throw badRequest('invalid_script', `content: ${e.message}`, { field: 'content' });
    throw e;
  }
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
    created_by: username,
    created_at: createdAt,
  };
  if (!(await store.insertScriptVersion(version, latest?.hash ?? null))) {
    throw conflict(`${input.path} changed while this version was being created; fetch it and retry`);
  }
  return version;
}

export async function getScriptByPath(store: Store, workspaceId: string, path: string): Promise<ScriptVersion> {
  return (await store.getLatestScript(workspaceId, path)) ?? fail(`script ${path}`);
}

export async function getScriptByHash(store: Store, workspaceId: string, hash: string): Promise<ScriptVersion> {
  return (await store.getScriptByHash(workspaceId, hash)) ?? fail(`script version ${hash}`);
}

export async function deleteScript(store: Store, workspaceId: string, path: string): Promise<void> {
  if ((await store.deleteScriptPath(workspaceId, path)) === 0) fail(`script ${path}`);
}

/** The listing leaves out the content; `get` returns it. */
export function scriptSummary(s: ScriptVersion) {
  const { content: _content, ...rest } = s;
  return rest;
}

function fail(what: string): never {
  throw notFound(what);
}
