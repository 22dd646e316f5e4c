import { approvalForm, approveStep, cancelJob, decideConsent, getFlow, getJob, getScriptVersion, listRuns, logUpdate, rejectStep, run, subflowRuns, type RunTarget } from './console-api.js';
import { byId, el, messageOf, readSchemaForm, schemaForm, showJson } from './page-helpers.js';
import { collectFields, fillDatetimes } from './form-fields.js';
import type { FlowStatusView, JobWithFlowStatus } from '../../../core/views/job-view.js';
import type { RunPageView } from '../../../core/views/run-views.js';

/**
 * `/w/<ws>/run/<id>` (run-page.ts renders it): reads the job from `jobs_u/get/<id>` and its logs
 * (as coloured HTML from the page's logs route) at most once a second, only while the run is
 * unfinished and the page visible; colours the flow graph's steps by the run's `flow_status` (and
 * the steps inside loops and branches by their runs); opens a step's jobs; shows the approve /
 * reject form this person may use; cancels and re-runs. Typed by the API's views through
 * console-api.ts; bundled by bin/build.js (console-assets/run-page.js).
 */

type Job = JobWithFlowStatus;
const body = document.body.dataset;
const ws = body.workspace ?? '';
const id = body.run ?? '';
const message = byId('message');
const FINISHED: string[] = ['success', 'failed', 'canceled'];
let logOffset = 0;
let job: Job | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;
let selected: string | null = null;
const runHref = (runId: string) => '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(runId);

// The console's one time format (time-format.ts): UTC, to the second.
const when = (t: string | null | undefined) => (t ? t.replace('T', ' ').slice(0, 19) : '—');
const span = (a: string | null, b: string | null) => (a && b ? ((Date.parse(b) - Date.parse(a)) / 1000).toFixed(2) + ' s' : '—');
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A step's error as a flow's result or a failure module's input carries it. */
interface StepError {
  name?: string;
  message?: string;
  step_id?: string;
  failure_module_error?: unknown;
}
const errorIn = (v: unknown): StepError | null => (isRecord(v) && isRecord(v.error) ? (v.error as StepError) : null);

/** The error that ended the flow, with the step it came from (the failure module's input when it ran). */
const flowError = (j: Job): StepError | null => errorIn(j.flow_status?.failure_module ? j.flow_status.failure_module.error : j.result);
const failureModuleFailed = (j: Job) => errorIn(j.result)?.failure_module_error !== undefined;
const timedOut = (e: unknown) => isRecord(e) && e.name === 'TimeoutError';

function moduleStatuses(j: Job): Record<string, string> {
  const fs = j.flow_status;
  const out: Record<string, string> = {};
  if (!fs) return out;
  const finished = FINISHED.includes(j.status);
  const error = flowError(j);
  fs.modules.forEach((m, i) => {
    const result = fs.results[m];
    if (fs.skipped?.includes(m)) out[m] = 'skipped';
    else if (finished && i === fs.step && j.status !== 'success' && error && error.step_id === m && timedOut(error)) out[m] = 'timed_out';
    else if (isRecord(result) && timedOut(result.error)) out[m] = 'timed_out';
    else if (fs.wait?.reason === 'retry' && fs.wait.module === m) out[m] = 'retrying';
    else if (i < fs.step) out[m] = 'success';
    // The flow sleeps after the step before: this one has not started.
    else if (i === fs.step && !finished && fs.wait?.reason === 'sleep' && fs.wait.module !== m) out[m] = 'pending';
    else if (i === fs.step) {
      if (finished) out[m] = j.status;
      else if (fs.suspend?.module === m) out[m] = 'suspended';
      else if (fs.gate?.module === m) out[m] = 'awaiting_approval';
      else out[m] = 'running';
    } else if (!finished) out[m] = 'pending';
    // A finished run's later steps: skipped by an early stop, or never reached (the flow failed or was canceled first).
    else out[m] = j.status === 'success' && fs.stopped_early ? 'skipped' : 'not_run';
  });
  const handler = document.querySelector<SVGElement>('.graph [data-failure-module]');
  const handlerId = handler?.dataset.module;
  if (handlerId) {
    if (!fs.failure_module) out[handlerId] = finished ? 'not_needed' : 'pending';
    else if (!finished) out[handlerId] = 'running';
    else out[handlerId] = failureModuleFailed(j) ? 'failed' : 'success';
  }
  return out;
}

