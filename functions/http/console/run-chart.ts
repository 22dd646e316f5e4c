/**
 * The run list's chart (part of the runs page's script, drawn with uPlot, static-assets.ts):
 * duration against start time of the runs the list shows, successes and failures as two series of
 * points. Dragging across it selects a time range, which becomes the list's `after`/`before`
 * filters in the URL, like any other filter. `drawChart(runs)` redraws it from the shown runs.
 */
export const RUN_CHART_SCRIPT = `
const chartBox = document.getElementById('chart');
let chart = null;

function chartData(runs) {
  // uPlot wants the x values ascending, one y array per series (null where a run is not in it).
  // A finished run that never started (a cache hit, a run canceled while queued) ran for 0 s.
  const points = runs.filter((r) => r.completed_at)
    .map((r) => ({ x: Date.parse(r.created_at) / 1000, y: (r.duration_ms || 0) / 1000, ok: r.status === 'success' }))
    .sort((a, b) => a.x - b.x);
  return [points.map((p) => p.x), points.map((p) => (p.ok ? p.y : null)), points.map((p) => (p.ok ? null : p.y))];
}

// A selected range sets the time filter: the page reloads with after/before in the URL.
function selectRange(u) {
  if (u.select.width < 2) return;
  const from = u.posToVal(u.select.left, 'x');
  const to = u.posToVal(u.select.left + u.select.width, 'x');
  const q = new URLSearchParams(location.search);
  q.delete('cursor');
  q.set('after', new Date(Math.floor(from * 1000)).toISOString());
  q.set('before', new Date(Math.ceil(to * 1000) + 1).toISOString());
  location.assign(location.pathname + '?' + q);
}

// Follows the page's width (a phone turned, a window resized): the chart never overflows it.
window.addEventListener('resize', () => {
  if (chart && !chartBox.hidden) chart.setSize({ width: Math.max(280, chartBox.clientWidth), height: 200 });
});

function drawChart(runs) {
  const data = chartData(runs);
  const successes = data[1].filter((v) => v !== null).length;
  const failures = data[2].filter((v) => v !== null).length;
  chartBox.setAttribute('aria-label', 'Duration against start time of the ' + data[0].length + ' finished runs listed: ' + successes + ' succeeded, ' + failures + ' did not. Drag across it to filter by that time range.');
  chartBox.dataset.points = String(data[0].length);
  chartBox.hidden = data[0].length === 0;
  if (chartBox.hidden) return;
  if (chart) { chart.setData(data); return; }
  const dot = (stroke, fill) => ({ stroke, fill, width: 0, paths: () => null, points: { show: true, size: 7, stroke, fill } });
  chart = new uPlot({
    width: Math.max(280, chartBox.clientWidth),
    height: 200,
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: true } },
    axes: [{}, { label: 'seconds', size: 60 }],
    series: [{ label: 'started' }, { label: 'success', ...dot('#1b5e20', '#1b5e20') }, { label: 'failed or canceled', ...dot('#b00020', '#b00020') }],
    hooks: { setSelect: [selectRange] },
  }, data, chartBox);
}
`;
