import { el } from './page-helpers.js';
import type { FlowProblem } from './flow-editor-calls.js';

/**
 * The flow editor's list of problems (part of the page's bundle, flow-editor-page.ts; the graph
 * marks the steps `stepsWithProblems` names): the API's check (`flows/validate`, typed by its view) or the YAML's own
 * syntax error, each with where it is and buttons to select its step and to show its line.
 */

/** A problem to list: the API's, or the YAML's own (a message and a line). */
export type ShownProblem = Pick<FlowProblem, 'message'> & Partial<Pick<FlowProblem, 'field' | 'step'>> & { line?: number | null };

export interface ProblemActions {
  /** The YAML line a field is on, when the YAML has it. */
  lineOf(field: string): number | null;
  select(stepField: string): void;
  gotoLine(line: number): void;
}

export function showProblems(box: HTMLElement, list: ShownProblem[], actions: ProblemActions): void {
  if (list.length === 0) {
    box.replaceChildren(el('p', { class: 'muted', text: "The API's check finds no problem." }));
    return;
  }
  const items = list.map((p) => {
    const line = p.line || (p.field ? actions.lineOf(p.field) : null);
    const where = p.step ? 'Step ' + (p.step.id || '?') + ' (' + p.step.field + ')' : p.field ? p.field : '';
    const item = el('li', { class: 'bad' }, el('span', { text: (where ? where + ': ' : '') + p.message + (line ? ' (line ' + line + ')' : '') }));
    const step = p.step;
    if (step) {
      const button = el('button', { type: 'button', text: 'Select the step' });
      button.addEventListener('click', () => actions.select(step.field));
      item.append(' ', button);
    }
    if (line) {
      const go = el('button', { type: 'button', text: 'Show in the YAML' });
      go.addEventListener('click', () => actions.gotoLine(line));
      item.append(' ', go);
    }
    return item;
  });
  box.replaceChildren(el('p', { text: list.length + (list.length === 1 ? ' problem' : ' problems') + ' (a save would be refused):' }), el('ul', {}, ...items));
}

/** The fields (`value.modules.1`) of the steps that have a problem: the graph marks them. */
export function stepsWithProblems(list: ShownProblem[]): string[] {
  return list.flatMap((p) => (p.step ? [p.step.field] : []));
}
