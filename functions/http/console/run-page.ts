import { html, type Markup } from '../html.js';
import type { Job } from '../../ports.js';
import type { FlowModule } from '../../core/flows/definition.js';
import { CLIENT_HELPERS } from './client-helpers.js';
import { FORM_SCRIPT } from '../approval-form.js';
import { flowGraphSvg } from './flow-graph.js';
import { hashOf, renderPage } from './layout.js';
import { languageName } from './language-names.js';

/**
 * `/w/<ws>/run/<id>`: one run. The script reads the job from `jobs_u/get/<id>` and its logs from
 * `jobs_u/getupdate/<id>?log_offset=N` (turned into coloured HTML by the page's logs route) at most
 * once a second, only while the run is unfinished and the page visible. A flow's graph is laid out
 * on the server; its nodes' statuses follow the run's `flow_status`. Actions are the API's: cancel,
 * re-run by hash or flow version with the same or edited arguments.
 */

const RUN_SCRIPT = `
const body = document.body.dataset;
const ws = body.workspace;
const id = body.run;
const message = document.getElementById('message');
const FINISHED = ['success', 'failed', 'canceled'];
let logOffset = 0;
let job = null;
let timer = null;
let selected = null;

// The console's one time format (time-format.ts): UTC, to the second.
function when(t) { return t ? t.replace('T', ' ').slice(0, 19) : '—'; }
function span(a, b) { return a && b ? ((Date.parse(b) - Date.parse(a)) / 1000).toFixed(2) + ' s' : '—'; }

/** The error that ended the flow, with the step it came from (the failure module's input when it ran). */
function flowError(j) {
  const fs = j.flow_status;
  const failed = fs && fs.failure_module ? fs.failure_module.error : j.result;
  return failed && typeof failed === 'object' && failed.error && typeof failed.error === 'object' ? failed.error : null;
}
const failureModuleFailed = (j) => !!(j.result && typeof j.result === 'object' && j.result.error && typeof j.result.error === 'object' && j.result.error.failure_module_error !== undefined);
const timedOut = (e) => !!(e && typeof e === 'object' && e.name === 'TimeoutError');

function moduleStatuses(j) {
  const fs = j.flow_status;
  const out = {};
  if (!fs) return out;
  const finished = FINISHED.includes(j.status);
  const error = flowError(j);
  fs.modules.forEach((m, i) => {
    const result = fs.results[m];
    if (fs.skipped && fs.skipped.includes(m)) out[m] = 'skipped';
    else if (finished && i === fs.step && j.status !== 'success' && error && error.step_id === m && timedOut(error)) out[m] = 'timed_out';
    else if (result && typeof result === 'object' && timedOut(result.error)) out[m] = 'timed_out';
    else if (fs.wait && fs.wait.reason === 'retry' && fs.wait.module === m) out[m] = 'retrying';
    else if (Object.prototype.hasOwnProperty.call(fs.results, m) && i < fs.step) out[m] = 'success';
    else if (i < fs.step) out[m] = 'success';
    // The flow sleeps after the step before: this one has not started.
    else if (i === fs.step && !finished && fs.wait && fs.wait.reason === 'sleep' && fs.wait.module !== m) out[m] = 'pending';
    else if (i === fs.step) {
      if (FINISHED.includes(j.status)) out[m] = j.status === 'success' ? 'success' : j.status;
      else if (fs.suspend && fs.suspend.module === m) out[m] = 'suspended';
      else if (fs.gate && fs.gate.module === m) out[m] = 'awaiting_approval';
      else out[m] = 'running';
    } else if (!finished) out[m] = 'pending';
    // A finished run's later steps: skipped by an early stop, or never reached (the flow failed or was canceled first).
    else out[m] = j.status === 'success' && fs.stopped_early ? 'skipped' : 'not_run';
  });
  const handler = document.querySelector('.graph [data-failure-module]');
  if (handler) {
    const id = handler.dataset.module;
    if (!fs.failure_module) out[id] = finished ? 'not_needed' : 'pending';
    else if (!finished) out[id] = 'running';
    else out[id] = failureModuleFailed(j) ? 'failed' : 'success';
  }
  return out;
}

/** What a step's node says under its status: its attempts, a cache hit, the stop it made, its sleep, a while loop's iteration. */
function moduleNotes(fs) {
  const notes = {};
  const add = (m, text) => (notes[m] = notes[m] || []).push(text);
  if (!fs) return notes;
  for (const [m, list] of Object.entries(fs.attempts || {})) if (list.length) add(m, 'attempt ' + list.length);
  for (const m of Object.keys(fs.cache_hits || {})) add(m, 'cache hit');
  if (fs.stop) add(fs.stop.module, 'stopped the flow');
  if (fs.wait && fs.wait.reason === 'sleep') add(fs.wait.module, 'sleeping until ' + when(fs.wait.until).slice(11));
  if (fs.iteration) add(fs.iteration.module, 'iteration ' + fs.iteration.index);
  return notes;
}

function paint(node, s, said) {
  node.setAttribute('class', node.getAttribute('class').replace(/ s-[a-z_]+/, '') + ' s-' + s);
  node.querySelector('.st').textContent = s.replace('_', ' ');
  const line = node.querySelector('.notes');
  if (line) line.textContent = said || '';
  node.setAttribute('aria-label', 'step ' + node.dataset.module + ': ' + s.replace('_', ' ') + (said ? ' · ' + said : ''));
}

// Steps inside loops and branches: their statuses come from the runs of the iterations and
// branches (each a flow run of its own, listed by /subflows), worst first across them.
const WORST_FIRST = ['failed', 'timed_out', 'canceled', 'running', 'retrying', 'suspended', 'awaiting_approval', 'pending', 'success', 'skipped', 'not_run'];
const worse = (a, b) => (a === undefined ? b : WORST_FIRST.indexOf(b) < WORST_FIRST.indexOf(a) ? b : a);
let nestedJobs = {};
let nestedBusy = false;

async function paintNested(j, top) {
  const nodes = document.querySelectorAll('.graph [data-within]');
  if (nodes.length === 0 || nestedBusy) return;
  nestedBusy = true;
  try {
    const res = await fetch(location.pathname + '/subflows', { credentials: 'same-origin' });
    if (!res.ok) return;
    const statuses = {};
    const jobs = {};
    for (const child of await res.json()) {
      const inner = child.flow_status;
      if (!inner) continue;
      const own = moduleStatuses(child);
      for (const step of inner.modules) {
        statuses[step] = worse(statuses[step], own[step] || 'pending');
        jobs[step] = (jobs[step] || []).concat((inner.module_jobs || {})[step] || []);
      }
    }
    nestedJobs = jobs;
    for (const node of nodes) {
      // Never started: as its loop or branch step when that was skipped or not reached.
      const outer = top[node.dataset.within];
      paint(node, statuses[node.dataset.module] || (outer === 'skipped' || outer === 'not_run' ? outer : 'pending'), '');
    }
  } finally { nestedBusy = false; }
}

function render(j) {
  job = j;
  const badge = document.getElementById('status');
  badge.textContent = j.status;
  badge.className = 'status s-' + j.status;
  document.getElementById('created').textContent = when(j.created_at);
  document.getElementById('started').textContent = when(j.started_at);
  document.getElementById('ended').textContent = when(j.completed_at);
  document.getElementById('delay').textContent = span(j.created_at, j.started_at);
  document.getElementById('runtime').textContent = span(j.started_at, j.completed_at);
  document.getElementById('attempts').textContent = String(j.attempts);
  showJson(document.getElementById('args'), j.args);
  const finished = FINISHED.includes(j.status);
  document.getElementById('result-box').hidden = !finished;
  if (finished) showJson(document.getElementById('result'), j.deleted ? '(deleted after use)' : j.result);
  const cancel = document.getElementById('cancel');
  if (cancel) cancel.hidden = finished;
  const statuses = moduleStatuses(j);
  const notes = moduleNotes(j.flow_status);
  for (const node of document.querySelectorAll('.graph [data-module]:not([data-within])')) {
    paint(node, statuses[node.dataset.module] || 'pending', (notes[node.dataset.module] || []).join(' · '));
  }
  paintNested(j, statuses);
  const waiting = j.status === 'suspended' || j.status === 'awaiting_approval';
  const approval = document.getElementById('approval');
  if (waiting && approval.dataset.loaded !== j.status) loadApproval(j.status);
  if (!waiting) { approval.replaceChildren(); approval.dataset.loaded = ''; }
  if (j.flow_status && j.flow_status.audit.length) {
    document.getElementById('audit').replaceChildren(...j.flow_status.audit.map((e) => el('li', { text: [e.at ? when(e.at) : '', e.step, e.event, e.who || '', e.via, e.reason || '', e.values ? JSON.stringify(e.values) : ''].filter(Boolean).join(' · ') })));
  }
  if (j.flow_status) document.getElementById('events').replaceChildren(...flowEvents(j.flow_status).map((text) => el('li', { text })));
  if (selected) showStep(selected);
  if (finished && !handlersLooked) { handlersLooked = true; loadHandlers(j); }
}

/**
 * The handlers that heard of this run's end: the workspace error handler and its schedule's
 * on_failure / on_recovery, found by the job_id they were given. They start just after the run
 * ends, so the page looks again (once a second, 30 times at most) until they are there and done.
 */
let handlersLooked = false;
let handlerLooks = 0;
async function loadHandlers(j) {
  const box = document.getElementById('handlers');
  if (!box || (j.status !== 'failed' && !j.schedule_path)) return;
  const args = encodeURIComponent(JSON.stringify({ job_id: j.id }));
  const found = [];
  try {
    for (const trigger of ['error_handler', 'schedule']) found.push(...(await apiCall('/jobs/runs?trigger=' + trigger + '&args=' + args + '&per_page=20')).runs);
  } catch (e) { message.textContent = e.message; return; }
  const handlers = found.filter((r) => r.id !== j.id);
  if (handlers.length) {
    box.replaceChildren(...handlers.map((r) => el('div', {}, el('a', { href: '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(r.id), text: r.path }), ' ', el('span', { class: 'status s-' + r.status, text: r.status }), ' (' + (r.trigger === 'error_handler' ? 'workspace error handler' : 'schedule handler') + ')')));
    box.hidden = false;
    document.getElementById('handlers-dt').hidden = false;
  }
  const waiting = handlers.length ? handlers.some((r) => !FINISHED.includes(r.status)) : j.status === 'failed';
  if (waiting && ++handlerLooks < 30 && !document.hidden) setTimeout(() => loadHandlers(j), 1000);
}

/** What the flow's failure settings did: attempts, waits, skips, stops, the failure module (docs/flows.md). */
function flowEvents(fs) {
  const lines = [];
  const message = (e) => (e && typeof e === 'object' && e.message) || (e === undefined ? '' : JSON.stringify(e));
  for (const [step, attempts] of Object.entries(fs.attempts || {})) {
    for (const a of attempts) lines.push([when(a.at), 'step ' + step, 'attempt ' + a.attempt, a.status, a.error !== undefined ? message(a.error) : '', a.retry_at ? 'next attempt at ' + when(a.retry_at) : ''].filter(Boolean).join(' · '));
  }
  for (const [step, hit] of Object.entries(fs.cache_hits || {})) lines.push('step ' + step + ' answered from its cache (job ' + hit + '): nothing ran');
  if (fs.wait) lines.push('waiting until ' + when(fs.wait.until) + ' · ' + (fs.wait.reason === 'retry' ? 'before retrying step ' : 'sleep after step ') + fs.wait.module);
  for (const m of fs.skipped || []) lines.push('step ' + m + ' skipped (skip_if)');
  if (fs.stop) lines.push('flow stopped after step ' + fs.stop.module + (fs.stop.skipped ? ' (skipped)' : '') + (fs.stop.error_message ? ' · ' + fs.stop.error_message : ''));
  if (fs.iteration) lines.push('while loop ' + fs.iteration.module + ' · iteration ' + fs.iteration.index);
  const error = flowError(job);
  if (error && error.step_id && FINISHED.includes(job.status) && job.status !== 'success') lines.push('step ' + error.step_id + (timedOut(error) ? ' timed out' : ' failed') + ' · ' + (error.name ? error.name + ': ' : '') + message(error));
  if (fs.failure_module) lines.push('failure module ' + fs.failure_module.module + ' ran for step ' + fs.failure_module.step_id + ' · ' + message(fs.failure_module.error && fs.failure_module.error.error) + (FINISHED.includes(job.status) ? (failureModuleFailed(job) ? ' · it failed too' : ' · its result is the result of the flow') : ' · running'));
  return lines.length ? lines : ['none'];
}

async function pullLogs() {
  const res = await fetch(location.pathname + '/logs?log_offset=' + logOffset, { credentials: 'same-origin' });
  if (!res.ok) return;
  const update = await res.json();
  if (update.html) document.getElementById('logs').insertAdjacentHTML('beforeend', update.html);
  logOffset = update.log_offset;
}

async function tick() {
  timer = null;
  try {
    render(await apiCall('/jobs_u/get/' + encodeURIComponent(id)));
    await pullLogs();
  } catch (e) { message.textContent = e.message; }
  schedule();
}
function schedule() {
  if (timer || document.hidden || (job && FINISHED.includes(job.status))) return;
  timer = setTimeout(tick, 1000);
}
document.addEventListener('visibilitychange', () => { if (!document.hidden && !timer) tick(); });

async function showStep(moduleId) {
  selected = moduleId;
  const box = document.getElementById('step');
  box.hidden = false;
  document.getElementById('step-title').textContent = 'Step ' + moduleId;
  const ids = (job && job.flow_status && job.flow_status.module_jobs[moduleId]) || nestedJobs[moduleId] || [];
  const picker = document.getElementById('step-pick');
  const current = picker.value;
  picker.replaceChildren(...ids.map((s, i) => el('option', { value: s, text: (ids.length > 1 ? 'attempt / iteration / branch ' + i + ': ' : '') + s, selected: s === current })));
  picker.hidden = ids.length < 2;
  const detail = document.getElementById('step-detail');
  const result = job && job.flow_status && job.flow_status.results[moduleId];
  if (ids.length === 0) {
    const shown = el('div');
    if (result !== undefined) showJson(shown, result);
    detail.replaceChildren(result === undefined ? el('p', { class: 'muted', text: 'Not run yet.' }) : shown);
    return;
  }
  const stepId = picker.value || ids[0];
  try {
    const step = await apiCall('/jobs_u/get/' + encodeURIComponent(stepId));
    const link = el('a', { href: '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(stepId), text: 'open step run ' + stepId });
    const args = el('div'); showJson(args, step.args);
    const res = el('div'); showJson(res, step.result);
    const moduleResult = el('div');
    if (result !== undefined) showJson(moduleResult, result);
    detail.replaceChildren(
      ...(result !== undefined ? [el('h4', { text: 'Step result' }), moduleResult] : []),
      el('p', {}, el('span', { class: 'status s-' + step.status, text: step.status }), ' ', link),
      el('h4', { text: 'Arguments' }), args, el('h4', { text: 'Result' }), res, el('h4', { text: 'Logs' }), el('pre', { class: 'logs', text: step.logs || '' }));
  } catch (e) { detail.replaceChildren(el('p', { text: e.message })); }
}
document.getElementById('step-pick').addEventListener('change', () => selected && showStep(selected));
for (const node of document.querySelectorAll('.graph [data-module]')) {
  node.addEventListener('click', () => showStep(node.dataset.module));
  node.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); showStep(node.dataset.module); } });
}

async function loadApproval(status) {
  const box = document.getElementById('approval');
  box.dataset.loaded = status;
  const res = await fetch(location.pathname + '/approval', { credentials: 'same-origin' });
  box.innerHTML = res.ok ? await res.text() : '';
  const form = box.querySelector('form');
  if (!form) return;
  fillDatetimes(form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const decision = event.submitter && event.submitter.value;
    const reason = (form.elements.decision_reason && form.elements.decision_reason.value) || '';
    let values;
    try { values = collectFields(form); } catch (e) { form.querySelector('[role=status]').textContent = e.message; return; }
    let url, payload;
    if (form.dataset.gate) { url = '/api/v1/runs/' + encodeURIComponent(id) + '/consent'; payload = { decision, reason }; }
    else if (decision === 'approved') { url = form.dataset.resume; payload = values; }
    else { url = form.dataset.cancel; payload = { reason }; }
    const r = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    const answer = await r.json().catch(() => null);
    form.querySelector('[role=status]').textContent = r.ok ? (decision === 'approved' ? 'Approved.' : 'Rejected.') : ((answer && answer.error && answer.error.message) || 'failed (' + r.status + ')');
    if (r.ok) for (const b of form.querySelectorAll('button')) b.disabled = true;
    if (!timer) tick();
  });
}

const cancelButton = document.getElementById('cancel');
if (cancelButton) cancelButton.addEventListener('click', async () => {
  message.textContent = '';
  try {
    await apiCall('/jobs_u/queue/cancel/' + encodeURIComponent(id), { method: 'POST' });
  } catch (e) { message.textContent = e.message; }
  tick();
});

function rerunPath() {
  return body.kind === 'flow' ? '/jobs/run/fv/' + encodeURIComponent(body.flowVersion) : '/jobs/run/h/' + encodeURIComponent(body.scriptHash);
}
async function rerun(args) {
  const newId = await postJson(rerunPath(), args, 'rerun');
  location.assign('/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(newId));
}
const again = document.getElementById('rerun');
if (again) again.addEventListener('click', () => rerun(job ? job.args || {} : {}).catch((e) => (message.textContent = e.message)));
const edit = document.getElementById('rerun-edit');
if (edit) edit.addEventListener('click', async () => {
  const form = document.getElementById('rerun-form');
  try {
    const schema = body.kind === 'flow'
      ? (await apiCall('/flows/get/' + body.path)).schema
      : (await apiCall('/scripts/get/h/' + encodeURIComponent(body.scriptHash))).schema;
    schemaForm(document.getElementById('rerun-fields'), schema, (job && job.args) || {});
    form.hidden = false;
    const first = form.querySelector('input, select, textarea');
    if (first) first.focus();
  } catch (e) { message.textContent = e.message; }
});
document.getElementById('rerun-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try { await rerun(readSchemaForm(document.getElementById('rerun-fields'))); } catch (e) { message.textContent = e.message; }
});

tick();
`;
const TEXT = CLIENT_HELPERS + FORM_SCRIPT + RUN_SCRIPT;
const SCRIPT = { text: TEXT, hash: hashOf(TEXT) };

