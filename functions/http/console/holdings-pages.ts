import { Hono } from 'hono';
import type { CoreDeps } from '../../core/deps.js';
import { nextTick } from '../../core/triggers/cron.js';
import { listHttpTriggers } from '../../core/triggers/http-triggers.js';
import { AUTHENTICATION_METHODS } from '../../core/triggers/http-trigger-document.js';
import { HTTP_METHODS } from '../../core/triggers/route-paths.js';
import { listSchedules, type ScheduleView } from '../../core/triggers/schedules.js';
import { listResourceTypes } from '../../core/workspace/resource-types.js';
import { listResources } from '../../core/workspace/resources.js';
import { listVariables } from '../../core/workspace/variables.js';
import { html, type Markup } from '../html.js';
import { apiButton, apiForm } from './holding-forms.js';
import { holdingRoute, table, type HoldingContext } from './holding-page.js';
import { formatTime } from './time-format.js';

/**
 * Schedules, variables, connections (resources and their types) and HTTP routes of a workspace:
 * each listed as the API lists it for this person, with the forms and buttons the API lets them use.
 */
export function holdingsPageRoutes(deps: CoreDeps) {
  const r = new Hono();
  holdingRoute(r, deps, 'schedules', 'Schedules', schedulesBody);
  holdingRoute(r, deps, 'variables', 'Variables', variablesBody);
  holdingRoute(r, deps, 'resources', 'Connections', resourcesBody);
  holdingRoute(r, deps, 'routes', 'Routes', routesBody);
  return r;
}

const itemLink = (ws: string, path: string) => html`<a href="/w/${encodeURIComponent(ws)}/item/${path}">${path}</a>`;

async function schedulesBody({ deps, rights, ws }: HoldingContext): Promise<Markup> {
  const schedules = await listSchedules(deps, rights);
  const now = deps.clock.now();
  const rows = schedules.map((s) => {
    const canWrite = rights.can('schedules', 'write', s.path);
    return html`<tr><td>${s.path}${s.summary ? html`<div class="muted">${s.summary}</div>` : ''}</td><td><span class="muted">${s.is_flow ? 'flow' : 'script'}</span> ${itemLink(ws, s.script_path)}</td>
<td><code>${s.schedule}</code> <span class="muted">${s.timezone}</span></td><td class="wide">${s.enabled ? nextRuns(s, now).map((t) => html`<div>${t}</div>`) : html`<span class="muted">disabled</span>`}</td>
<td>${lastFailure(ws, s)}</td><td><span class="status ${s.enabled ? 's-success' : 's-canceled'}">${s.enabled ? 'enabled' : 'disabled'}</span></td>
<td>${canWrite ? html`${apiButton(s.enabled ? 'Disable' : 'Enable', { action: 'setScheduleEnabled', target: s.path, value: String(!s.enabled) }, { label: `${s.enabled ? 'Disable' : 'Enable'} schedule ${s.path}` })} ${apiButton('Delete', { action: 'deleteSchedule', target: s.path }, { danger: true, label: `Delete schedule ${s.path}` })}` : ''}</td></tr>`;
  });
  const create = rights.can('schedules', 'write')
    ? html`<h2>New schedule</h2>${apiForm('new-schedule', { action: 'createSchedule' }, 'Create schedule', 'Create schedule', [
        { name: 'path', label: 'Path', required: true, placeholder: 'f/ops/nightly' },
        { name: 'schedule', label: 'Cron (with seconds)', required: true, placeholder: '0 0 6 * * *' },
        { name: 'timezone', label: 'Time zone', value: 'UTC' },
        { name: 'script_path', label: 'Script or flow path', required: true },
        { name: 'is_flow', label: 'It is a flow', kind: 'checkbox' },
        { name: 'args', label: 'Arguments (JSON)', kind: 'json', value: '{}' },
        { name: 'summary', label: 'Summary' },
      ])}`
    : '';
  return html`<p>Scripts and flows run on a cron clock (six fields, seconds first), as the person who last saved the schedule.</p>
${table('Schedules', ['Schedule', 'Runs', 'When', '~Next runs (UTC)', 'Last failure', 'State', ''], rows, 'No schedules you may see yet.')}${create}`;
}

function nextRuns(s: ScheduleView, now: Date): string[] {
  const out: string[] = [];
  let at: Date | null = now;
  while (out.length < 3 && at) {
    at = nextTick(s.schedule, s.timezone, at);
    if (at) out.push(formatTime(at.toISOString()));
  }
  return out;
}

function lastFailure(ws: string, s: ScheduleView): Markup {
  if (!s.last_failure) return html`<span class="muted">none</span>`;
  const streak = s.failure_streak > 1 ? ` (${s.failure_streak} in a row)` : '';
  return html`<a href="/w/${encodeURIComponent(ws)}/run/${encodeURIComponent(s.last_failure.job_id)}"><span class="status s-failed">failed</span></a>${streak}`;
}

