import { z } from 'zod';
import type { FolderView, GroupView, ResourceListItem, ResourceTypeView, ResourceView, VariableView, VariableWithValue } from '../../core/views/item-views.js';
import type { MemberView } from '../../core/views/identity-views.js';
import type { SyncKeyView, WorkspaceSettingsView } from '../../core/views/settings-views.js';
import { isItemPath, isSpecific, parseTypedFile, typedFile, type Layout } from '../layout.js';
import { mapPool } from '../pool.js';
import { p } from '../remote.js';
import { yamlKind } from './yaml-kind.js';
import type { KindHandler, SyncContext } from '../items.js';

/** The kinds that are one YAML document each: everything but scripts and flows. */

const parallelOf = (ctx: SyncContext) => ctx.options.parallel ?? 1;

/**
 * A path-addressed document (`<path>.<type>.yaml`), stored in the workspace-specific file when the
 * path matches the selected workspace's specificItems; other workspaces' files are not ours.
 */
export function pathFile(type: string, specificType: 'variables' | 'resources' | 'triggers') {
  return {
    file: (id: string, ctx: SyncContext) => typedFile(ctx.layout, id, type, isSpecific(ctx.layout, specificType, id)),
    claim(file: string, ctx: SyncContext): string | null {
      const parsed = parseTypedFile(ctx.layout, file, type);
      if (!parsed || !isItemPath(parsed.base)) return null;
      return claimSpecific(ctx.layout, specificType, parsed.base, parsed.workspace);
    },
  };
}

function claimSpecific(layout: Layout, type: 'variables' | 'resources' | 'triggers' | 'folders', id: string, workspace: string | null): string | null {
  const specific = isSpecific(layout, type, id);
  if (workspace === null) return specific ? null : id;
  return workspace === layout.workspaceName && specific ? id : null;
}

const description = z.string().default('');

export const resources: KindHandler = yamlKind({
  kind: 'resource',
  enabled: (o) => !o.skipResources,
  async list(ctx) {
    const listed = await ctx.remote.get<ResourceListItem[]>('/resources/list');
    return mapPool(listed, parallelOf(ctx), async ({ path }) => {
      const r = await ctx.remote.get<ResourceView>(`/resources/get/${p(path)}`);
      return { id: path, owner: r.created_by, payload: { path, resource_type: r.resource_type, value: r.value ?? null, description: r.description } };
    });
  },
  ...pathFile('resource', 'resources'),
  schema: z.strictObject({ description, resource_type: z.string().min(1), value: z.unknown() }),
  order: ['description', 'resource_type', 'value'],
  toFile: ({ path: _p, ...rest }) => rest,
  fromFile: (id, d) => ({ path: id, description: d.description as string, resource_type: d.resource_type as string, value: d.value ?? null }),
  create: async (r, ctx) => void (await ctx.remote.post('/resources/create', r)),
  update: async ({ path, ...r }, ctx) => void (await ctx.remote.post(`/resources/update/${p(path as string)}`, r)),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/resources/delete/${p(id)}`)),
});

/**
 * Variables. A secret is synced only with `skipSecrets: false`; its file then holds
 * `encrypted_value` — sealed by the server under the workspace's sync key, so the file is safe to
 * commit — or, with `plainSecrets: true`, the plain `value`. A push accepts either form.
 */
export const variables: KindHandler = yamlKind({
  kind: 'variable',
  enabled: (o) => !o.skipVariables,
  async list(ctx) {
    const listed = await ctx.remote.get<VariableView[]>('/variables/list');
    const wanted = listed.filter((v) => !v.is_secret || !ctx.options.skipSecrets);
    return mapPool(wanted, parallelOf(ctx), async (v) => {
      const base = { path: v.path, description: v.description, is_secret: v.is_secret };
      if (!v.is_secret) return { id: v.path, owner: v.created_by, payload: { ...base, value: v.value ?? '' } };
      if (ctx.options.plainSecrets) {
        const plain = await ctx.remote.get<VariableWithValue>(`/variables/get/${p(v.path)}`);
        return { id: v.path, owner: v.created_by, payload: { ...base, value: plain.value } };
      }
      const sealed = await ctx.remote.get<VariableWithValue>(`/variables/get/${p(v.path)}?encrypted=true`);
      return { id: v.path, owner: v.created_by, payload: { ...base, encrypted_value: sealed.value } };
    });
  },
  ...pathFile('variable', 'variables'),
  schema: z
    .strictObject({ description, is_secret: z.boolean().default(false), value: z.string().optional(), encrypted_value: z.string().optional() })
    .refine((v) => (v.value === undefined) !== (v.encrypted_value === undefined), 'exactly one of value and encrypted_value is required')
    .refine((v) => v.encrypted_value === undefined || v.is_secret, 'encrypted_value is only for secrets (is_secret: true)'),
  order: ['description', 'is_secret', 'value', 'encrypted_value'],
  toFile: ({ path: _p, ...rest }) => rest,
  fromFile: (id, d) => ({ path: id, description: d.description as string, is_secret: d.is_secret as boolean, ...(d.encrypted_value === undefined ? { value: d.value } : { encrypted_value: d.encrypted_value }) }),
  create: async (v, ctx) => void (await ctx.remote.post('/variables/create', variableBody(v))),
  update: async (v, ctx) => void (await ctx.remote.post(`/variables/update/${p(v.path as string)}`, variableBody(v))),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/variables/delete/${p(id)}`)),
});

