import type { FlowModule, ModuleValue, RetrySettings, SuspendSettings } from '../../../core/flows/definition.js';
import type { Edit, FlowEditorLibrary, YamlEditor } from './flow-editor.js';
import type { FlowProblem } from './flow-editor-calls.js';

/**
 * What the flow editor page's parts (its bundle: flow-editor-page.ts wires them) share: the flow
 * as last read from the YAML, the selected step, the API's last check, and the actions each part
 * asks of the others. Parts reach one another through this object rather than by importing each
 * other, so the graph, the panel and the save and run forms stay apart.
 */
export interface FlowEditorPage {
  /** The editor bundle (CodeMirror, yaml, the graph); undefined when it did not load. */
  readonly lib: FlowEditorLibrary | undefined;
  readonly yaml: YamlEditor;
  /** The flow as last read from the YAML: an object ({} when the YAML holds something else). */
  current: Record<string, unknown>;
  /** The selected step's field (`value.modules.1`), or null. */
  selected: string | null;
  /** What the API's last check found. */
  problems: FlowProblem[];
  /** Writes one edit into the YAML (the rest of the text kept); false, the reason shown, when it cannot be made. */
  applyEdit(change: Edit): boolean;
  drawGraph(): void;
  renderPanel(): void;
  select(field: string, moveFocus: boolean): void;
  /** Asks the API's check again now. */
  check(): void;
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A part of a flow as the YAML holds it: the fields the core's type names (so a renamed field
 * fails the compile here too), each still unknown, since the YAML need not be a valid flow yet.
 */
export type Draft<T> = { [K in T extends unknown ? keyof T : never]?: unknown };
export type StepDraft = Draft<FlowModule>;
export type StepValueDraft = Draft<ModuleValue>;
export type SuspendDraft = Draft<SuspendSettings>;
export type RetryDraft = Draft<RetrySettings>;

/** The field's value in the flow (`value.modules.1.value.content`), or undefined where there is none. */
export function getAt(page: FlowEditorPage, field: string): unknown {
  let node: unknown = page.current;
  for (const key of field.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Obj)[key];
  }
  return node;
}

/** The length of the list at a field; 0 when there is none. */
export function lengthAt(page: FlowEditorPage, list: string): number {
  const items = getAt(page, list);
  return Array.isArray(items) ? items.length : 0;
}

/** Where a step is: its list (value.modules) and its index there. */
export function placeOf(field: string): { list: string; index: number } {
  const dot = field.lastIndexOf('.');
  return { list: field.slice(0, dot), index: Number(field.slice(dot + 1)) };
}

/** A value as an input shows it: text as it is, nothing for none, anything else as JSON. */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
