import { posix } from 'node:path';
import { z } from 'zod';
import type { AppListItem, AppView } from '../../core/views/item-views.js';
import { FOLDER_ITEM, folderSuffix, isItemPath, toYaml } from '../layout.js';
import { mapPool } from '../pool.js';
import { p } from '../remote.js';
import { ItemFileError, type ItemKind, type KindHandler, type SyncContext } from '../items.js';
import { fileIssue, parseYamlFile } from './yaml-kind.js';
import { reportWindmillAppParts, takeWindmillFields } from '../wmill-fields.js';

/**
 * Apps: a folder `<path>.app/` (`<path>__app/` with nonDottedPaths) holding `app.yaml` with the
 * app's summary, its definition (`value`, the app builder's JSON) and its `policy`, as the API
 * stores them (core/workspace/apps.ts). Skipped with `skipApps`.
 */

const APP_FILE = 'app.yaml';
const KIND: ItemKind = 'app';

const appFile = z.strictObject({
  summary: z.string().default(''),
  value: z.record(z.string(), z.unknown()),
  policy: z.record(z.string(), z.unknown()).nullish(),
});

interface AppPayload extends Record<string, unknown> {
  path: string;
  summary: string;
  value: Record<string, unknown>;
  policy: Record<string, unknown> | null;
}

function appPayload(a: { path: string; summary?: string; value: unknown; policy?: unknown }): AppPayload {
  return { path: a.path, summary: a.summary ?? '', value: a.value as Record<string, unknown>, policy: (a.policy as Record<string, unknown> | null | undefined) ?? null };
}

export function renderApp(payload: AppPayload, ctx: Pick<SyncContext, 'layout'>): Record<string, string> {
  const file = `${payload.path}${folderSuffix(ctx.layout, 'app')}/${APP_FILE}`;
  return { [file]: toYaml({ summary: payload.summary, value: payload.value, policy: payload.policy ?? undefined }, ['summary', 'value', 'policy']) };
}

export const apps: KindHandler = {
  kind: KIND,
  enabled: (o) => !o.skipApps,

  async fetchRemote(ctx) {
    const listed = await ctx.remote.get<AppListItem[]>('/apps/list');
    return mapPool(listed, ctx.options.parallel ?? 1, async ({ path }) => {
      const payload = appPayload(await ctx.remote.get<AppView>(`/apps/get/p/${p(path)}`));
      return { item: { kind: KIND, id: path, payload, files: renderApp(payload, ctx) }, meta: {} };
    });
  },

  claim(file) {
    const m = FOLDER_ITEM.exec(file);
    return m && m[2] === 'app' && isItemPath(m[1]) ? m[1] : null;
  },

  async parse(id, files, ctx) {
    const yamlPath = Object.keys(files).find((f) => posix.basename(f) === APP_FILE && posix.dirname(f).slice(id.length).match(/^(\.|__)app$/));
    if (!yamlPath) throw new ItemFileError(`${id}${folderSuffix(ctx.layout, 'app')}/${APP_FILE}`, 'missing: an app folder needs an app.yaml');
    const data = parseYamlFile(yamlPath, files[yamlPath]);
    takeWindmillFields('app', yamlPath, data, ctx);
    const parsed = appFile.safeParse(data);
    if (!parsed.success) throw fileIssue(yamlPath, parsed.error);
    reportWindmillAppParts(yamlPath, Object.keys(files), parsed.data.value, ctx);
    return { kind: KIND, id, payload: appPayload({ path: id, ...parsed.data }), files };
  },

  async push(item, meta, ctx) {
    const { path, ...body } = item.payload as AppPayload;
    const withMessage = { ...body, ...(ctx.message ? { deployment_message: ctx.message } : {}) };
    if (meta) await ctx.remote.post(`/apps/update/${p(path)}`, withMessage);
    else await ctx.remote.post('/apps/create', { path, ...withMessage });
  },

  async remove(id, ctx) {
    await ctx.remote.delete(`/apps/delete/${p(id)}`);
  },
};