/** What a step's node says under its status: its attempts, a cache hit, the stop it made, its sleep, a while loop's iteration. */
function moduleNotes(fs: FlowStatusView | undefined): Record<string, string[]> {
  const notes: Record<string, string[]> = {};
  const add = (m: string, text: string) => (notes[m] ??= []).push(text);
  if (!fs) return notes;
  for (const [m, list] of Object.entries(fs.attempts ?? {})) if (list.length) add(m, 'attempt ' + list.length);
  for (const m of Object.keys(fs.cache_hits ?? {})) add(m, 'cache hit');
  if (fs.stop) add(fs.stop.module, 'stopped the flow');
  if (fs.wait?.reason === 'sleep') add(fs.wait.module, 'sleeping until ' + when(fs.wait.until).slice(11));
  if (fs.iteration) add(fs.iteration.module, 'iteration ' + fs.iteration.index);
  return notes;
}

function paint(node: SVGElement, s: string, said: string): void {
  node.setAttribute('class', (node.getAttribute('class') ?? '').replace(/ s-[a-z_]+/, '') + ' s-' + s);
  const status = node.querySelector('.st');
  if (status) status.textContent = s.replace('_', ' ');
  const line = node.querySelector('.notes');
  if (line) line.textContent = said;
  node.setAttribute('aria-label', 'step ' + (node.dataset.module ?? '') + ': ' + s.replace('_', ' ') + (said ? ' · ' + said : ''));
}

// Steps inside loops and branches: their statuses come from the runs of the iterations and
// branches (each a flow run of its own, listed by /subflows), worst first across them.
const WORST_FIRST = ['failed', 'timed_out', 'canceled', 'running', 'retrying', 'suspended', 'awaiting_approval', 'pending', 'success', 'skipped', 'not_run'];
const worse = (a: string | undefined, b: string) => (a === undefined ? b : WORST_FIRST.indexOf(b) < WORST_FIRST.indexOf(a) ? b : a);
let nestedJobs: Record<string, string[]> = {};
let nestedBusy = false;

async function paintNested(top: Record<string, string>): Promise<void> {
  const nodes = document.querySelectorAll<SVGElement>('.graph [data-within]');
  if (nodes.length === 0 || nestedBusy) return;
  nestedBusy = true;
  try {
    const children = await subflowRuns(id).catch(() => null);
    if (!children) return;
    const statuses: Record<string, string> = {};
    const jobs: Record<string, string[]> = {};
    for (const child of children) {
      const inner = child.flow_status;
      if (!inner) continue;
      const own = moduleStatuses(child);
      for (const step of inner.modules) {
        statuses[step] = worse(statuses[step], own[step] || 'pending');
        jobs[step] = (jobs[step] ?? []).concat(inner.module_jobs[step] ?? []);
      }
    }
    nestedJobs = jobs;
    for (const node of nodes) {
      // Never started: as its loop or branch step when that was skipped or not reached.
      const outer = top[node.dataset.within ?? ''];
      paint(node, statuses[node.dataset.module ?? ''] || (outer === 'skipped' || outer === 'not_run' ? outer : 'pending'), '');
    }
  } finally {
    nestedBusy = false;
  }
}

