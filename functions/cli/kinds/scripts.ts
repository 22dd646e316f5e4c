import { z } from 'zod';
import { FOLDER_ITEM, isItemPath, languageOfFile, scriptExtension, toYaml, type ScriptLanguage } from '../layout.js';
import { mapPool } from '../pool.js';
import { p, type Remote } from '../remote.js';
import { bundleScript, codebaseOf } from '../codebases.js';
import { ItemFileError, type Item, type KindHandler, type SyncContext } from '../items.js';
import { fileIssue, parseYamlFile } from './yaml-kind.js';
import { takeWindmillFields, windmillLock } from '../wmill-fields.js';
import { schemaDifferences } from '../wmill-schema.js';
import { inferSchema, SchemaInferenceError } from '../../core/schema/index.js';
import { definedRunSettings, runSettingsFields, type RunSettingsInput } from '../../core/jobs/run-settings.js';
import { inferScriptSchema } from '../../core/dependencies/workspace-imports.js';
import type { GoTarget, Language } from '../../ports.js';
import type { RuntimeView } from '../../core/views/approval-views.js';
import type { ScriptListItem, ScriptView } from '../../core/views/item-views.js';
import { GoBuildError, prebuiltGoBinary, type GoBinaryUpload } from '../../runtime/go-prebuilt.js';

/**
 * Scripts: the content in its language's extension (`.ts` for the defaultTs runtime, `.bun.ts` /
 * `.deno.ts` for the other, `.native.ts`, `.py`, `.sh`, `.go`), beside `<path>.script.yaml` (summary,
 * description, run options) and `<path>.script.lock` (the lock, when the script has one). The input
 * schema is not kept on disk: the server infers it from `main`'s signature on every push.
 */

/** What scriptPayload reads of a script, whether the server answered it (ScriptView) or files describe it. */
interface ScriptFields {
  path: string;
  language: ScriptLanguage;
  content: string;
  summary: string;
  description: string;
  delete_after_use: boolean;
  timeout: number | null;
  lock?: string | null;
}

const META = '.script.yaml';
const LOCK = '.script.lock';

const metaSchema = z.strictObject({
  summary: z.string().default(''),
  description: z.string().default(''),
  delete_after_use: z.boolean().default(false),
  timeout: z.number().int().positive().nullish(),
  // Result cache, concurrency limit and priority, as the server takes them (docs/flows.md).
  ...runSettingsFields,
  // As Windmill's CLI writes them: the lock ('!inline <file>', the lock, or its lines) and the input schema.
  lock: z.unknown().optional(),
  schema: z.record(z.string(), z.unknown()).nullish(),
});

export function scriptPayload(s: ScriptFields & RunSettingsInput) {
  return {
    ...definedRunSettings(s),
    path: s.path,
    language: s.language,
    content: s.content,
    summary: s.summary ?? '',
    description: s.description ?? '',
    delete_after_use: s.delete_after_use ?? false,
    timeout: s.timeout ?? null,
    lock: s.lock || null,
  };
}

function render(payload: ReturnType<typeof scriptPayload>, ctx: SyncContext): Record<string, string> {
  const meta: Record<string, unknown> = { summary: payload.summary, description: payload.description };
  if (payload.delete_after_use) meta.delete_after_use = true;
  if (payload.timeout !== null) meta.timeout = payload.timeout;
  Object.assign(meta, definedRunSettings(payload));
  return {
    [payload.path + scriptExtension(payload.language, ctx.layout.defaultTs)]: payload.content,
    [payload.path + META]: toYaml(meta, ['summary', 'description']),
    ...(payload.lock ? { [payload.path + LOCK]: payload.lock } : {}),
  };
}

/** Windmill's CLI writes a run setting that is off as 0, '' or null: it is simply not set. */
function dropUnsetRunSettings(meta: Record<string, unknown>): void {
  for (const field of Object.keys(runSettingsFields)) if (meta[field] === 0 || meta[field] === '' || meta[field] === null) delete meta[field];
}

/** Inside a flow's or app's folder, files belong to that item. */
const insideFolderItem = (file: string) => FOLDER_ITEM.test(file);