export interface RunPageInput {
  workspace: string;
  username: string;
  job: Job;
  canCancel: boolean;
  /** Whether a re-run is offered: the caller may run what the job ran (a flow or a script, not a step). */
  canRerun: boolean;
  modules: FlowModule[] | null;
  /** The flow's failure module, shown apart in the graph. */
  failureModule?: FlowModule | null;
}

/** A cache hit's log line names the run whose result it is (core/jobs/result-cache.ts cacheHitLog). */
function cacheSource(j: Job): string | null {
  return /the result of job ([0-9a-f-]{36})/.exec(j.logs ?? '')?.[1] ?? null;
}

/** A workspace error handler's run names the run whose failure it handles (core/workspace/workspace-error-handler.ts). */
function handledFact(ws: string, j: Job): Markup | string {
  const failed = j.trigger === 'error_handler' && !j.deleted ? j.args?.job_id : undefined;
  if (typeof failed !== 'string' || !/^[0-9a-f-]{36}$/.test(failed)) return '';
  return html`<dt>Handles</dt><dd id="handles">the failure of <a href="/w/${ws}/run/${encodeURIComponent(failed)}">run ${failed}</a></dd>`;
}

function cacheFact(ws: string, source: string | null): Markup {
  const from = source ? html`the result of <a href="/w/${ws}/run/${encodeURIComponent(source)}">run ${source}</a>` : 'a kept result';
  return html`<dt>Result cache</dt><dd id="cache-fact">cache hit: nothing ran; ${from} (cache_ttl)</dd>`;
}