function render(j: Job): void {
  job = j;
  const badge = byId('status');
  badge.textContent = j.status;
  badge.className = 'status s-' + j.status;
  byId('created').textContent = when(j.created_at);
  byId('started').textContent = when(j.started_at);
  byId('ended').textContent = when(j.completed_at);
  byId('delay').textContent = span(j.created_at, j.started_at);
  byId('runtime').textContent = span(j.started_at, j.completed_at);
  byId('attempts').textContent = String(j.attempts);
  showJson(byId('args'), j.args);
  const finished = FINISHED.includes(j.status);
  byId('result-box').hidden = !finished;
  if (finished) showJson(byId('result'), j.deleted ? '(deleted after use)' : j.result);
  const cancel = document.getElementById('cancel');
  if (cancel) cancel.hidden = finished;
  const statuses = moduleStatuses(j);
  const notes = moduleNotes(j.flow_status);
  for (const node of document.querySelectorAll<SVGElement>('.graph [data-module]:not([data-within])')) {
    const module = node.dataset.module ?? '';
    paint(node, statuses[module] || 'pending', (notes[module] ?? []).join(' · '));
  }
  void paintNested(statuses);
  const waiting = j.status === 'suspended' || j.status === 'awaiting_approval';
  const approval = byId('approval');
  if (waiting && approval.dataset.loaded !== j.status) void loadApproval(j.status);
  // A form this person decided on stays, to say what became of the decision even when the run moved
  // on before the answer came back.
  if (!waiting) {
    if (!approval.dataset.decided) approval.replaceChildren();
    approval.dataset.loaded = '';
  }
  const fs = j.flow_status;
  if (fs?.audit.length) {
    byId('audit').replaceChildren(...fs.audit.map((e) => el('li', { text: [e.at ? when(e.at) : '', e.step, e.event, e.who ?? '', e.via, e.reason ?? '', e.values ? JSON.stringify(e.values) : ''].filter(Boolean).join(' · ') })));
  }
  if (fs) byId('events').replaceChildren(...flowEvents(j, fs).map((text) => el('li', { text })));
  if (selected) void showStep(selected);
  if (finished && !handlersLooked) {
    handlersLooked = true;
    void loadHandlers(j);
  }
}

/**
 * The handlers that heard of this run's end: the workspace error handler and its schedule's
 * on_failure / on_recovery, found by the job_id they were given. They start just after the run
 * ends, so the page looks again (once a second, 30 times at most) until they are there and done.
 */
let handlersLooked = false;
let handlerLooks = 0;
async function loadHandlers(j: Job): Promise<void> {
  const box = document.getElementById('handlers');
  if (!box || (j.status !== 'failed' && !j.schedule_path)) return;
  const args = JSON.stringify({ job_id: j.id });
  const found: RunPageView['runs'] = [];
  try {
    for (const trigger of ['error_handler', 'schedule']) found.push(...(await listRuns(new URLSearchParams({ trigger, args, per_page: '20' }))).runs);
  } catch (e) {
    message.textContent = messageOf(e);
    return;
  }
  const handlers = found.filter((r) => r.id !== j.id);
  if (handlers.length) {
    box.replaceChildren(...handlers.map((r) => el('div', {}, el('a', { href: runHref(r.id), text: r.path }), ' ', el('span', { class: 'status s-' + r.status, text: r.status }), ' (' + (r.trigger === 'error_handler' ? 'workspace error handler' : 'schedule handler') + ')')));
    box.hidden = false;
    byId('handlers-dt').hidden = false;
  }
  const waiting = handlers.length ? handlers.some((r) => !FINISHED.includes(r.status)) : j.status === 'failed';
  if (waiting && ++handlerLooks < 30 && !document.hidden) setTimeout(() => void loadHandlers(j), 1000);
}

