import { diffLines } from 'diff';

/** Unchanged stretches longer than this show their first and last lines and a count between. */
const CONTEXT = 3;

/**
 * The line diff of two versions as a table: a sign column (+, -, or blank, so the change is not
 * told by colour alone), the old and new line numbers and the line. Text only, never HTML.
 */
export function renderDiff(container: HTMLElement, before: string, after: string, caption: string): { added: number; removed: number } {
  const table = document.createElement('table');
  table.className = 'diff';
  table.createCaption().textContent = caption;
  const body = table.createTBody();
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  const row = (kind: 'add' | 'del' | 'same' | 'skip', sign: string, oldNo: string, newNo: string, text: string) => {
    const tr = body.insertRow();
    tr.className = kind;
    for (const [cell, value] of [['sign', sign], ['no', oldNo], ['no', newNo], ['line', text]] as const) {
      const td = tr.insertCell();
      td.className = cell;
      td.textContent = value;
    }
  };
  for (const part of diffLines(before, after)) {
    const lines = part.value.replace(/\n$/, '').split('\n');
    if (part.added) {
      for (const line of lines) row('add', '+', '', String(newLine++), line);
      added += lines.length;
    } else if (part.removed) {
      for (const line of lines) row('del', '-', String(oldLine++), '', line);
      removed += lines.length;
    } else {
      lines.forEach((line, i) => {
        const hidden = lines.length > CONTEXT * 2 + 1 && i >= CONTEXT && i < lines.length - CONTEXT;
        if (hidden && i === CONTEXT) row('skip', '', '', '', `… ${lines.length - CONTEXT * 2} unchanged lines`);
        if (!hidden) row('same', '', String(oldLine), String(newLine), line);
        oldLine++;
        newLine++;
      });
    }
  }
  if (added === 0 && removed === 0) row('same', '', '', '', 'No differences.');
  container.replaceChildren(table);
  return { added, removed };
}
