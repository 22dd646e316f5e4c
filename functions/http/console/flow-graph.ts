import { Graph, layout } from '@dagrejs/dagre';
import type { FlowModule } from '../../core/flows/definition.js';
import { html, type Markup } from '../html.js';
import { languageName } from './language-names.js';

/**
 * A flow's modules as an SVG graph, laid out on the server by dagre (no layout code in the
 * browser): input, each module in order, branches fanning out and joining again, a loop's body
 * under its loop node, and the result; the flow's failure module stands apart, marked "on
 * failure". Each module node carries `data-module` and a status class the run page's script
 * updates as the run goes on; on a run's page a line under it for what happened to the step (its
 * attempts, a cache hit, the stop it made); and a line naming the step's failure settings (retry,
 * timeout, sleep, skip_if, stop_after_if, cache_ttl, priority, continue_on_error) so a reader sees
 * what will happen when it fails.
 */

interface NodeInfo {
  id: string;
  label: string;
  kind: string;
  module: string | null;
  settings?: string;
  /** The flow's failure module. */
  failure?: boolean;
}

const NODE_W = 180;
const NODE_H = 40;
/** One more line of 10px text under the status: the run's notes on the step, its settings. */
const LINE_H = 14;

export function flowGraphSvg(modules: FlowModule[], statusOf: (moduleId: string) => string, failureModule?: FlowModule | null, forRun = false): Markup {
  const g = new Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 28, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes = new Map<string, NodeInfo>();
  // A run's page keeps a line under each step's status for what happened to it (attempts, a cache hit, a stop).
  const notesLine = (info: NodeInfo) => forRun && info.module !== null;
  const heightOf = (info: NodeInfo) => NODE_H + (notesLine(info) ? LINE_H : 0) + (info.settings ? LINE_H : 0);
  const add = (info: NodeInfo) => {
    nodes.set(info.id, info);
    g.setNode(info.id, { width: NODE_W, height: heightOf(info) });
    return info.id;
  };
  const link = (from: string[], to: string) => from.forEach((f) => g.setEdge(f, to));

  let serial = 0;
  const chain = (list: FlowModule[], from: string[], path: string): string[] => {
    let ends = from;
    for (const m of list) {
      const id = `${path}${m.id}`;
      add({ id, label: `${m.id}${m.summary ? `: ${m.summary}` : ''}`, kind: kindOf(m), module: path === '' ? m.id : null, settings: settingsOf(m) });
      link(ends, id);
      ends = [id];
      const v = m.value;
      if (v.type === 'branchone' || v.type === 'branchall') {
        const arms = v.type === 'branchone' ? [...v.branches.map((b) => b.modules), v.default] : v.branches.map((b) => b.modules);
        const join = add({ id: `${id}/join${++serial}`, label: 'join', kind: 'join', module: null });
        arms.forEach((arm, i) => link(arm.length ? chain(arm, [id], `${id}/${i}/`) : [id], join));
        ends = [join];
      } else if ((v.type === 'forloopflow' || v.type === 'whileloopflow') && v.modules.length) {
        // The body hangs under the loop node; the flow goes on from the body's end.
        ends = chain(v.modules, [id], `${id}/body/`);
      }
    }
    return ends;
  };
  const input = add({ id: '*input', label: 'input', kind: 'io', module: null });
  const ends = chain(modules, [input], '');
  link(ends, add({ id: '*result', label: 'result', kind: 'io', module: null }));
  // Runs when any step fails, so it hangs off no step in particular.
  if (failureModule) add({ id: '*failure', label: `on failure: ${failureModule.id}`, kind: kindOf(failureModule), module: failureModule.id, settings: settingsOf(failureModule), failure: true });
  layout(g);

  const size = g.graph() as { width?: number; height?: number };
  const edges = g.edges().map((e: { v: string; w: string }) => {
    const points = (g.edge(e) as { points?: { x: number; y: number }[] }).points ?? [];
    return html`<path class="edge" d="${points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}" marker-end="url(#arrow)"/>`;
  });
  const boxes = [...nodes.values()].map((n) => {
    const at = g.node(n.id) as { x: number; y: number };
    const status = n.module ? statusOf(n.module) : 'none';
    const label = n.label.length > 26 ? `${n.label.slice(0, 25)}…` : n.label;
    const height = heightOf(n);
    const settingsY = 46 + (notesLine(n) ? LINE_H : 0);
    return html`<g class="node k-${n.kind}${n.failure ? ' failure' : ''} s-${status}"${n.module ? html` data-module="${n.module}"${n.failure ? html` data-failure-module="1"` : ''} tabindex="0" role="button" aria-label="${`step ${n.module}: ${status}`}"` : ''} transform="translate(${(at.x - NODE_W / 2).toFixed(1)},${(at.y - height / 2).toFixed(1)})"><title>${n.label}${n.settings ? ` (${n.settings})` : ''}</title><rect width="${NODE_W}" height="${height}" rx="6"/><text x="8" y="17">${label}</text><text x="8" y="32" class="sub">${n.kind}${n.module ? html` · <tspan class="st">${status}</tspan>` : ''}</text>${notesLine(n) ? html`<text x="8" y="46" class="notes"></text>` : ''}${n.settings ? html`<text x="8" y="${settingsY}" class="set">${n.settings.length > 32 ? `${n.settings.slice(0, 31)}…` : n.settings}</text>` : ''}</g>`;
  });
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${Math.ceil(size.width ?? 0)} ${Math.ceil(size.height ?? 0)}" width="${Math.ceil(size.width ?? 0)}" role="img" aria-label="flow graph"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>${edges}${boxes}</svg>`;
}

/** The step's failure and scheduling settings in a few words ("retry 3 · timeout 5s · cache"). */
function settingsOf(m: FlowModule): string {
  const parts: string[] = [];
  if (m.retry) parts.push(`retry ${(m.retry.constant?.attempts ?? 0) + (m.retry.exponential?.attempts ?? 0)}`);
  if (m.timeout !== undefined) parts.push(typeof m.timeout === 'number' ? `timeout ${m.timeout}s` : 'timeout');
  if (m.sleep !== undefined) parts.push(typeof m.sleep === 'number' ? `sleep ${m.sleep}s` : 'sleep');
  if (m.skip_if) parts.push('skip_if');
  if (m.stop_after_if || m.stop_after_all_iters_if) parts.push('stop_after_if');
  if (m.continue_on_error) parts.push('continue on error');
  if (m.cache_ttl) parts.push('cache');
  if (m.priority) parts.push(`priority ${m.priority}`);
  return parts.join(' · ');
}

function kindOf(m: FlowModule): string {
  if (m.suspend) return 'approval';
  switch (m.value.type) {
    case 'rawscript':
      return `inline ${languageName(m.value.language)}`;
    case 'forloopflow':
      return 'loop';
    case 'consentgate':
      return 'ConsentGate';
    default:
      return m.value.type;
  }
}