/** What the flow's failure settings did: attempts, waits, skips, stops, the failure module (docs/flows.md). */
function flowEvents(j: Job, fs: FlowStatusView): string[] {
  const lines: string[] = [];
  const said = (e: unknown) => (isRecord(e) && e.message ? String(e.message) : e === undefined ? '' : JSON.stringify(e));
  for (const [step, attempts] of Object.entries(fs.attempts ?? {})) {
    for (const a of attempts) lines.push([when(a.at), 'step ' + step, 'attempt ' + a.attempt, a.status, a.error !== undefined ? said(a.error) : '', a.retry_at ? 'next attempt at ' + when(a.retry_at) : ''].filter(Boolean).join(' · '));
  }
  for (const [step, hit] of Object.entries(fs.cache_hits ?? {})) lines.push('step ' + step + ' answered from its cache (job ' + hit + '): nothing ran');
  if (fs.wait) lines.push('waiting until ' + when(fs.wait.until) + ' · ' + (fs.wait.reason === 'retry' ? 'before retrying step ' : 'sleep after step ') + fs.wait.module);
  for (const m of fs.skipped ?? []) lines.push('step ' + m + ' skipped (skip_if)');
  if (fs.stop) lines.push('flow stopped after step ' + fs.stop.module + (fs.stop.skipped ? ' (skipped)' : '') + (fs.stop.error_message ? ' · ' + fs.stop.error_message : ''));
  if (fs.iteration) lines.push('while loop ' + fs.iteration.module + ' · iteration ' + fs.iteration.index);
  const finished = FINISHED.includes(j.status);
  const error = flowError(j);
  if (error?.step_id && finished && j.status !== 'success') lines.push('step ' + error.step_id + (timedOut(error) ? ' timed out' : ' failed') + ' · ' + (error.name ? error.name + ': ' : '') + said(error));
  const handled = fs.failure_module?.error;
  if (fs.failure_module) lines.push('failure module ' + fs.failure_module.module + ' ran for step ' + fs.failure_module.step_id + ' · ' + said(isRecord(handled) ? handled.error : handled ? undefined : handled) + (finished ? (failureModuleFailed(j) ? ' · it failed too' : ' · its result is the result of the flow') : ' · running'));
  return lines.length ? lines : ['none'];
}

async function pullLogs(): Promise<void> {
  const update = await logUpdate(id, logOffset).catch(() => null);
  if (!update) return;
  if (update.html) byId('logs').insertAdjacentHTML('beforeend', update.html);
  logOffset = update.log_offset;
}

async function tick(): Promise<void> {
  timer = null;
  try {
    render(await getJob(id));
    await pullLogs();
  } catch (e) {
    message.textContent = messageOf(e);
  }
  schedule();
}
function schedule(): void {
  if (timer || document.hidden || (job && FINISHED.includes(job.status))) return;
  timer = setTimeout(() => void tick(), 1000);
}
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && !timer) void tick();
});

async function showStep(moduleId: string): Promise<void> {
  selected = moduleId;
  byId('step').hidden = false;
  byId('step-title').textContent = 'Step ' + moduleId;
  const ids = job?.flow_status?.module_jobs[moduleId] ?? nestedJobs[moduleId] ?? [];
  const picker = byId<HTMLSelectElement>('step-pick');
  const current = picker.value;
  picker.replaceChildren(...ids.map((s, i) => el('option', { value: s, text: (ids.length > 1 ? 'attempt / iteration / branch ' + i + ': ' : '') + s, selected: s === current })));
  picker.hidden = ids.length < 2;
  const detail = byId('step-detail');
  const results = job?.flow_status?.results;
  const has = !!results && Object.prototype.hasOwnProperty.call(results, moduleId) && results[moduleId] !== undefined;
  const result = results?.[moduleId];
  if (ids.length === 0) {
    const shown = el('div');
    if (has) showJson(shown, result);
    detail.replaceChildren(has ? shown : el('p', { class: 'muted', text: 'Not run yet.' }));
    return;
  }
  const stepId = picker.value || ids[0];
  try {
    const step = await getJob(stepId);
    const link = el('a', { href: runHref(stepId), text: 'open step run ' + stepId });
    const args = el('div');
    showJson(args, step.args);
    const res = el('div');
    showJson(res, step.result);
    const moduleResult = el('div');
    if (has) showJson(moduleResult, result);
    detail.replaceChildren(
      ...(has ? [el('h4', { text: 'Step result' }), moduleResult] : []),
      el('p', {}, el('span', { class: 'status s-' + step.status, text: step.status }), ' ', link),
      el('h4', { text: 'Arguments' }), args, el('h4', { text: 'Result' }), res, el('h4', { text: 'Logs' }), el('pre', { class: 'logs', text: step.logs || '' }),
    );
  } catch (e) {
    detail.replaceChildren(el('p', { text: messageOf(e) }));
  }
}
byId('step-pick').addEventListener('change', () => {
  if (selected) void showStep(selected);
});
for (const node of document.querySelectorAll<SVGElement>('.graph [data-module]')) {
  const module = node.dataset.module ?? '';
  node.addEventListener('click', () => void showStep(module));
  node.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      void showStep(module);
    }
  });
}