function variableBody(v: Record<string, unknown>) {
  const { encrypted_value, value, ...rest } = v;
  return encrypted_value === undefined ? { ...rest, value } : { ...rest, value: encrypted_value, encrypted: true };
}

/** Resource types of the workspace (the built-in ones ship with the server and are not synced). */
export const resourceTypes: KindHandler = yamlKind({
  kind: 'resource_type',
  enabled: (o) => !o.skipResourceTypes,
  async list(ctx) {
    const types = await ctx.remote.get<ResourceTypeView[]>('/resources/type/list');
    return types.filter((t) => !t.builtin).map((t) => ({ id: t.name, payload: { name: t.name, schema: t.schema, description: t.description } }));
  },
  file: (id) => `${id}.resource-type.yaml`,
  claim: (file) => (/^[a-z][a-z0-9_]*\.resource-type\.yaml$/.test(file) ? file.slice(0, -'.resource-type.yaml'.length) : null),
  schema: z.strictObject({ description, schema: z.record(z.string(), z.unknown()) }),
  order: ['description', 'schema'],
  toFile: ({ name: _n, ...rest }) => rest,
  fromFile: (id, d) => ({ name: id, description: d.description as string, schema: d.schema }),
  create: async (t, ctx) => void (await ctx.remote.post('/resources/type/create', t)),
  update: async ({ name, ...t }, ctx) => void (await ctx.remote.post(`/resources/type/update/${encodeURIComponent(name as string)}`, t)),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/resources/type/delete/${encodeURIComponent(id)}`)),
});

/** Folders: `f/<name>/folder.meta.yaml` (`folder.<workspace>.meta.yaml` when workspace-specific). */
export const folders: KindHandler = yamlKind({
  kind: 'folder',
  enabled: (o) => !o.skipFolders,
  async list(ctx) {
    const list = await ctx.remote.get<FolderView[]>('/folders/list');
    return list.map((f) => ({ id: f.name, owner: f.created_by, payload: { name: f.name, summary: f.summary, owners: f.owners, extra_perms: f.extra_perms } }));
  },
  file: (id, ctx) => typedFile(ctx.layout, `f/${id}/folder`, 'meta', isSpecific(ctx.layout, 'folders', id)),
  claim(file, ctx) {
    const m = /^f\/([^/]+)\/folder(?:\.([^/.]+))?\.meta\.yaml$/.exec(file);
    if (!m) return null;
    if (m[2] !== undefined && !ctx.layout.workspaceNames.includes(m[2])) return null;
    return claimSpecific(ctx.layout, 'folders', m[1], m[2] ?? null);
  },
  schema: z.strictObject({ summary: z.string().default(''), owners: z.array(z.string()).default([]), extra_perms: z.record(z.string(), z.boolean()).default({}) }),
  order: ['summary', 'owners', 'extra_perms'],
  toFile: ({ name: _n, ...rest }) => rest,
  fromFile: (id, d) => ({ name: id, summary: d.summary as string, owners: d.owners, extra_perms: d.extra_perms }),
  create: async (f, ctx) => void (await ctx.remote.post('/folders/create', f)),
  update: async ({ name, ...f }, ctx) => void (await ctx.remote.post(`/folders/update/${encodeURIComponent(name as string)}`, f)),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/folders/delete/${encodeURIComponent(id)}`)),
});

