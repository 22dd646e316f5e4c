import * as api from './console-api.js';
import { collectFields } from './form-fields.js';

/**
 * What the holdings pages' forms and buttons do (the pages for schedules, variables, connections,
 * routes, folders, groups and members; console/holding-forms.ts renders them, naming the action in
 * `data-api`): each action builds its request as the API's schema types it, makes the call through
 * the typed client, and says what the API answered. The server's markup names these actions by
 * their keys' types, so a page cannot name one the bundle lacks.
 */

/** A submitted form's values (form-fields.ts reads them: JSON parsed, checkboxes as booleans, empty optional fields left out). */
export class FormValues {
  private readonly values: Record<string, unknown>;

  constructor(form: HTMLFormElement) {
    this.values = collectFields(form);
  }

  /** A required field (the browser does not submit the form while it is empty). */
  text(name: string): string {
    return String(this.values[name] ?? '');
  }

  optional(name: string): string | undefined {
    const value = this.values[name];
    return value === undefined ? undefined : String(value);
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** A comma-separated list. */
  list(name: string): string[] | undefined {
    return this.optional(name)
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  /**
   * A JSON field or a select's option, sent as the request's type names it: the API checks it with
   * that schema and its refusal is what the page shows.
   */
  checkedByApi<T>(name: string): T {
    return this.values[name] as T;
  }
}

/** A form's action: the call its values make, with the item it is about (`data-target`); answers what was done. */
type FormAction = (form: FormValues, target: string) => Promise<string>;
/** A button's action: `target` is the item, `value` what the button sets (`data-value`). */
type ButtonAction = (target: string, value: string) => Promise<string>;

export const FORM_ACTIONS = {
  createSchedule: async (f) => {
    const s = await api.createSchedule({
      path: f.text('path'),
      schedule: f.text('schedule'),
      timezone: f.optional('timezone'),
      script_path: f.text('script_path'),
      is_flow: f.flag('is_flow'),
      args: f.checkedByApi('args'),
      summary: f.optional('summary'),
    });
    return `schedule ${s.path} created, ${s.enabled ? 'enabled' : 'disabled'}`;
  },
  createVariable: async (f) => {
    const path = await api.createVariable({ path: f.text('path'), value: f.text('value'), is_secret: f.flag('is_secret'), description: f.optional('description') });
    return `variable ${path} created`;
  },
  updateVariable: async (f, path) => {
    const v = await api.updateVariable(path, { value: f.text('value') });
    return `variable ${v.path} set${v.is_secret ? ' (secret)' : ''}`;
  },
  createResource: async (f) => {
    const path = await api.createResource({ path: f.text('path'), resource_type: f.text('resource_type'), value: f.checkedByApi('value'), description: f.optional('description') });
    return `connection ${path} created`;
  },
  createResourceType: async (f) => {
    const t = await api.createResourceType({ name: f.text('name'), schema: f.checkedByApi('schema'), description: f.optional('description') });
    return `connection type ${t.name} created`;
  },
  createRoute: async (f) => {
    const r = await api.createRoute({
      path: f.text('path'),
      http_method: f.text('http_method'),
      route_path: f.text('route_path'),
      script_path: f.text('script_path'),
      is_flow: f.flag('is_flow'),
      is_async: f.flag('is_async'),
      authentication_method: f.checkedByApi('authentication_method'),
      summary: f.optional('summary'),
    });
    return `route ${r.path} created (${r.http_method.toUpperCase()} ${r.route_path})`;
  },
  createFolder: async (f) => {
    const folder = await api.createFolder({ name: f.text('name'), summary: f.optional('summary'), extra_perms: f.checkedByApi('extra_perms') });
    return `folder ${folder.name} created`;
  },
  updateFolder: async (f, name) => {
    const folder = await api.updateFolder(name, { owners: f.list('owners'), extra_perms: f.checkedByApi('extra_perms') });
    return `folder ${folder.name} saved, owned by ${folder.owners.join(', ') || 'no one'}`;
  },
  createGroup: async (f) => {
    const group = await api.createGroup({ name: f.text('name'), summary: f.optional('summary') });
    return `group ${group.name} created`;
  },
  addGroupMember: async (f, name) => {
    const group = await api.addGroupMember(name, { username: f.text('username') });
    return `group ${group.name} has ${group.members.length} member${group.members.length === 1 ? '' : 's'}`;
  },
  addMember: async (f) => {
    const member = await api.addMember({ username: f.text('username'), role: f.checkedByApi('role') });
    return `${member.username} added as ${member.role}`;
  },
  updateMember: async (f, username) => {
    const member = await api.updateMember(username, { role: f.checkedByApi('role') });
    return `${member.username} is now ${member.role}`;
  },
} satisfies Record<string, FormAction>;

export const BUTTON_ACTIONS = {
  setScheduleEnabled: async (path, value) => {
    const s = await api.setScheduleEnabled(path, { enabled: value === 'true' });
    return `schedule ${s.path} ${s.enabled ? 'enabled' : 'disabled'}`;
  },
  // A delete answers what it deleted, in words.
  deleteSchedule: (path) => api.deleteSchedule(path),
  deleteVariable: (path) => api.deleteVariable(path),
  deleteResource: (path) => api.deleteResource(path),
  deleteRoute: (path) => api.deleteRoute(path),
  deleteFolder: (name) => api.deleteFolder(name),
  deleteGroup: (name) => api.deleteGroup(name),
  removeGroupMember: async (name, username) => {
    const group = await api.removeGroupMember(name, { username });
    return `${username} removed from group ${group.name}`;
  },
  removeMember: async (username) => {
    await api.removeMember({ username });
    return `${username} removed from the workspace`;
  },
} satisfies Record<string, ButtonAction>;

export type FormActionName = keyof typeof FORM_ACTIONS;
export type ButtonActionName = keyof typeof BUTTON_ACTIONS;