export function renderRunPage(p: RunPageInput): string {
  const j = p.job;
  const ws = encodeURIComponent(p.workspace);
  const graph: Markup | string = p.modules ? html`<section class="graph" aria-label="Flow graph"><h2>Steps</h2><div class="split"><div>${flowGraphSvg(p.modules, () => 'pending', { failureModule: p.failureModule, forRun: true })}</div>
<div id="step" hidden><h3 id="step-title"></h3><label for="step-pick">Iteration or branch</label><select id="step-pick" hidden></select><div id="step-detail"></div></div></div></section>` : html`<select id="step-pick" hidden></select>`;
  const body = html`<h1><span class="muted">${j.kind}</span> ${j.script_path}</h1>
<p><span id="status" class="status s-${j.status}">${j.status}</span>${j.cache_hit ? html` <span id="cache-hit" class="status s-cache_hit">cache hit</span>` : ''} <code>${j.id}</code>${j.parent_job ? html` · step of <a href="/w/${ws}/run/${encodeURIComponent(j.parent_job)}">${j.parent_job}</a>` : ''}</p>
<div class="toolbar">${p.canCancel ? html`<button type="button" id="cancel" class="danger">Cancel</button>` : ''}
${p.canRerun ? html`<button type="button" id="rerun">Re-run with the same arguments</button><button type="button" id="rerun-edit">Re-run with edited arguments…</button>` : ''}</div>
<form id="rerun-form" hidden aria-label="Re-run with edited arguments"><div id="rerun-fields"></div><button type="submit">Run</button></form>
<p id="message" role="alert"></p>
<div id="approval" aria-live="polite"></div>
<dl class="facts"><dt>Started by</dt><dd>${j.created_by}</dd><dt>Trigger</dt><dd id="trigger">${j.trigger ?? 'not recorded'}</dd><dt>Queued</dt><dd id="created"></dd><dt>Started</dt><dd id="started"></dd><dt>Ended</dt><dd id="ended"></dd>
<dt>Queue delay</dt><dd id="delay"></dd><dt>Run time</dt><dd id="runtime"></dd><dt>Attempts</dt><dd id="attempts"></dd>${j.cache_hit ? cacheFact(ws, cacheSource(j)) : ''}${handledFact(ws, j)}${j.parent_job === null ? html`<dt id="handlers-dt" hidden>Handlers</dt><dd id="handlers" hidden></dd>` : ''}${j.kind === 'flow' ? '' : html`<dt>Language</dt><dd>${languageName(j.language)}</dd>`}</dl>
${graph}
<h2>Arguments</h2><div id="args"></div>
<section id="result-box" hidden><h2>Result</h2><div id="result"></div></section>
<h2>Logs</h2><pre id="logs" class="logs" aria-live="off"></pre>
${p.modules ? html`<h2>Approvals</h2><ul id="audit"><li class="muted">none</li></ul><h2>Retries, waits and stops</h2><ul id="events"><li class="muted">none</li></ul>` : html`<ul id="audit" hidden></ul><ul id="events" hidden></ul>`}`;
  return renderPage({
    title: `Run ${j.id}`,
    workspace: p.workspace,
    username: p.username,
    script: SCRIPT,
    data: { run: j.id, kind: j.kind, path: j.script_path, 'script-hash': j.script_hash ?? '', 'flow-version': j.flow_version === null ? '' : String(j.flow_version) },
    body,
  });
}
