import { html } from '../html.js';
import { RUN_STATUSES, type RunFilter } from '../../core/console/run-filter.js';
import { JOB_KINDS, JOB_TRIGGERS } from '../../ports.js';
import { hashOf, renderPage } from './layout.js';
import { RUN_CHART_SCRIPT } from './run-chart.js';
import { uplotScript, uplotStyle } from './static-assets.js';

/**
 * `/w/<ws>/runs`: the run list, top-level runs unless `all=1` (flow steps, branches and sub-flows
 * are on their flow's run page). The filter form is a GET form, so every filter is in the URL and a
 * filtered view can be linked and reloaded; the script reads the list from `GET /api/w/<ws>/jobs/runs`
 * with the same query, pages by cursor, follows `jobs/runs_sse` while the page is visible (closed
 * when hidden), and cancels through `jobs/queue/cancel_selection`.
 */

const SCRIPT_TEXT = `
const ws = document.body.dataset.workspace;
const api = '/api/w/' + encodeURIComponent(ws);
const rows = document.getElementById('rows');
const message = document.getElementById('message');
const more = document.getElementById('more');
const form = document.getElementById('filters');
const FILTERS = ['path', 'folder', 'status', 'user', 'kind', 'trigger', 'after', 'before', 'args', 'result'];
let cursor = null;
let pagesLoaded = 0;
let feed = null;
// The runs shown, by id: what the chart draws.
const listed = new Map();

function filterQuery() {
  const q = new URLSearchParams();
  const here = new URLSearchParams(location.search);
  for (const name of FILTERS) { const v = here.get(name); if (v) q.set(name, v); }
  // Top-level runs unless asked for all: a flow's steps, branches and sub-flows are on its run page.
  if (here.get('all') !== '1') q.set('top_level', '1');
  return q;
}

async function call(path, init) {
  const res = await fetch(api + path, { credentials: 'same-origin', ...init });
  if (res.status === 401) { location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search)); throw new Error('not signed in'); }
  const answer = await res.json().catch(() => null);
  if (!res.ok) throw new Error((answer && answer.error && answer.error.message) || 'request failed (' + res.status + ')');
  return answer;
}

function td(text, className) {
  const cell = document.createElement('td');
  if (className) cell.className = className;
  cell.textContent = text;
  return cell;
}

function duration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

function row(run) {
  const tr = document.createElement('tr');
  tr.dataset.id = run.id;
  tr.dataset.status = run.status;
  const pick = document.createElement('td');
  if (run.can_cancel) {
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.name = 'selected';
    box.value = run.id;
    box.setAttribute('aria-label', 'select run ' + run.id);
    pick.append(box);
  }
  const status = td('');
  const badge = document.createElement('span');
  badge.className = 'status s-' + run.status;
  badge.textContent = run.status;
  status.append(badge);
  const path = document.createElement('td');
  const link = document.createElement('a');
  link.href = '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(run.id);
  link.textContent = run.path;
  path.append(link);
  const args = td(run.args ? JSON.stringify(run.args).slice(0, 80) : '', 'wide');
  tr.append(pick, status, path, td(run.kind, 'wide'), td(run.trigger || '', 'trigger'), td(run.created_by), td(run.created_at.replace('T', ' ').slice(0, 19)), td(run.cache_hit ? 'cache hit' : duration(run.duration_ms), 'duration'), args);
  return tr;
}

function show(page, append) {
  if (!append) { rows.replaceChildren(); listed.clear(); }
  for (const run of page.runs) { rows.append(row(run)); listed.set(run.id, run); }
  drawChart([...listed.values()]);
  cursor = page.next_cursor;
  more.hidden = !cursor;
  document.getElementById('empty').hidden = rows.children.length > 0;
  document.getElementById('count').textContent = rows.children.length + (cursor ? '+' : '') + ' runs';
}

async function load(append) {
  message.textContent = '';
  const q = filterQuery();
  if (append && cursor) q.set('cursor', cursor);
  try {
    show(await call('/jobs/runs?' + q), append);
    pagesLoaded = append ? pagesLoaded + 1 : 1;
  } catch (e) { message.textContent = e.message; }
}

// The feed sends the first page again when it changed: merged into what is shown, so rows already
// paged in stay, statuses change in place and new runs appear on top.
function merge(page) {
  if (pagesLoaded <= 1) { show(page, false); return; }
  const byId = new Map([...rows.children].map((tr) => [tr.dataset.id, tr]));
  const fresh = [];
  for (const run of page.runs) {
    const old = byId.get(run.id);
    const tr = row(run);
    if (old) old.replaceWith(tr); else fresh.push(tr);
    listed.set(run.id, run);
  }
  rows.prepend(...fresh);
  drawChart([...listed.values()]);
}

function follow() {
  if (feed || document.hidden) return;
  feed = new EventSource(api + '/jobs/runs_sse?' + filterQuery());
  feed.addEventListener('runs', (event) => merge(JSON.parse(event.data)));
}
function unfollow() {
  if (feed) { feed.close(); feed = null; }
}
document.addEventListener('visibilitychange', () => (document.hidden ? unfollow() : follow()));

form.addEventListener('submit', (event) => {
  // Only the filters that are set go into the URL, so links stay short and readable.
  event.preventDefault();
  const q = new URLSearchParams();
  for (const name of FILTERS) { const v = form.elements[name].value.trim(); if (v) q.set(name, v); }
  if (form.elements.all.checked) q.set('all', '1');
  location.assign(location.pathname + (q.size ? '?' + q : ''));
});
more.addEventListener('click', () => load(true));

const confirmBox = document.getElementById('confirm');
let pending = [];
function ask(ids, text) {
  pending = ids;
  document.getElementById('confirm-text').textContent = text;
  confirmBox.hidden = false;
  document.getElementById('confirm-yes').focus();
}
document.getElementById('cancel-selected').addEventListener('click', () => {
  const ids = [...rows.querySelectorAll('input[name=selected]:checked')].map((b) => b.value);
  if (ids.length === 0) { message.textContent = 'Select runs to cancel first.'; return; }
  ask(ids, 'Cancel ' + ids.length + ' selected runs?');
});
document.getElementById('cancel-matching').addEventListener('click', async () => {
  message.textContent = '';
  const ids = [];
  let next = null;
  try {
    do {
      const q = filterQuery();
      q.set('per_page', '200');
      if (next) q.set('cursor', next);
      const page = await call('/jobs/runs?' + q);
      for (const run of page.runs) if (run.can_cancel) ids.push(run.id);
      next = page.next_cursor;
    } while (next && ids.length < 10000);
  } catch (e) { message.textContent = e.message; return; }
  if (ids.length === 0) { message.textContent = 'No run matching these filters can be canceled.'; return; }
  ask(ids, 'Cancel all ' + ids.length + ' runs matching the filters?');
});
document.getElementById('confirm-no').addEventListener('click', () => { confirmBox.hidden = true; pending = []; });
document.getElementById('confirm-yes').addEventListener('click', async () => {
  confirmBox.hidden = true;
  let canceled = 0;
  const refused = [];
  try {
    for (let i = 0; i < pending.length; i += 1000) {
      const outcome = await call('/jobs/queue/cancel_selection', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pending.slice(i, i + 1000)) });
      canceled += outcome.canceled.length;
      refused.push(...outcome.not_canceled);
    }
    document.getElementById('done').textContent = canceled + ' runs canceled' + (refused.length ? '; ' + refused.length + ' not: ' + refused[0].message : '') + '.';
  } catch (e) { message.textContent = e.message; }
  pending = [];
  await load(false);
});

load(false).then(follow);
`;
const TEXT = RUN_CHART_SCRIPT + SCRIPT_TEXT;
const SCRIPT = { text: TEXT, hash: hashOf(TEXT) };

