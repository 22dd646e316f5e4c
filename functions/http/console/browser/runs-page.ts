import type uPlotClass from 'uplot';
import { cancelSelection, followRuns, listRuns } from './console-api.js';
import type { RunPageView } from '../../../core/views/run-views.js';
import { formatTime } from '../time-format.js';

/**
 * The runs page's script (`/w/<ws>/runs`, runs-page.ts renders the page): reads the list from
 * `GET jobs/runs` with the page's query, pages by cursor, follows `jobs/runs_sse` while the page
 * is visible (closed when hidden), cancels through `jobs/queue/cancel_selection`, and draws the
 * chart of the runs listed. Bundled for the browser by bin/build.js (console-assets/runs-page.js).
 */

type Run = RunPageView['runs'][number];

/** uPlot is loaded before this bundle by its own script tag (static-assets.ts). */
declare const uPlot: typeof uPlotClass;

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const rows = byId<HTMLTableSectionElement>('rows');
const message = byId('message');
const more = byId<HTMLButtonElement>('more');
const form = byId<HTMLFormElement>('filters');
const FILTERS = ['path', 'folder', 'status', 'user', 'kind', 'trigger', 'after', 'before', 'args', 'result'];
let cursor: string | null = null;
let pagesLoaded = 0;
let feed: EventSource | null = null;
// The runs shown, by id: what the chart draws.
const listed = new Map<string, Run>();

function filterQuery(): URLSearchParams {
  const q = new URLSearchParams();
  const here = new URLSearchParams(location.search);
  for (const name of FILTERS) {
    const v = here.get(name);
    if (v) q.set(name, v);
  }
  // Top-level runs unless asked for all: a flow's steps, branches and sub-flows are on its run page.
  if (here.get('all') !== '1') q.set('top_level', '1');
  return q;
}

function td(text: string, className?: string): HTMLTableCellElement {
  const cell = document.createElement('td');
  if (className) cell.className = className;
  cell.textContent = text;
  return cell;
}

function duration(ms: number | null): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

function row(run: Run): HTMLTableRowElement {
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
  link.href = '/w/' + encodeURIComponent(document.body.dataset.workspace ?? '') + '/run/' + encodeURIComponent(run.id);
  link.textContent = run.path;
  path.append(link);
  const args = td(run.args ? JSON.stringify(run.args).slice(0, 80) : '', 'wide');
  tr.append(pick, status, path, td(run.kind, 'wide'), td(run.trigger || '', 'trigger'), td(run.created_by), td(run.created_at.replace('T', ' ').slice(0, 19)), td(run.cache_hit ? 'cache hit' : duration(run.duration_ms), 'duration'), args);
  return tr;
}

function show(page: RunPageView, append: boolean): void {
  if (!append) {
    rows.replaceChildren();
    listed.clear();
  }
  for (const run of page.runs) {
    rows.append(row(run));
    listed.set(run.id, run);
  }
  drawChart([...listed.values()]);
  cursor = page.next_cursor;
  more.hidden = !cursor;
  byId('empty').hidden = rows.children.length > 0;
  byId('count').textContent = rows.children.length + (cursor ? '+' : '') + ' runs';
}

async function load(append: boolean): Promise<void> {
  message.textContent = '';
  const q = filterQuery();
  if (append && cursor) q.set('cursor', cursor);
  try {
    show(await listRuns(q), append);
    pagesLoaded = append ? pagesLoaded + 1 : 1;
  } catch (e) {
    message.textContent = (e as Error).message;
  }
}

// The feed sends the first page again when it changed: merged into what is shown, so rows already
// paged in stay, statuses change in place and new runs appear on top.
function merge(page: RunPageView): void {
  if (pagesLoaded <= 1) {
    show(page, false);
    return;
  }
  const shown = new Map([...rows.children].map((tr) => [(tr as HTMLElement).dataset.id, tr]));
  const fresh: HTMLTableRowElement[] = [];
  for (const run of page.runs) {
    const old = shown.get(run.id);
    const tr = row(run);
    if (old) old.replaceWith(tr);
    else fresh.push(tr);
    listed.set(run.id, run);
  }
  rows.prepend(...fresh);
  drawChart([...listed.values()]);
}

function follow(): void {
  if (feed || document.hidden) return;
  feed = followRuns(filterQuery(), merge);
}
function unfollow(): void {
  if (feed) {
    feed.close();
    feed = null;
  }
}
document.addEventListener('visibilitychange', () => (document.hidden ? unfollow() : follow()));

