import { Graph, layout } from '@dagrejs/dagre';
import type { FlowModule } from '../../core/flows/definition.js';
import { html, raw, type Markup } from '../html.js';
import { languageName } from './language-names.js';

/**
 * A flow's modules as an SVG graph, laid out on the server by dagre (no layout code in the
 * browser): input, each module in order, branches fanning out and joining again, a loop's body
 * under its loop node, and the result. Each module node carries `data-module` and a status class
 * the run page's script updates as the run goes on. For the flow editor (`editable`) every module,
 * nested ones too, is a focusable button carrying `data-step`, the field that holds it
 * (`value.modules.1.value.branches.0.modules.0`), and no status.
 */

interface NodeInfo {
  id: string;
  label: string;
  kind: string;
  module: string | null;
  /** The field holding the module (editor only). */
  field: string | null;
}

const NODE_W = 170;
const NODE_H = 40;

export function flowGraphSvg(modules: FlowModule[], statusOf: (moduleId: string) => string, options: { editable?: boolean } = {}): Markup {
  const g = new Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 28, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes = new Map<string, NodeInfo>();
  const add = (info: NodeInfo) => {
    nodes.set(info.id, info);
    g.setNode(info.id, { width: NODE_W, height: NODE_H });
    return info.id;
  };
  const link = (from: string[], to: string) => from.forEach((f) => g.setEdge(f, to));

  let serial = 0;
  const chain = (list: FlowModule[], from: string[], path: string, fieldAt: string): string[] => {
    let ends = from;
    for (const [index, m] of list.entries()) {
      const id = `${path}${m.id}`;
      const field = `${fieldAt}.${index}`;
      add({ id, label: `${m.id}${m.summary ? `: ${m.summary}` : ''}`, kind: kindOf(m), module: path === '' ? m.id : null, field });
      link(ends, id);
      ends = [id];
      const v = m.value;
      if (v.type === 'branchone' || v.type === 'branchall') {
        const arms = v.type === 'branchone' ? [...v.branches.map((b) => b.modules), v.default ?? []] : v.branches.map((b) => b.modules);
        const armField = (i: number) => (v.type === 'branchone' && i === v.branches.length ? `${field}.value.default` : `${field}.value.branches.${i}.modules`);
        const join = add({ id: `${id}/join${++serial}`, label: 'join', kind: 'join', module: null, field: null });
        arms.forEach((arm, i) => link(arm.length ? chain(arm, [id], `${id}/${i}/`, armField(i)) : [id], join));
        ends = [join];
      } else if ((v.type === 'forloopflow' || v.type === 'whileloopflow') && v.modules?.length) {
        // The body hangs under the loop node; the flow goes on from the body's end.
        ends = chain(v.modules, [id], `${id}/body/`, `${field}.value.modules`);
      }
    }
    return ends;
  };
  const input = add({ id: '*input', label: 'input', kind: 'io', module: null, field: null });
  const ends = chain(modules, [input], '', 'value.modules');
  link(ends, add({ id: '*result', label: 'result', kind: 'io', module: null, field: null }));
  layout(g);

  const size = g.graph() as { width?: number; height?: number };
  const edges = g.edges().map((e: { v: string; w: string }) => {
    const points = (g.edge(e) as { points?: { x: number; y: number }[] }).points ?? [];
    return html`<path class="edge" d="${points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}" marker-end="url(#arrow)"/>`;
  });
  const boxes = [...nodes.values()].map((n) => {
    const at = g.node(n.id) as { x: number; y: number };
    const label = n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label;
    const box = `transform="translate(${(at.x - NODE_W / 2).toFixed(1)},${(at.y - NODE_H / 2).toFixed(1)})"`;
    if (options.editable) {
      const button = n.field ? html` data-step="${n.field}" tabindex="0" role="button" aria-label="${`step ${n.label}, ${n.kind}`}"` : '';
      return html`<g class="node k-${n.kind.split(' ')[0]}"${button} ${raw(box)}><title>${n.label}</title><rect width="${NODE_W}" height="${NODE_H}" rx="6"/><text x="8" y="17">${label}</text><text x="8" y="32" class="sub">${n.kind}</text></g>`;
    }
    const status = n.module ? statusOf(n.module) : 'none';
    return html`<g class="node k-${n.kind} s-${status}"${n.module ? html` data-module="${n.module}" tabindex="0" role="button" aria-label="${`step ${n.module}: ${status}`}"` : ''} transform="translate(${(at.x - NODE_W / 2).toFixed(1)},${(at.y - NODE_H / 2).toFixed(1)})"><title>${n.label}</title><rect width="${NODE_W}" height="${NODE_H}" rx="6"/><text x="8" y="17">${label}</text><text x="8" y="32" class="sub">${n.kind}${n.module ? html` · <tspan class="st">${status}</tspan>` : ''}</text></g>`;
  });
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${Math.ceil(size.width ?? 0)} ${Math.ceil(size.height ?? 0)}" width="${Math.ceil(size.width ?? 0)}" role="img" aria-label="flow graph"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>${edges}${boxes}</svg>`;
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
