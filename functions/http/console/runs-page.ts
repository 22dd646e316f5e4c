import { html } from '../html.js';
import { RUN_STATUSES, type RunFilter } from '../../core/console/run-filter.js';
import { JOB_KINDS, JOB_TRIGGERS } from '../../ports.js';
import { renderPage } from './layout.js';
import { consoleBundle, uplotScript, uplotStyle } from './static-assets.js';

/**
 * `/w/<ws>/runs`: the run list, top-level runs unless `all=1` (flow steps, branches and sub-flows
 * are on their flow's run page). The filter form is a GET form, so every filter is in the URL and a
 * filtered view can be linked and reloaded; its script (browser/runs-page.ts, bundled and typed by
 * the API's views) reads the list from `GET /api/w/<ws>/jobs/runs` with the same query, pages by
 * cursor, follows `jobs/runs_sse` while the page is visible, and cancels through
 * `jobs/queue/cancel_selection`.
 */


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
  // The page's script is its typed bundle (browser/runs-page.ts), after uPlot, which draws its chart.
  return renderPage({ title: `Runs of ${workspace}`, workspace, username, script: null, data: {}, body, libraries: [uplot, consoleBundle('runs-page')], libraryStyle: uplotStyle() });
}