export function renderRunsPage(workspace: string, username: string, filter: Partial<RunFilter> & Record<string, unknown>): string {
  const value = (name: string) => {
    const v = filter[name];
    if (v === undefined || v === null) return '';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  const text = (name: string, label: string, placeholder = '') =>
    html`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" value="${value(name)}" placeholder="${placeholder}"></div>`;
  const select = (name: string, label: string, options: readonly string[]) =>
    html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">any</option>${options.map((o) => html`<option${o === value(name) ? html` selected` : ''}>${o}</option>`)}</select></div>`;
  const body = html`<h1>Runs</h1>
<form id="filters" class="filters" method="get" role="search" aria-label="Filter runs">
${text('path', 'Path starts with', 'f/ops/')}${text('folder', 'Folder')}${select('status', 'Status', RUN_STATUSES)}${text('user', 'Started by')}${select('kind', 'Kind', JOB_KINDS)}${select('trigger', 'Triggered by', JOB_TRIGGERS)}
${text('after', 'Created after', '2026-01-01T00:00:00Z')}${text('before', 'Created before')}${text('args', 'Arguments contain (JSON)', '{"env":"prod"}')}${text('result', 'Result contains (JSON)')}
<div><label class="check"><input type="checkbox" id="f-all" name="all" value="1"${value('all') === '1' ? html` checked` : ''}> Show flow steps and sub-flows</label></div>
<div><button type="submit">Filter</button> <a href="?">Clear</a></div>
</form>
<div class="toolbar"><span id="count" role="status" aria-live="polite"></span>
<button type="button" id="cancel-selected" class="danger">Cancel selected</button>
<button type="button" id="cancel-matching" class="danger">Cancel all matching…</button>
<span id="done" role="status"></span></div>
<div id="confirm" hidden role="alertdialog" aria-labelledby="confirm-text"><p id="confirm-text"></p><button type="button" id="confirm-yes" class="danger">Yes, cancel them</button> <button type="button" id="confirm-no">No</button></div>
<p id="message" role="alert"></p>
<figure class="chart"><div id="chart" role="img" hidden></div><figcaption class="muted">Duration against start time; drag across the chart to list only that time range.</figcaption></figure>
<div class="table-wrap"><table aria-label="Runs"><thead><tr><th scope="col"><span class="muted">sel.</span></th><th scope="col">Status</th><th scope="col">Path</th><th scope="col" class="wide">Kind</th><th scope="col">Trigger</th><th scope="col">By</th><th scope="col">Created</th><th scope="col">Duration</th><th scope="col" class="wide">Arguments</th></tr></thead>
<tbody id="rows"></tbody></table></div>
<p id="empty" hidden>No runs match.</p>
<button type="button" id="more" hidden>Older runs</button>`;
  const uplot = uplotScript();
  return renderPage({ title: `Runs of ${workspace}`, workspace, username, script: SCRIPT, data: {}, body, libraries: [uplot], libraryStyle: uplotStyle() });
}