form.addEventListener('submit', (event) => {
  // Only the filters that are set go into the URL, so links stay short and readable.
  event.preventDefault();
  const q = new URLSearchParams();
  for (const name of FILTERS) {
    const v = (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    if (v) q.set(name, v);
  }
  if ((form.elements.namedItem('all') as HTMLInputElement).checked) q.set('all', '1');
  location.assign(location.pathname + (q.size ? '?' + q.toString() : ''));
});
more.addEventListener('click', () => void load(true));

const confirmBox = byId('confirm');
let pending: string[] = [];
function ask(ids: string[], text: string): void {
  pending = ids;
  byId('confirm-text').textContent = text;
  confirmBox.hidden = false;
  byId('confirm-yes').focus();
}
byId('cancel-selected').addEventListener('click', () => {
  const ids = [...rows.querySelectorAll<HTMLInputElement>('input[name=selected]:checked')].map((b) => b.value);
  if (ids.length === 0) {
    message.textContent = 'Select runs to cancel first.';
    return;
  }
  ask(ids, 'Cancel ' + ids.length + ' selected runs?');
});
byId('cancel-matching').addEventListener('click', () => void cancelMatching());
async function cancelMatching(): Promise<void> {
  message.textContent = '';
  const ids: string[] = [];
  let next: string | null = null;
  try {
    do {
      const q = filterQuery();
      q.set('per_page', '200');
      if (next) q.set('cursor', next);
      const page = await listRuns(q);
      for (const run of page.runs) if (run.can_cancel) ids.push(run.id);
      next = page.next_cursor;
    } while (next && ids.length < 10000);
  } catch (e) {
    message.textContent = (e as Error).message;
    return;
  }
  if (ids.length === 0) {
    message.textContent = 'No run matching these filters can be canceled.';
    return;
  }
  ask(ids, 'Cancel all ' + ids.length + ' runs matching the filters?');
}
byId('confirm-no').addEventListener('click', () => {
  confirmBox.hidden = true;
  pending = [];
});
byId('confirm-yes').addEventListener('click', () => void cancelPending());
async function cancelPending(): Promise<void> {
  confirmBox.hidden = true;
  let canceled = 0;
  const refused: BulkRefusal[] = [];
  try {
    for (let i = 0; i < pending.length; i += 1000) {
      const outcome = await cancelSelection(pending.slice(i, i + 1000));
      canceled += outcome.canceled.length;
      refused.push(...outcome.not_canceled);
    }
    byId('done').textContent = canceled + ' runs canceled' + (refused.length ? '; ' + refused.length + ' not: ' + refused[0].message : '') + '.';
  } catch (e) {
    message.textContent = (e as Error).message;
  }
  pending = [];
  await load(false);
}
type BulkRefusal = Awaited<ReturnType<typeof cancelSelection>>['not_canceled'][number];

// The chart: duration against start time of the runs the list shows, successes and failures as
// two series of points. Dragging across it selects a time range, which becomes the list's
// `after`/`before` filters in the URL, like any other filter.
const chartBox = byId('chart');
let chart: uPlotClass | null = null;

function chartData(runs: Run[]): [number[], (number | null)[], (number | null)[]] {
  // uPlot wants the x values ascending, one y array per series (null where a run is not in it).
  // A finished run that never started (a cache hit, a run canceled while queued) ran for 0 s.
  const points = runs
    .filter((r) => r.completed_at)
    .map((r) => ({ x: Date.parse(r.created_at) / 1000, y: (r.duration_ms || 0) / 1000, ok: r.status === 'success' }))
    .sort((a, b) => a.x - b.x);
  return [points.map((p) => p.x), points.map((p) => (p.ok ? p.y : null)), points.map((p) => (p.ok ? null : p.y))];
}

// A selected range sets the time filter: the page reloads with after/before in the URL.
function selectRange(u: uPlotClass): void {
  if (u.select.width < 2) return;
  const from = u.posToVal(u.select.left, 'x');
  const to = u.posToVal(u.select.left + u.select.width, 'x');
  const q = new URLSearchParams(location.search);
  q.delete('cursor');
  q.set('after', new Date(Math.floor(from * 1000)).toISOString());
  q.set('before', new Date(Math.ceil(to * 1000) + 1).toISOString());
  location.assign(location.pathname + '?' + q.toString());
}

// Follows the page's width (a phone turned, a window resized): the chart never overflows it.
window.addEventListener('resize', () => {
  if (chart && !chartBox.hidden) chart.setSize({ width: Math.max(280, chartBox.clientWidth), height: 200 });
});

function drawChart(runs: Run[]): void {
  const data = chartData(runs);
  const successes = data[1].filter((v) => v !== null).length;
  const failures = data[2].filter((v) => v !== null).length;
  chartBox.setAttribute(
    'aria-label',
    'Duration against start time of the ' + data[0].length + ' finished runs listed: ' + successes + ' succeeded, ' + failures + ' did not. Drag across it to filter by that time range.',
  );
  chartBox.dataset.points = String(data[0].length);
  chartBox.hidden = data[0].length === 0;
  if (chartBox.hidden) return;
  if (chart) {
    chart.setData(data);
    return;
  }
  const dot = (stroke: string, fill: string) => ({ stroke, fill, width: 0, paths: () => null, points: { show: true, size: 7, stroke, fill } });
  chart = new uPlot(
    {
      width: Math.max(280, chartBox.clientWidth),
      height: 200,
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: true } },
      // The console's times are UTC (time-format.ts): the axis's ticks and the legend too, not the browser's zone.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      axes: [{}, { label: 'seconds', size: 60 }],
      series: [{ label: 'started (UTC)', value: (_u, ts) => (ts === null ? '--' : formatTime(new Date(ts * 1000).toISOString())) }, { label: 'success', ...dot('#1b5e20', '#1b5e20') }, { label: 'failed or canceled', ...dot('#b00020', '#b00020') }],
      hooks: { setSelect: [selectRange] },
    },
    data,
    chartBox,
  );
}

void load(false).then(follow);