/** Groups (includeGroups): `groups/<name>.group.yaml` with summary and members. */
export const groups: KindHandler = yamlKind({
  kind: 'group',
  enabled: (o) => o.includeGroups === true,
  async list(ctx) {
    const list = await ctx.remote.get<GroupView[]>('/groups/list');
    return list.map((g) => ({ id: g.name, payload: { name: g.name, summary: g.summary, members: [...g.members].sort() } }));
  },
  file: (id) => `groups/${id}.group.yaml`,
  claim: (file) => /^groups\/([^/]+)\.group\.yaml$/.exec(file)?.[1] ?? null,
  schema: z.strictObject({ summary: z.string().default(''), members: z.array(z.string()).default([]) }),
  order: ['summary', 'members'],
  toFile: ({ name: _n, ...rest }) => rest,
  fromFile: (id, d) => ({ name: id, summary: d.summary as string, members: [...(d.members as string[])].sort() }),
  // A group takes several requests; a failure undoes the ones made, so a push of it is all or nothing.
  async create(g, ctx) {
    const name = encodeURIComponent(g.name as string);
    await ctx.remote.post('/groups/create', { name: g.name, summary: g.summary });
    try {
      for (const username of g.members as string[]) await ctx.remote.post(`/groups/adduser/${name}`, { username });
    } catch (e) {
      await undo(e, () => ctx.remote.delete(`/groups/delete/${name}`));
    }
  },
  async update(g, ctx) {
    const name = encodeURIComponent(g.name as string);
    const current = await ctx.remote.get<GroupView>(`/groups/get/${name}`);
    // The API changes a group's members, not its summary: say so rather than drop the edit.
    if (current.summary !== g.summary) throw new Error(`the summary of group ${g.name} cannot be changed through the API; only its members`);
    const wanted = g.members as string[];
    const done: [string, string][] = [];
    try {
      for (const username of wanted.filter((m) => !current.members.includes(m))) {
        await ctx.remote.post(`/groups/adduser/${name}`, { username });
        done.push(['removeuser', username]);
      }
      for (const username of current.members.filter((m) => !wanted.includes(m))) {
        await ctx.remote.post(`/groups/removeuser/${name}`, { username });
        done.push(['adduser', username]);
      }
    } catch (e) {
      await undo(e, async () => {
        for (const [op, username] of done.reverse()) await ctx.remote.post(`/groups/${op}/${name}`, { username });
      });
    }
  },
  remove: async (id, ctx) => void (await ctx.remote.delete(`/groups/delete/${encodeURIComponent(id)}`)),
});

/** Undoes what a failed multi-request push did, then fails with the first error (and says if the undo failed too). */
async function undo(error: unknown, revert: () => Promise<unknown>): Promise<never> {
  const message = error instanceof Error ? error.message : String(error);
  try {
    await revert();
  } catch (e) {
    throw new Error(`${message}; undoing the rest failed too: ${e instanceof Error ? e.message : String(e)}`);
  }
  // An error that carries an exit code (server unreachable) keeps it.
  if (error instanceof Error && 'exitCode' in error) throw error;
  throw new Error(`${message} (rolled back: nothing of it was applied)`);
}

