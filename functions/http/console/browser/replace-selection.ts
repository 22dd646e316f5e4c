import { EditorView } from '@codemirror/view';

/**
 * Typing over a selection that spans lines is left to the browser by CodeMirror, and Chrome's
 * contenteditable then keeps the look of the joined lines in `style` attributes, which the page's
 * CSP refuses (and reports). Replacing the selection here instead gives the same edit with no
 * inline style. Composition (IME) input is left alone: it is not cancelable.
 */
export const replaceSelectionOnInput = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.isComposing || event.inputType !== 'insertText' || event.data === null) return false;
    if (view.state.selection.ranges.every((range) => range.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.replaceSelection(event.data), { userEvent: 'input.type', scrollIntoView: true });
    return true;
  },
});
