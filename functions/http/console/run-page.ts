import { html, type Markup } from '../html.js';
import type { Job } from '../../ports.js';
import type { FlowModule } from '../../core/flows/definition.js';
import { flowGraphSvg } from './flow-graph.js';
import { renderPage } from './layout.js';
import { consoleBundle } from './static-assets.js';
import { languageName } from './language-names.js';

/**
 * `/w/<ws>/run/<id>`: one run. The page's script (browser/run-page.ts, bundled and typed by the
 * API's views) reads the job from `jobs_u/get/<id>` and its logs from the page's logs route at
 * most once a second, only while the run is unfinished and the page visible. A flow's graph is
 * laid out on the server; its nodes' statuses follow the run's `flow_status`. Actions are the
 * API's: cancel, approve or reject, re-run by hash or flow version with the same or edited
 * arguments.
 */

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
<p><span id="status" class="status s-${j.status}">${j.status}</span>${j.cache_hit ? html` <span id="cache-hit" class="status s-cache_hit">cache hit</span>` : ''} <code>${j.id}</code>${j.parent_job ? html` · step of <a href="/w/${ws}/run/${encodeURIComponent(j.parent_job)}">${j.parent_job}</a>` : ''}${j.started_by_job ? html` · started by <a id="started-by" href="/w/${ws}/run/${encodeURIComponent(j.started_by_job)}">${j.started_by_job}</a> with its token` : ''}</p>
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
    script: null,
    libraries: [consoleBundle('run-page')],
    data: { run: j.id, kind: j.kind, path: j.script_path, 'script-hash': j.script_hash ?? '', 'flow-version': j.flow_version === null ? '' : String(j.flow_version) },
    body,
  });
}
