/**
 * The script editor's browser bundle (built by bin/build.js with esbuild into
 * dist/console-assets/script-editor.js, served by svc itself, never a CDN): CodeMirror 6 with the
 * grammar of each script language, and the line diff of two versions. It sets `window.svcEditor`;
 * the page's own script (script-editor-page.ts) does the rest through the API.
 *
 * CodeMirror writes its theme into <style> elements: the page's CSP allows them by a nonce made
 * for each response (EditorView.cspNonce), and nothing else inline.
 */
import { EditorState, Compartment, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { indentOnInput, StreamLanguage } from '@codemirror/language';
import { javascript } from '@codemirror/lang-javascript';
import { python } from '@codemirror/lang-python';
import { go } from '@codemirror/lang-go';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { renderDiff } from './diff-view.js';
import { editorBasics } from './editor-basics.js';

/** The grammar for a stored language name (`python3`, `bun`, ...). */
function grammar(language: string): Extension {
  switch (language) {
    case 'python3':
      return python();
    case 'go':
      return go();
    case 'bash':
      return StreamLanguage.define(shell);
    default:
      return javascript({ typescript: true });
  }
}

export interface EditorOptions {
  doc: string;
  language: string;
  /** The CSP nonce CodeMirror's <style> elements carry. */
  nonce: string;
  /** The accessible name of the editing area and the id of what describes it. */
  label: string;
  describedBy?: string;
  onChange(text: string): void;
}

export interface ScriptEditor {
  text(): string;
  setText(text: string): void;
  setLanguage(language: string): void;
  focus(): void;
}

function create(parent: HTMLElement, options: EditorOptions): ScriptEditor {
  const language = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        ...editorBasics(options),
        indentOnInput(),
        language.of(grammar(options.language)),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    text: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setLanguage: (name) => view.dispatch({ effects: language.reconfigure(grammar(name)) }),
    focus: () => view.focus(),
  };
}

(window as unknown as { svcEditor: unknown }).svcEditor = { create, renderDiff };
