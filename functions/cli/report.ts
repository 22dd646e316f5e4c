import { createTwoFilesPatch } from 'diff';
import type { Change, Plan } from './plan.js';
import type { Paint } from './io.js';

/** The summary a sync shows before it acts: `+`/`-`/`~` per item with its kind and path, a diff for edits. */

const label = (kind: string) => kind.replace('_', ' ');

/** Files before and after the change, from the side being changed to the side being applied. */
function filesOf(change: Change, direction: Plan['direction']): [Record<string, string>, Record<string, string>] {
  const remote = change.remote?.item.files ?? {};
  // A pull writes the files the item left out: there they are new files.
  return direction === 'push' ? [remote, localFiles(change)] : [change.local?.files ?? {}, remote];
}

/** The local item's files, with the ones it leaves out as what they mean (a push sends that). */
const localFiles = (change: Change): Record<string, string> => ({ ...change.local?.defaults, ...change.local?.files });

function isSecret(change: Change): boolean {
  return change.kind === 'variable' && [change.local?.payload.is_secret, change.remote?.item.payload.is_secret].includes(true);
}

export function diffOf(change: Change, direction: Plan['direction']): string {
  const [before, after] = filesOf(change, direction);
  return filesDiff(change, before, after, ['', '']);
}

/** `remote/` against `local/`: what the workspace has, and what the files say. */
export function conflictDiff(change: Change): string {
  return filesDiff(change, change.remote?.item.files ?? {}, localFiles(change), ['remote/', 'local/']);
}

function filesDiff(change: Change, before: Record<string, string>, after: Record<string, string>, [from, to]: [string, string]): string {
  if (isSecret(change)) return '    (secret variable: diff not shown)\n';
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .filter((f) => before[f] !== after[f])
    .map((f) => {
      const patch = createTwoFilesPatch(before[f] === undefined ? '/dev/null' : from + f, after[f] === undefined ? '/dev/null' : to + f, before[f] ?? '', after[f] ?? '', '', '', { context: 2 });
      return patch
        .split('\n')
        .filter((line) => !line.startsWith('====') && !line.startsWith('Index:') && line !== '\\ No newline at end of file')
        .filter((line, i, all) => line !== '' || i < all.length - 1)
        .map((line) => `    ${line}`)
        .join('\n');
    })
    .join('\n')
    .concat('\n');
}

export const RESOLVE_HINT = `to resolve a conflict (the diff goes from the workspace, remote/, to your files, local/):
  keep your files:       edit them to what should win, then svc sync push --force
  take the workspace's:  svc sync pull --force (overwrites the local files of the conflicting items)`;

export function changeLine(change: Change): string {
  return `${change.op} ${label(change.kind)} ${change.id}`;
}

export function summaryText(plan: Plan, showDiffs: boolean): string {
  const lines: string[] = [];
  for (const change of plan.changes) {
    lines.push(changeLine(change) + (change.conflict ? '  (forced over a conflicting change)' : ''));
    if (showDiffs && change.op === '~') lines.push(diffOf(change, plan.direction).trimEnd());
  }
  for (const c of plan.conflicts) {
    lines.push(`! conflict: ${label(c.kind)} ${c.id} changed locally and remotely since the last sync`);
    if (showDiffs) lines.push(conflictDiff(c).trimEnd());
  }
  if (plan.conflicts.length) lines.push(RESOLVE_HINT);
  return lines.join('\n');
}

export function changeJson(change: Change) {
  return { op: change.op, kind: change.kind, path: change.id, conflict: change.conflict };
}

/** Colours a summary for a terminal: additions green, deletions red, edits yellow, conflicts bold red. */
export function colourize(text: string, paint: Paint): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('! ')) return paint.bold(paint.red(line));
      if (/^\+ |^ {4}\+(?!\+\+)/.test(line)) return paint.green(line);
      if (/^- |^ {4}-(?!--)/.test(line)) return paint.red(line);
      if (line.startsWith('~ ')) return paint.yellow(line);
      if (line.startsWith('    @@')) return paint.dim(line);
      return line;
    })
    .join('\n');
}