/** Workspace members and their roles (includeUsers): `users/<username>.user.yaml`. */
export const users: KindHandler = yamlKind({
  kind: 'user',
  enabled: (o) => o.includeUsers === true,
  async list(ctx) {
    const list = await ctx.remote.get<MemberView[]>('/users/list');
    return list.map((m) => ({ id: m.username, payload: { username: m.username, role: m.role } }));
  },
  file: (id) => `users/${id}.user.yaml`,
  claim: (file) => /^users\/([^/]+)\.user\.yaml$/.exec(file)?.[1] ?? null,
  schema: z.strictObject({ role: z.enum(['admin', 'developer', 'operator']) }),
  order: ['role'],
  toFile: ({ username: _u, ...rest }) => rest,
  fromFile: (id, d) => ({ username: id, role: d.role }),
  create: async (m, ctx) => void (await ctx.remote.post('/workspaces/add_user', m)),
  update: async ({ username, role }, ctx) => void (await ctx.remote.post(`/users/update/${encodeURIComponent(username as string)}`, { role })),
  remove: async (id, ctx) => void (await ctx.remote.post('/workspaces/remove_user', { username: id })),
});

/** Workspace settings (includeSettings): `settings.yaml`, or `settings.<workspace>.yaml` with specificItems.settings. */
export const settings: KindHandler = yamlKind({
  kind: 'settings',
  enabled: (o) => o.includeSettings === true,
  async list(ctx) {
    const ws = await ctx.remote.get<WorkspaceSettingsView>('/workspaces/get_settings');
    return [{ id: 'settings', payload: { object_storage_enabled: ws.object_storage_enabled } }];
  },
  file: (_id, ctx) => typedFile(ctx.layout, 'settings', '', ctx.layout.specific.settings === true && ctx.layout.workspaceName !== null),
  claim(file, ctx) {
    const specific = ctx.layout.specific.settings === true && ctx.layout.workspaceName !== null;
    return file === (specific ? `settings.${ctx.layout.workspaceName}.yaml` : 'settings.yaml') ? 'settings' : null;
  },
  schema: z.strictObject({ object_storage_enabled: z.boolean() }),
  order: ['object_storage_enabled'],
  toFile: (s) => s,
  fromFile: (_id, d) => ({ object_storage_enabled: d.object_storage_enabled }),
  create: async (s, ctx) => void (await ctx.remote.post('/workspaces/edit_object_storage', { enabled: s.object_storage_enabled })),
  update: async (s, ctx) => void (await ctx.remote.post('/workspaces/edit_object_storage', { enabled: s.object_storage_enabled })),
  remove: async () => {
    // Settings always exist; deleting the file stops syncing them, it does not reset the workspace.
  },
});

/**
 * The workspace's sync key (includeKey): the key pulled secrets are encrypted with, so that a push
 * to another workspace or instance can decrypt them. Pushed before any secret; never deleted.
 */
export const encryptionKey: KindHandler = yamlKind({
  kind: 'encryption_key',
  enabled: (o) => o.includeKey === true,
  async list(ctx) {
    const { key } = await ctx.remote.get<SyncKeyView>('/workspaces/encryption_key');
    return [{ id: 'encryption_key', payload: { key } }];
  },
  file: () => 'encryption_key.yaml',
  claim: (file) => (file === 'encryption_key.yaml' ? 'encryption_key' : null),
  schema: z.strictObject({ key: z.string().min(1) }),
  order: ['key'],
  toFile: (k) => k,
  fromFile: (_id, d) => ({ key: d.key }),
  create: async (k, ctx) => void (await ctx.remote.post('/workspaces/encryption_key', k)),
  update: async (k, ctx) => void (await ctx.remote.post('/workspaces/encryption_key', k)),
  remove: async () => {
    // A workspace always has a key; removing the file only stops syncing it.
  },
});
