import { Hono } from 'hono';
import type { CoreDeps } from '../../core/deps.js';
import { listFolders } from '../../core/identity/folders.js';
import { listGroups } from '../../core/identity/groups.js';
import { listMembers } from '../../core/identity/members.js';
import { ROLES, type Folder } from '../../core/identity/permissions.js';
import { html, type Markup } from '../html.js';
import { apiButton, apiForm } from './holding-forms.js';
import { holdingRoute, table, type HoldingContext } from './holding-page.js';

/**
 * Who may do what in a workspace: its folders with their owners and extra rights, its groups and
 * their members, its members and their roles. Each listed and changed through the core with the
 * person's rights, as the API does.
 */
export function peoplePageRoutes(deps: CoreDeps) {
  const r = new Hono();
  holdingRoute(r, deps, 'folders', 'Folders', foldersBody);
  holdingRoute(r, deps, 'groups', 'Groups', groupsBody);
  holdingRoute(r, deps, 'members', 'Members', membersBody);
  return r;
}

function rightsOf(folder: Folder): string {
  const extra = Object.entries(folder.extra_perms).map(([who, write]) => `${who} ${write ? 'writes' : 'reads'}`);
  return extra.length ? extra.join(', ') : '';
}

async function foldersBody({ deps, rights }: HoldingContext): Promise<Markup> {
  const folders = await listFolders(deps, rights);
  const rows = folders.map((f, i) => {
    const canWrite = rights.can('folders', 'write', f.name);
    const edit = canWrite
      ? html`<details><summary>Change rights</summary>${apiForm(`folder-${i}`, { action: 'updateFolder', target: f.name }, `Change folder ${f.name}`, 'Save', [
          { name: 'owners', label: 'Owners (u/<user> or g/<group>, comma-separated)', kind: 'list', value: f.owners.join(', ') },
          { name: 'extra_perms', label: 'Extra rights (JSON: true writes, false reads)', kind: 'json', value: JSON.stringify(f.extra_perms) },
        ])}</details>${apiButton('Delete', { action: 'deleteFolder', target: f.name }, { danger: true, label: `Delete folder ${f.name}` })}`
      : '';
    return html`<tr><td>${f.name}${f.summary ? html`<div class="muted">${f.summary}</div>` : ''}</td><td>${f.owners.join(', ')}</td><td>${rightsOf(f) || html`<span class="muted">none</span>`}</td><td>${edit}</td></tr>`;
  });
  const create = rights.can('folders', 'write')
    ? html`<h2>New folder</h2>${apiForm('new-folder', { action: 'createFolder' }, 'Create folder', 'Create folder', [
        { name: 'name', label: 'Name', required: true, placeholder: 'ops' },
        { name: 'summary', label: 'Summary' },
        { name: 'extra_perms', label: 'Extra rights (JSON: {"u/alice": true, "g/all": false})', kind: 'json', value: '{}' },
      ])}`
    : '';
  return html`<p>Items at <code>f/&lt;folder&gt;/...</code> follow their folder: its owners manage it, and each extra right lets a user (<code>u/…</code>) or group (<code>g/…</code>) read or write its items. Admins see every folder.</p>
${table('Folders', ['Folder', 'Owners', 'Extra rights', ''], rows, 'No folders yet.')}${create}`;
}

async function groupsBody({ deps, rights }: HoldingContext): Promise<Markup> {
  const groups = await listGroups(deps, rights);
  const rows = groups.map((g, i) => {
    const canWrite = rights.can('groups', 'write', g.name);
    const members = g.members.map(
      (m) => html`<span>${m}${canWrite ? html` ${apiButton('Remove', { action: 'removeGroupMember', target: g.name, value: m }, { danger: true, label: `Remove ${m} from group ${g.name}` })}` : ''}</span> `,
    );
    const edit = canWrite
      ? html`${apiForm(`group-${i}`, { action: 'addGroupMember', target: g.name }, `Add to group ${g.name}`, 'Add', [{ name: 'username', label: 'Username', required: true }], true)}${apiButton('Delete group', { action: 'deleteGroup', target: g.name }, { danger: true, label: `Delete group ${g.name}` })}`
      : '';
    return html`<tr><td>${g.name}${g.summary ? html`<div class="muted">${g.summary}</div>` : ''}</td><td>${members.length ? members : html`<span class="muted">no one</span>`}</td><td>${edit}</td></tr>`;
  });
  const create = rights.can('groups', 'write')
    ? html`<h2>New group</h2>${apiForm('new-group', { action: 'createGroup' }, 'Create group', 'Create group', [
        { name: 'name', label: 'Name', required: true, placeholder: 'oncall' },
        { name: 'summary', label: 'Summary' },
      ])}`
    : '';
  return html`<p>Groups (<code>g/&lt;name&gt;</code>) can own folders and hold rights on them; every member is in <code>g/all</code>.</p>
${table('Groups', ['Group', 'Members', ''], rows, 'No groups yet.')}${create}`;
}

async function membersBody({ deps, rights }: HoldingContext): Promise<Markup> {
  const members = await listMembers(deps, rights);
  const canManage = rights.can('workspaces', 'write');
  const rows = members.map((m, i) => {
    const manage = canManage
      ? html`${apiForm(`member-${i}`, { action: 'updateMember', target: m.username }, `Change role of ${m.username}`, 'Change role', [{ name: 'role', label: 'Role', kind: 'select', options: ROLES, value: m.role }], true)}${apiButton('Remove', { action: 'removeMember', target: m.username }, { danger: true, label: `Remove ${m.username} from the workspace` })}`
      : '';
    return html`<tr><td>${m.username}</td><td>${m.role}</td><td class="wide">${m.added_by}</td><td>${manage}</td></tr>`;
  });
  const add = canManage
    ? html`<h2>Add a member</h2>${apiForm('new-member', { action: 'addMember' }, 'Add member', 'Add member', [
        { name: 'username', label: 'Username (an existing user)', required: true },
        { name: 'role', label: 'Role', kind: 'select', options: ROLES, value: 'developer' },
      ])}`
    : '';
  return html`<p>Admins do everything in the workspace; developers write what they own or may write; operators read and run what they have rights on and change nothing.</p>
${table('Members', ['User', 'Role', '~Added by', ''], rows, 'No members.')}${add}`;
}
