/**
 * The flow editor's browser bundle (bin/build.js → dist/console-assets/flow-editor.js, served by
 * svc itself): the flow's YAML in CodeMirror, YAML read and edited with the `yaml` package (an
 * edit from the graph or a step's panel changes only the node it is about, so comments and the
 * rest of the text stay), and the console's own flow graph (flow-graph.ts, laid out by dagre)
 * drawn from the YAML as it is. It sets `window.svcFlowEditor` (typed as FlowEditorLibrary); the
 * page's own bundle (flow-editor-page.ts) does the rest, and keeps the YAML editable in its
 * textarea when this one did not load.
 */
import { EditorState, Transaction } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { StreamLanguage } from '@codemirror/language';
import { yaml as yamlMode } from '@codemirror/legacy-modes/mode/yaml';
import { isCollection, isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { FlowModule } from '../../../core/flows/definition.js';
import { flowGraphSvg } from '../flow-graph.js';
import { editorBasics } from './editor-basics.js';

type Path = (string | number)[];
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value.modules.1.value.content` → ['value', 'modules', 1, 'value', 'content']. */
function pathOf(field: string): Path {
  return field.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function read(text: string): { doc: Document; lines: LineCounter } {
  const lines = new LineCounter();
  return { doc: parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true }), lines };
}

/** The YAML as a value, or the first syntax error with its line. */
function parse(text: string): { value: unknown; error: { message: string; line: number | null } | null } {
  const { doc } = read(text);
  const first = doc.errors[0];
  if (first) return { value: null, error: { message: first.message.split('\n')[0], line: first.linePos?.[0].line ?? null } };
  return { value: doc.toJS({ maxAliasCount: 50 }), error: null };
}

/** The line a field starts on, or that of the nearest enclosing field the YAML has. */
function lineOf(text: string, field: string): number | null {
  const { doc, lines } = read(text);
  const path = pathOf(field);
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && node.range) return lines.linePos(node.range[0]).line;
  }
  return null;
}

export type Edit =
  | { op: 'set'; field: string; value: unknown }
  | { op: 'insert'; list: string; index: number; value: unknown }
  | { op: 'remove'; list: string; index: number }
  | { op: 'move'; list: string; from: number; to: number };

/**
 * An empty `[]` or `{}` that an edit fills becomes a block (one item a line), as the rest of the
 * flow's YAML is: a step added to an empty loop is not written inline.
 */
function unflow(doc: Document, path: Path): void {
  for (let n = 0; n <= path.length; n++) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isCollection(node) && node.flow) node.flow = false;
  }
}

/** The YAML with one edit made; the rest of the text (comments, order, style) kept. */
function edit(text: string, change: Edit): string {
  const { doc } = read(text);
  if (doc.errors.length) throw new Error('fix the YAML first: ' + doc.errors[0].message.split('\n')[0]);
  if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as typeof doc.contents;
  if (change.op === 'set') {
    const path = pathOf(change.field);
    if (change.value === undefined) doc.deleteIn(path);
    else {
      doc.setIn(path, doc.createNode(change.value));
      unflow(doc, path.slice(0, -1));
    }
    return doc.toString();
  }
  const path = pathOf(change.list);
  const seq = doc.getIn(path, true);
  if (change.op === 'insert') {
    if (!isSeq(seq)) doc.setIn(path, doc.createNode([change.value]));
    else seq.items.splice(Math.max(0, Math.min(change.index, seq.items.length)), 0, doc.createNode(change.value));
    unflow(doc, path);
    return doc.toString();
  }
  if (!isSeq(seq)) throw new Error(change.list + ' is not a list');
  if (change.op === 'remove') seq.items.splice(change.index, 1);
  else if (change.to >= 0 && change.to < seq.items.length) seq.items.splice(change.to, 0, ...seq.items.splice(change.from, 1));
  return doc.toString();
}

/**
 * Steps as the graph draws them, from YAML that need not be a valid flow yet: what is missing is
 * drawn as such rather than stopping the drawing (the API's check says what is wrong).
 */
function graphable(list: unknown): FlowModule[] {
  if (!Array.isArray(list)) return [];
  return list.map((m: unknown, i): FlowModule => {
    const o = isObj(m) ? m : {};
    const v = isObj(o.value) ? o.value : {};
    const type = typeof v.type === 'string' ? v.type : 'unknown';
    const arms = (branches: unknown) => (Array.isArray(branches) ? branches : []).map((b: unknown) => ({ expr: '', modules: graphable(isObj(b) ? b.modules : []) }));
    let value: Obj;
    if (type === 'branchone') value = { type, branches: arms(v.branches), default: graphable(v.default) };
    else if (type === 'branchall') value = { type, branches: arms(v.branches), parallel: true };
    else if (type === 'forloopflow' || type === 'whileloopflow') value = { type, modules: graphable(v.modules) };
    else if (type === 'rawscript') value = { type, language: String(v.language ?? '') };
    else value = { type };
    return {
      id: typeof o.id === 'string' && o.id ? o.id : `(step ${i + 1})`,
      ...(typeof o.summary === 'string' && o.summary ? { summary: o.summary } : {}),
      ...(isObj(o.suspend) ? { suspend: o.suspend as FlowModule['suspend'] } : {}),
      value: value as unknown as FlowModule['value'],
    };
  });
}

/** The graph's SVG markup (every label escaped by the console's html template). */
function graph(modules: unknown): string {
  return flowGraphSvg(graphable(modules), () => 'none', { editable: true }).toString();
}

/** The YAML editor the page's script drives (in the bundle: CodeMirror's; without it, the textarea). */
export interface YamlEditor {
  text(): string;
  setText(text: string): void;
  gotoLine(line: number): void;
}

export interface YamlEditorOptions {
  doc: string;
  nonce: string;
  label: string;
  describedBy?: string;
  onChange(text: string): void;
}

function createYaml(parent: HTMLElement, options: YamlEditorOptions): YamlEditor & { focus(): void } {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        ...editorBasics(options),
        StreamLanguage.define(yamlMode),
        EditorView.updateListener.of((update) => {
          // Only edits made in the editor: a text set from the graph or panel is already known.
          if (update.docChanged && update.transactions.some((t) => t.annotation(Transaction.userEvent) !== undefined)) {
            options.onChange(update.state.doc.toString());
          }
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText: (text: string) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
    /** Puts the cursor at the start of a line and shows it. */
    gotoLine(line: number) {
      const at = view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines))).from;
      view.dispatch({ selection: { anchor: at }, scrollIntoView: true });
      view.focus();
    },
  };
}

const library = { createYaml, parse, lineOf, edit, graph };
/** What this bundle gives the page's script, as `window.svcFlowEditor`. */
export type FlowEditorLibrary = typeof library;

(window as unknown as { svcFlowEditor: FlowEditorLibrary }).svcFlowEditor = library;
