/**
 * What every code editor of the console has, whatever it edits: the CSP nonce of its styles, line
 * numbers, history, highlighting, the keymap (Tab indents; Escape then Tab leaves the editor with
 * the keyboard), a label for screen readers, and typing over a selection.
 */
import type { Extension } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { replaceSelectionOnInput } from './replace-selection.js';

export interface EditorBasics {
  nonce: string;
  label: string;
  describedBy?: string;
}

export function editorBasics(options: EditorBasics): Extension[] {
  return [
    EditorView.cspNonce.of(options.nonce),
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightActiveLine(),
    drawSelection(),
    history(),
    bracketMatching(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    EditorView.contentAttributes.of({ 'aria-label': options.label, ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}) }),
    EditorView.lineWrapping,
    replaceSelectionOnInput,
  ];
}