export const scripts: KindHandler = {
  kind: 'script',
  enabled: (o) => !o.skipScripts,

  async fetchRemote(ctx) {
    const listed = await ctx.remote.get<ScriptListItem[]>('/scripts/list');
    return mapPool(listed, ctx.options.parallel ?? 1, async ({ path }) => {
      const s = await ctx.remote.get<ScriptView & RunSettingsInput>(`/scripts/get/p/${p(path)}`);
      const payload = scriptPayload(s);
      return { item: { kind: 'script' as const, id: path, payload, files: render(payload, ctx) }, meta: { hash: s.hash } };
    });
  },

  claim(file, ctx) {
    if (!(file.startsWith('u/') || file.startsWith('f/')) || insideFolderItem(file) || file.includes('.inline_script.')) return null;
    let base: string | null = null;
    if (file.endsWith(META)) base = file.slice(0, -META.length);
    else if (file.endsWith(LOCK)) base = file.slice(0, -LOCK.length);
    else {
      const found = languageOfFile(file, ctx.layout.defaultTs);
      if (!found) return null;
      base = found.base;
      // In a codebase, only files with metadata beside them are scripts; the rest are modules they import.
      if (codebaseOf(ctx, file) && !ctx.localFiles?.has(base + META)) return null;
    }
    return isItemPath(base) ? base : null;
  },

  async parse(id, files, ctx) {
    const contentFiles = Object.keys(files).filter((f) => !f.endsWith(META) && !f.endsWith(LOCK));
    if (contentFiles.length !== 1) {
      throw new ItemFileError(id + META, contentFiles.length === 0 ? 'no script file beside it (.ts, .py, .sh, ...)' : `more than one script file: ${contentFiles.join(', ')}`);
    }
    const contentFile = contentFiles[0];
    const { language } = languageOfFile(contentFile, ctx.layout.defaultTs)!;
    const metaText = files[id + META];
    const metaData = metaText === undefined ? {} : parseYamlFile(id + META, metaText);
    takeWindmillFields('script', id + META, metaData, ctx);
    dropUnsetRunSettings(metaData);
    const parsed = metaSchema.safeParse(metaData);
    if (!parsed.success) throw fileIssue(id + META, parsed.error);
    const { lock: metaLock, schema: storedSchema, ...meta } = parsed.data;
    const lock = windmillLock(metaLock, id + META, ctx) ?? files[id + LOCK] ?? null;
    const codebase = codebaseOf(ctx, contentFile);
    const content = codebase ? await bundleScript(ctx, codebase, contentFile) : files[contentFile];
    const payload = scriptPayload({ path: id, language, content, ...meta, timeout: meta.timeout ?? null, lock });
    const item: Item = { kind: 'script', id, payload, files, ...(codebase ? { bundledFrom: contentFile } : {}) };
    if (storedSchema && !codebase) {
      const differs = storedSchemaWins(id + META, language, files[contentFile], storedSchema, ctx);
      if (differs) item.storedSchema = storedSchema;
    }
    // No .script.yaml: the defaults, which is what a push sends (a .script.lock left out is no lock).
    if (metaText === undefined) item.defaults = { [id + META]: render(payload, ctx)[id + META] };
    return item;
  },

  async push(item, meta, ctx) {
    await ctx.remote.post('/scripts/create', {
      ...item.payload,
      ...(item.payload.language === 'go' ? await goBinaryFor(item, ctx.remote) : {}),
      // A bundle has lost main's parameter types: the schema comes from the source entry.
      ...(item.bundledFrom ? { schema: sourceSchema(item) } : {}),
      // A Windmill folder's stored schema, where svc would infer another one.
      ...(item.storedSchema ? { schema: item.storedSchema } : {}),
      parent_hash: (meta?.hash as string | undefined) ?? null,
      ...(ctx.message ? { deployment_message: ctx.message } : {}),
    });
  },

  async remove(id, ctx) {
    await ctx.remote.post(`/scripts/delete/p/${p(id)}`, {});
  },
};

/**
 * Whether a `.script.yaml`'s stored schema must be sent because svc infers another one from
 * `main`; the push (and --dry-run) says so, naming what differs.
 */
function storedSchemaWins(metaFile: string, language: ScriptLanguage, source: string, stored: Record<string, unknown>, ctx: SyncContext): boolean {
  let inferred: Record<string, unknown>;
  try {
    inferred = inferScriptSchema(language as Language, source) as unknown as Record<string, unknown>;
  } catch (e) {
    if (!(e instanceof SchemaInferenceError)) throw e;
    ctx.warn(`${metaFile}: schema: svc cannot read main's signature (${e.message}); the stored schema is used`);
    return true;
  }
  const differences = schemaDifferences(stored, inferred);
  if (differences.length === 0) return false;
  ctx.warn(`${metaFile}: schema: svc infers it differently (${differences.join('; ')}); the stored schema is used`);
  return true;
}

/** The input schema of a codebase script, read from its source entry; a source it cannot read is a file error. */
export function sourceSchema(item: Item): unknown {
  const source = item.bundledFrom!;
  try {
    return inferSchema(item.payload.language as Language, item.files[source]);
  } catch (e) {
    if (e instanceof SchemaInferenceError) throw new ItemFileError(source, e.message);
    throw e;
  }
}

/** Scripts that locksRequired would refuse: every language but Bash and Go (standard library and svc, or the instance's proxy) resolves dependencies. */
export function scriptsWithoutLock(items: Item[]): string[] {
  return items.filter((i) => i.kind === 'script' && i.payload.language !== 'bash' && i.payload.language !== 'go' && !i.payload.lock).map((i) => i.id);
}

/** The server's Go target (GET /api/runtime), asked once per server: null when it builds Go itself. */
const goTargets = new WeakMap<Remote, Promise<GoTarget | null>>();

/**
 * A server that builds no Go (the AWS shell) takes Go scripts with a binary built here, for its
 * sandbox's platform; one that builds them itself gets the source alone.
 */
async function goBinaryFor(item: Item, remote: Remote): Promise<{ go_binary?: GoBinaryUpload }> {
  let target = goTargets.get(remote);
  if (!target) {
    target = remote.get<Partial<RuntimeView> | null>('/api/runtime').then((runtime) => runtime?.go_target ?? null);
    goTargets.set(remote, target);
  }
  const goTarget = await target;
  if (!goTarget) return {};
  try {
    return { go_binary: await prebuiltGoBinary(item.payload.content as string, goTarget) };
  } catch (e) {
    if (e instanceof GoBuildError) throw new ItemFileError(Object.keys(item.files).find((f) => f.endsWith('.go')) ?? item.id, e.message);
    throw e;
  }
}
