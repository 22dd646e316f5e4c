import { Graph, layout } from '@dagrejs/dagre';
import type { FlowModule } from '../../core/flows/definition.js';
import { html, raw, type Markup } from '../html.js';
import { languageName } from './language-names.js';

/**
 * A flow's modules as an SVG graph, laid out on the server by dagre (no layout code in the
 * browser): input, each module in order, branches fanning out and joining again, a loop's body
 * under its loop node, and the result; the flow's failure module stands apart, marked "on
 * failure". Each module node, nested ones too (which also carry `data-within`, the top-level step they
 * run within), carries `data-module` and a status class the run page's script
 * updates as the run goes on; on a run's page a line under it for what happened to the step (its
 * attempts, a cache hit, the stop it made); and a line naming the step's failure settings (retry,
 * timeout, sleep, skip_if, stop_after_if, cache_ttl, priority, continue_on_error) so a reader sees
 * what will happen when it fails. For the flow editor
 * (`editable`) every module, nested ones too, is a focusable button carrying `data-step`, the field
 * that holds it (`value.modules.1.value.branches.0.modules.0`), and no status.
 */

interface NodeInfo {
  id: string;
  label: string;
  kind: string;
  module: string | null;
  settings?: string;
  /** The flow's failure module. */
  failure?: boolean;
  /** A step inside a loop or branch: the top-level step it runs within. */
  within?: string;
  /** The field holding the module (editor only). */
  field: string | null;
}

// Wide enough for a step's name and summary (LABEL_CHARS of 12px text) and its settings line.
const NODE_W = 240;
/** The longest label and settings line a node shows whole; longer ones end in an ellipsis inside the box. */
const LABEL_CHARS = 34;
const SETTINGS_CHARS = 42;
const NODE_H = 40;
/** One more line of 10px text under the status: the run's notes on the step, its settings. */
const LINE_H = 14;

export function flowGraphSvg(
  modules: FlowModule[],
  statusOf: (moduleId: string) => string,
  options: { editable?: boolean; failureModule?: FlowModule | null; forRun?: boolean } = {},
): Markup {
  const { failureModule, forRun = false } = options;
  const g = new Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 28, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes = new Map<string, NodeInfo>();
  // A run's page keeps a line under each step's status for what happened to it (attempts, a cache hit, a stop).
  const notesLine = (info: NodeInfo) => forRun && info.module !== null;
  // The editor's nodes are buttons of one size; the settings line is for readers of a flow or run.
  const heightOf = (info: NodeInfo) => NODE_H + (notesLine(info) ? LINE_H : 0) + (info.settings && !options.editable ? LINE_H : 0);
  const add = (info: NodeInfo) => {
    nodes.set(info.id, info);
    g.setNode(info.id, { width: NODE_W, height: heightOf(info) });
    return info.id;
  };
  const link = (from: string[], to: string) => from.forEach((f) => g.setEdge(f, to));

  let serial = 0;
  const chain = (list: FlowModule[], from: string[], path: string, fieldAt: string, within?: string): string[] => {
    let ends = from;
    for (const [index, m] of list.entries()) {
      const id = `${path}${m.id}`;
      const field = `${fieldAt}.${index}`;
      add({ id, label: `${m.id}${m.summary ? `: ${m.summary}` : ''}`, kind: kindOf(m), module: m.id, settings: settingsOf(m), field, within });
      link(ends, id);
      ends = [id];
      const v = m.value;
      if (v.type === 'branchone' || v.type === 'branchall') {
        const arms = v.type === 'branchone' ? [...v.branches.map((b) => b.modules), v.default ?? []] : v.branches.map((b) => b.modules);
        const armField = (i: number) => (v.type === 'branchone' && i === v.branches.length ? `${field}.value.default` : `${field}.value.branches.${i}.modules`);
        const join = add({ id: `${id}/join${++serial}`, label: 'join', kind: 'join', module: null, field: null });
        arms.forEach((arm, i) => link(arm.length ? chain(arm, [id], `${id}/${i}/`, armField(i), within ?? m.id) : [id], join));
        ends = [join];
      } else if ((v.type === 'forloopflow' || v.type === 'whileloopflow') && v.modules?.length) {
        // The body hangs under the loop node; the flow goes on from the body's end.
        ends = chain(v.modules, [id], `${id}/body/`, `${field}.value.modules`, within ?? m.id);
      }
    }
    return ends;
  };
  const input = add({ id: '*input', label: 'input', kind: 'io', module: null, field: null });
  const ends = chain(modules, [input], '', 'value.modules');
  link(ends, add({ id: '*result', label: 'result', kind: 'io', module: null, field: null }));
  // Runs when any step fails, so it hangs off no step in particular.
  if (failureModule) add({ id: '*failure', label: `on failure: ${failureModule.id}`, kind: kindOf(failureModule), module: failureModule.id, settings: settingsOf(failureModule), failure: true, field: null });
  layout(g);

  const size = g.graph() as { width?: number; height?: number };
  const edges = g.edges().map((e: { v: string; w: string }) => {
    const points = (g.edge(e) as { points?: { x: number; y: number }[] }).points ?? [];
    return html`<path class="edge" d="${points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}" marker-end="url(#arrow)"/>`;
  });
  const boxes = [...nodes.values()].map((n) => {
    const at = g.node(n.id) as { x: number; y: number };
    const label = shortened(n.label, LABEL_CHARS);
    const box = `transform="translate(${(at.x - NODE_W / 2).toFixed(1)},${(at.y - NODE_H / 2).toFixed(1)})"`;
    if (options.editable) {
      const button = n.field ? html` data-step="${n.field}" tabindex="0" role="button" aria-label="${`step ${n.label}, ${n.kind}`}"` : '';
      return html`<g class="node k-${n.kind.split(' ')[0]}"${button} ${raw(box)}><title>${n.label}</title><rect width="${NODE_W}" height="${NODE_H}" rx="6"/><text x="8" y="17">${label}</text><text x="8" y="32" class="sub">${n.kind}</text></g>`;
    }
    const status = n.module ? statusOf(n.module) : 'none';
    const height = heightOf(n);
    const settingsY = 46 + (notesLine(n) ? LINE_H : 0);
    return html`<g class="node k-${n.kind}${n.failure ? ' failure' : ''} s-${status}"${n.module ? html` data-module="${n.module}"${n.failure ? html` data-failure-module="1"` : ''}${n.within ? html` data-within="${n.within}"` : ''} tabindex="0" role="button" aria-label="${`step ${n.module}: ${status}`}"` : ''} transform="translate(${(at.x - NODE_W / 2).toFixed(1)},${(at.y - height / 2).toFixed(1)})"><title>${n.label}${n.settings ? ` (${n.settings})` : ''}</title><rect width="${NODE_W}" height="${height}" rx="6"/><text x="8" y="17">${label}</text><text x="8" y="32" class="sub">${n.kind}${n.module ? html` · <tspan class="st">${status}</tspan>` : ''}</text>${notesLine(n) ? html`<text x="8" y="46" class="notes"></text>` : ''}${n.settings ? html`<text x="8" y="${settingsY}" class="set">${shortened(n.settings, SETTINGS_CHARS)}</text>` : ''}</g>`;
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

function shortened(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}
