import { STEP_TEMPLATES } from '../flow-templates.js';
import { stepsWithProblems } from './flow-problems.js';
import { byId } from './page-helpers.js';
import { getAt, lengthAt, placeOf, type FlowEditorPage } from './flow-editor-context.js';

/**
 * The flow editor's graph (part of the page's bundle): drawn from the YAML by the editor bundle,
 * each step a focusable node that selects it (click, Enter or Space), moves it within its list
 * (Alt+↑/↓) or removes it (Delete); and the step actions the panel shares: add a step of a kind
 * with a free id, move, remove. Each is one edit of the YAML, which the graph and the check follow.
 */

/** The markup the graph's nodes were last built from: a redraw of the same keeps them. */
let drawnMarkup: string | null = null;

export function drawGraph(page: FlowEditorPage): void {
  if (!page.lib) return;
  const box = byId('graph');
  // The console's html template builds this markup with every label escaped (flow-graph.ts).
  const markup = page.lib.graph(getAt(page, 'value.modules'));
  // Nodes are replaced only when the graph changed: a redraw for a selection or the check's
  // answer (which comes while the user moves through the graph) that replaced them lost a click
  // pressed on a node and released on its replacement, and the keyboard's place in the graph.
  if (markup !== drawnMarkup || !box.querySelector('[data-step]')) buildNodes(page, box, markup);
  const invalid = stepsWithProblems(page.problems);
  for (const node of box.querySelectorAll('[data-step]')) {
    const field = node.getAttribute('data-step') ?? '';
    node.classList.toggle('selected', field === page.selected);
    node.classList.toggle('invalid', invalid.includes(field));
  }
}

function buildNodes(page: FlowEditorPage, box: HTMLElement, markup: string): void {
  // The step that had the keyboard gets it back from its new node.
  const focused = box.contains(document.activeElement) ? document.activeElement?.getAttribute('data-step') : null;
  box.innerHTML = markup;
  drawnMarkup = markup;
  for (const node of box.querySelectorAll('[data-step]')) {
    const field = node.getAttribute('data-step') ?? '';
    node.addEventListener('click', () => select(page, field, false));
    node.addEventListener('keydown', (event) => {
      const key = (event as KeyboardEvent).key;
      if (key === 'Enter' || key === ' ') {
        event.preventDefault();
        select(page, field, true);
      } else if ((event as KeyboardEvent).altKey && (key === 'ArrowUp' || key === 'ArrowDown')) {
        event.preventDefault();
        moveStep(page, field, key === 'ArrowUp' ? -1 : 1, null);
      } else if (key === 'Delete') {
        event.preventDefault();
        removeStep(page, field);
      }
    });
  }
  if (focused) focusStep(focused);
}

/** Selects a step: the graph marks it and the panel shows it (with the keyboard on its heading if asked). */
export function select(page: FlowEditorPage, field: string, moveFocus: boolean): void {
  page.selected = field;
  page.drawGraph();
  page.renderPanel();
  if (moveFocus) document.getElementById('step-heading')?.focus();
}

function focusStep(field: string): void {
  const node = [...byId('graph').querySelectorAll<SVGElement>('[data-step]')].find((n) => n.getAttribute('data-step') === field);
  node?.focus();
}

/** Every step id in use, nested ones too: a new step gets one that is free. */
function usedIds(page: FlowEditorPage): Set<string> {
  const ids = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      const { id } = value as { id?: unknown };
      if (typeof id === 'string') ids.add(id);
      Object.values(value).forEach(visit);
    }
  };
  visit(page.current.value);
  return ids;
}

/** A new step of a kind (STEP_TEMPLATES), with the first free id of its kind (`loop_1`, ...). */
function newStep(page: FlowEditorPage, kind: string): Record<string, unknown> {
  const template = STEP_TEMPLATES[kind];
  const ids = usedIds(page);
  let n = 1;
  while (ids.has(template.id + '_' + n)) n++;
  return { id: template.id + '_' + n, ...structuredClone(template.step) };
}

/** Adds a step of this kind to a list (a field such as value.modules) at an index; selects it. */
export function addStep(page: FlowEditorPage, list: string, index: number, kind: string): void {
  const at = Math.min(index, lengthAt(page, list));
  if (page.applyEdit({ op: 'insert', list, index: at, value: newStep(page, kind) })) {
    select(page, list + '.' + at, false);
    focusStep(list + '.' + at);
  }
}

/** Moves a step one place up (-1) or down (+1) in its list; the moved step stays selected. */
export function moveStep(page: FlowEditorPage, field: string, delta: number, focusId: string | null): void {
  const { list, index } = placeOf(field);
  const to = index + delta;
  if (to < 0 || to >= lengthAt(page, list)) return;
  if (!page.applyEdit({ op: 'move', list, from: index, to })) return;
  page.selected = list + '.' + to;
  page.drawGraph();
  page.renderPanel();
  const target = focusId ? document.getElementById(focusId) : null;
  if (target && !(target as HTMLButtonElement).disabled) target.focus();
  else focusStep(page.selected);
}

/** Removes a step; the keyboard goes to the step now in its place, or the one before, or "New step". */
export function removeStep(page: FlowEditorPage, field: string): void {
  const { list, index } = placeOf(field);
  if (!page.applyEdit({ op: 'remove', list, index })) return;
  page.selected = null;
  page.drawGraph();
  page.renderPanel();
  const left = lengthAt(page, list);
  if (left > 0) focusStep(list + '.' + Math.min(index, left - 1));
  else byId('add-kind').focus();
}
