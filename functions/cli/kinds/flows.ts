import { posix } from 'node:path';
import type { FlowListItem, FlowView } from '../../core/views/item-views.js';
import { z } from 'zod';
import { flowModules, flowValue, type FlowModule } from '../../core/flows/definition.js';
import { FOLDER_ITEM, folderSuffix, isItemPath, languageOfFile, scriptExtension, toYaml, type ScriptLanguage } from '../layout.js';
import { mapPool } from '../pool.js';
import { p } from '../remote.js';
import { ItemFileError, type KindHandler, type SyncContext } from '../items.js';
import { fileIssue, parseYamlFile } from './yaml-kind.js';
import { takeWindmillFields } from '../wmill-fields.js';

/**
 * Flows: a folder `<path>.flow/` (`<path>__flow/` with nonDottedPaths) holding `flow.yaml` (summary,
 * description, schema, value) and each inline script as `<module id>.inline_script.<ext>`, which
 * `flow.yaml` refers to as `content: "!inline <file>"`.
 */

const FLOW_FILE = 'flow.yaml';
const INLINE = '!inline ';

const flowFile = z.strictObject({
  summary: z.string().default(''),
  description: z.string().default(''),
  schema: z.record(z.string(), z.unknown()).nullish(),
  value: z.record(z.string(), z.unknown()),
});

interface FlowPayload extends Record<string, unknown> {
  path: string;
  summary: string;
  description: string;
  schema: Record<string, unknown> | null;
  value: { modules: FlowModule[] };
}

function flowPayload(f: { path: string; summary?: string; description?: string; schema?: unknown; value: unknown }): FlowPayload {
  return { path: f.path, summary: f.summary ?? '', description: f.description ?? '', schema: (f.schema as Record<string, unknown> | null) ?? null, value: f.value as FlowPayload['value'] };
}

// Every module with code of its own, the failure module's too: each inline script is a file beside flow.yaml.
const modulesOf = (value: { modules?: unknown; failure_module?: unknown }) =>
  Array.isArray(value.modules) ? flowModules({ modules: value.modules as FlowModule[], failure_module: value.failure_module as FlowModule | undefined }) : [];

function render(payload: FlowPayload, ctx: SyncContext): Record<string, string> {
  const dir = payload.path + folderSuffix(ctx.layout, 'flow');
  const value = structuredClone(payload.value);
  const files: Record<string, string> = {};
  for (const m of modulesOf(value)) {
    if (m.value.type !== 'rawscript') continue;
    const name = `${m.id}.inline_script${scriptExtension(m.value.language as ScriptLanguage, ctx.layout.defaultTs)}`;
    files[`${dir}/${name}`] = m.value.content;
    m.value.content = INLINE + name;
  }
  const yaml = toYaml({ summary: payload.summary, description: payload.description, schema: payload.schema ?? undefined, value }, ['summary', 'description', 'schema', 'value']);
  return { [`${dir}/${FLOW_FILE}`]: yaml, ...files };
}

export const flows: KindHandler = {
  kind: 'flow',
  enabled: (o) => !o.skipFlows,

  async fetchRemote(ctx) {
    const listed = await ctx.remote.get<FlowListItem[]>('/flows/list');
    return mapPool(listed, ctx.options.parallel ?? 1, async ({ path }) => {
      const payload = flowPayload(await ctx.remote.get<FlowView>(`/flows/get/${p(path)}`));
      return { item: { kind: 'flow' as const, id: path, payload, files: render(payload, ctx) }, meta: {} };
    });
  },

  claim(file) {
    const m = FOLDER_ITEM.exec(file);
    return m && m[2] === 'flow' && isItemPath(m[1]) ? m[1] : null;
  },

  async parse(id, files, ctx) {
    const yamlPath = Object.keys(files).find((f) => posix.basename(f) === FLOW_FILE && posix.dirname(f).slice(id.length).match(/^(\.|__)flow$/));
    if (!yamlPath) throw new ItemFileError(`${id}${folderSuffix(ctx.layout, 'flow')}/${FLOW_FILE}`, 'missing: a flow folder needs a flow.yaml');
    const data = parseYamlFile(yamlPath, files[yamlPath]);
    takeWindmillFields('flow', yamlPath, data, ctx);
    const parsed = flowFile.safeParse(data);
    if (!parsed.success) throw fileIssue(yamlPath, parsed.error);
    const dir = posix.dirname(yamlPath);
    const value = structuredClone(parsed.data.value) as FlowPayload['value'];
    for (const m of modulesOf(value)) {
      // Windmill's CLI writes an inline step's lock beside it; svc resolves the step's packages itself.
      const step = m.value as { lock?: unknown } | undefined;
      if (step && 'lock' in step) {
        if (step.lock) ctx.skip?.(yamlPath, `module ${m.id}: lock: svc resolves an inline step's packages itself when the flow is created; left out`);
        delete step.lock;
      }
      if (m.value?.type !== 'rawscript' || typeof m.value.content !== 'string' || !m.value.content.startsWith(INLINE)) continue;
      const name = m.value.content.slice(INLINE.length).trim();
      const text = files[`${dir}/${name}`];
      if (text === undefined) throw new ItemFileError(yamlPath, `module ${m.id}: ${name} is missing`);
      m.value.content = text;
      // An inline file's extension says its language when flow.yaml leaves it out.
      if (!m.value.language) m.value.language = languageOfFile(name, ctx.layout.defaultTs)?.language ?? m.value.language;
    }
    // The server's own reading of a definition (defaults filled in), so that what a push stores
    // compares equal to the file it came from.
    const normalized = flowValue.safeParse(value);
    if (!normalized.success) throw fileIssue(yamlPath, new z.ZodError(normalized.error.issues.map((i) => ({ ...i, path: ['value', ...i.path] }))));
    return { kind: 'flow', id, payload: flowPayload({ path: id, ...parsed.data, value: normalized.data }), files };
  },

  async push(item, meta, ctx) {
    const { path, ...body } = item.payload as FlowPayload;
    const withMessage = { ...body, ...(ctx.message ? { deployment_message: ctx.message } : {}) };
    if (meta) await ctx.remote.post(`/flows/update/${p(path)}`, withMessage);
    else await ctx.remote.post('/flows/create', { path, ...withMessage });
  },

  async remove(id, ctx) {
    await ctx.remote.delete(`/flows/delete/${p(id)}`);
  },
};