async function variablesBody({ deps, rights }: HoldingContext): Promise<Markup> {
  const variables = await listVariables(deps, rights);
  const rows = variables.map((v, i) => {
    const canWrite = rights.can('variables', 'write', v.path);
    // A secret's value never reaches the page: the list does not carry it, and its form only sets one.
    const value = v.is_secret ? html`<span class="muted">secret, write-only</span>` : html`<code>${v.value ?? ''}</code>`;
    const edit = canWrite
      ? html`${apiForm(`set-variable-${i}`, { action: 'updateVariable', target: v.path }, `Set variable ${v.path}`, 'Set value', [{ name: 'value', label: 'New value', kind: v.is_secret ? 'password' : 'text', required: true }], true)}${apiButton('Delete', { action: 'deleteVariable', target: v.path }, { danger: true, label: `Delete variable ${v.path}` })}`
      : '';
    return html`<tr><td>${v.path}</td><td>${v.is_secret ? 'secret' : 'plain'}</td><td>${value}</td><td class="wide">${v.description}</td><td class="wide">${formatTime(v.updated_at)}</td><td>${edit}</td></tr>`;
  });
  const create = rights.can('variables', 'write')
    ? html`<h2>New variable</h2>${apiForm('new-variable', { action: 'createVariable' }, 'Create variable', 'Create variable', [
        { name: 'path', label: 'Path', required: true, placeholder: 'f/ops/api_key' },
        { name: 'value', label: 'Value', kind: 'password', required: true },
        { name: 'is_secret', label: 'Secret (stored encrypted, never shown again)', kind: 'checkbox', checked: true },
        { name: 'description', label: 'Description' },
      ])}`
    : '';
  return html`<p>Scripts read variables by path (<code>$var:path</code> arguments or the client). A secret is stored encrypted; once saved it can be replaced, never read back here.</p>
${table('Variables', ['Path', 'Kind', 'Value', '~Description', '~Updated', ''], rows, 'No variables you may see yet.')}${create}`;
}

async function resourcesBody({ deps, rights }: HoldingContext): Promise<Markup> {
  const [resources, types] = await Promise.all([listResources(deps, rights), listResourceTypes(deps, rights)]);
  const rows = resources.map((res) => {
    const canWrite = rights.can('resources', 'write', res.path);
    return html`<tr><td>${res.path}</td><td>${res.resource_type}</td><td class="wide">${res.description}</td><td>${canWrite ? apiButton('Delete', { action: 'deleteResource', target: res.path }, { danger: true, label: `Delete connection ${res.path}` }) : ''}</td></tr>`;
  });
  const typeRows = types.map(
    (t) => html`<tr><td>${t.name}</td><td>${t.description}</td><td class="wide"><details><summary>schema</summary><pre>${JSON.stringify(t.schema, null, 2)}</pre></details></td></tr>`,
  );
  const canWrite = rights.can('resources', 'write');
  const create = canWrite
    ? html`<h2>New connection</h2>${apiForm('new-resource', { action: 'createResource' }, 'Create connection', 'Create connection', [
        { name: 'path', label: 'Path', required: true, placeholder: 'f/ops/warehouse' },
        { name: 'resource_type', label: 'Type', kind: 'select', required: true, options: types.map((t) => t.name) },
        { name: 'value', label: 'Value (JSON, checked against the type)', kind: 'json', value: '{}', required: true },
        { name: 'description', label: 'Description' },
      ])}`
    : '';
  const createType = canWrite
    ? html`<h3>New type</h3>${apiForm('new-resource-type', { action: 'createResourceType' }, 'Create connection type', 'Create type', [
        { name: 'name', label: 'Name', required: true, placeholder: 'warehouse' },
        { name: 'schema', label: 'JSON Schema of its values', kind: 'json', value: '{"type": "object", "properties": {}}', required: true },
        { name: 'description', label: 'Description' },
      ])}`
    : '';
  return html`<p>Connections (resources) hold what scripts need to reach other systems; a script receives one as a <code>$res:path</code> argument. Their values are not shown in this list.</p>
${table('Connections', ['Path', 'Type', '~Description', ''], rows, 'No connections you may see yet.')}${create}
<h2>Connection types</h2>${table('Connection types', ['Name', 'Description', '~Schema'], typeRows, 'No connection types yet.')}${createType}`;
}

async function routesBody({ deps, rights, ws }: HoldingContext): Promise<Markup> {
  const routes = await listHttpTriggers(deps, rights);
  const rows = routes.map((t) => {
    const canWrite = rights.can('http_triggers', 'write', t.path);
    return html`<tr><td>${t.path}</td><td><code>${t.http_method.toUpperCase()} ${t.route_path}</code></td><td><span class="muted">${t.is_flow ? 'flow' : 'script'}</span> ${itemLink(ws, t.script_path)}</td>
<td>${t.is_async ? 'async' : 'sync'}</td><td>${t.authentication_method}</td><td>${canWrite ? apiButton('Delete', { action: 'deleteRoute', target: t.path }, { danger: true, label: `Delete route ${t.path}` }) : ''}</td></tr>`;
  });
  const create = rights.can('http_triggers', 'write')
    ? html`<h2>New route</h2>${apiForm('new-route', { action: 'createRoute' }, 'Create route', 'Create route', [
        { name: 'path', label: 'Path', required: true, placeholder: 'f/shop/orders' },
        { name: 'http_method', label: 'Method', kind: 'select', options: HTTP_METHODS, value: 'post' },
        { name: 'route_path', label: 'Route (after /api/r/)', required: true, placeholder: 'orders/:id' },
        { name: 'script_path', label: 'Script or flow path', required: true },
        { name: 'is_flow', label: 'It is a flow', kind: 'checkbox' },
        { name: 'is_async', label: 'Answer at once with the job id (async)', kind: 'checkbox' },
        { name: 'authentication_method', label: 'Authentication', kind: 'select', options: AUTHENTICATION_METHODS, value: 'svc' },
        { name: 'summary', label: 'Summary' },
      ])}`
    : '';
  return html`<p>Routes answer HTTP requests at <code>/api/r/&lt;route&gt;</code> by running a script or flow with the request.</p>
${table('Routes', ['Path', 'Route', 'Runs', 'Mode', 'Authentication', ''], rows, 'No routes you may see yet.')}${create}`;
}
