import { workspaceImports } from '../core/dependencies/workspace-imports.js';
import type { Language } from '../ports.js';
import type { Change } from './plan.js';

/**
 * Scripts a push creates, in waves such that a script importing another of the same push
 * (docs/workspace-imports.md) is created after it: the server resolves an import when the
 * importer is created, so on a fresh workspace the helper must exist by then. Imports the CLI
 * cannot read, and cycles (which the server refuses), leave the order as it is.
 */
export function importWaves(changes: Change[]): Change[][] {
  const byId = new Map(changes.map((c) => [c.id, c]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    let d = 0;
    for (const dep of importsOf(byId.get(id))) if (byId.has(dep) && dep !== id) d = Math.max(d, depthOf(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  const waves: Change[][] = [];
  for (const change of changes) (waves[depthOf(change.id)] ??= []).push(change);
  return waves.filter((w) => w !== undefined);
}

function importsOf(change: Change | undefined): string[] {
  const payload = change?.local?.payload;
  if (!payload || typeof payload.content !== 'string' || typeof payload.language !== 'string') return [];
  try {
    return workspaceImports(payload.language as Language, change.id, payload.content).map((i) => i.path);
  } catch {
    return [];
  }
}