/** The approve / reject form this person may use (approval-fragment.ts), posted to the gate's consent endpoint or the step's signed URLs. */
async function loadApproval(status: string): Promise<void> {
  const box = byId('approval');
  box.dataset.loaded = status;
  // The console built this markup with every value escaped.
  box.innerHTML = await approvalForm(id);
  delete box.dataset.decided;
  const form = box.querySelector('form');
  if (!form) return;
  fillDatetimes(form);
  const said = form.querySelector('[role=status]');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const pressed = (event.submitter as HTMLButtonElement | null)?.value;
    if (pressed !== 'approved' && pressed !== 'rejected') return;
    const decision = pressed;
    const reason = form.querySelector<HTMLTextAreaElement>('[name=decision_reason]')?.value ?? '';
    let values: Record<string, unknown>;
    try {
      values = collectFields(form);
    } catch (e) {
      if (said) said.textContent = messageOf(e);
      return;
    }
    const { gate, resume, cancel } = form.dataset;
    box.dataset.decided = decision;
    const decided = gate ? decideConsent(id, decision, reason) : decision === 'approved' ? approveStep(resume ?? '', values) : rejectStep(cancel ?? '', reason);
    void decided
      .then(() => {
        if (said) said.textContent = decision === 'approved' ? 'Approved.' : 'Rejected.';
        for (const b of form.querySelectorAll('button')) b.disabled = true;
      })
      .catch((e: unknown) => {
        if (said) said.textContent = messageOf(e);
      })
      .finally(() => {
        if (!timer) void tick();
      });
  });
}

const cancelButton = document.getElementById('cancel');
cancelButton?.addEventListener('click', () => {
  message.textContent = '';
  void cancelJob(id)
    .catch((e: unknown) => {
      message.textContent = messageOf(e);
    })
    .finally(() => void tick());
});

/** What this run ran: the flow version or the script version, run again as it was. */
const rerunTarget = (): RunTarget => (body.kind === 'flow' ? { flowVersion: body.flowVersion ?? '' } : { hash: body.scriptHash ?? '' });
async function rerun(args: Record<string, unknown>): Promise<void> {
  const newId = await run(rerunTarget(), args, 'rerun');
  location.assign(runHref(newId));
}
document.getElementById('rerun')?.addEventListener('click', () => {
  rerun(job?.args ?? {}).catch((e: unknown) => (message.textContent = messageOf(e)));
});
document.getElementById('rerun-edit')?.addEventListener('click', () => {
  const form = byId('rerun-form');
  const schema = body.kind === 'flow' ? getFlow(body.path ?? '').then((f) => f.schema) : getScriptVersion(body.scriptHash ?? '').then((s) => s.schema);
  schema
    .then((s) => {
      schemaForm(byId('rerun-fields'), s, job?.args ?? {});
      form.hidden = false;
      form.querySelector<HTMLElement>('input, select, textarea')?.focus();
    })
    .catch((e: unknown) => (message.textContent = messageOf(e)));
});
byId('rerun-form').addEventListener('submit', (event) => {
  event.preventDefault();
  try {
    rerun(readSchemaForm(byId('rerun-fields'))).catch((e: unknown) => (message.textContent = messageOf(e)));
  } catch (e) {
    message.textContent = messageOf(e);
  }
});

void tick();
