import { stringify } from 'yaml';
import picomatch from 'picomatch';
import type { SpecificItems } from './config-schema.js';

/**
 * Where each item lives on disk (Windmill's layout): scripts as `<path><ext>` beside
 * `<path>.script.yaml` (and `<path>.script.lock`), flows as a `<path>.flow/` folder (`__flow` with
 * nonDottedPaths), resources `<path>.resource.yaml`, variables `<path>.variable.yaml`, resource
 * types `<name>.resource-type.yaml`, folders `f/<name>/folder.meta.yaml`. Workspace-specific items
 * put the workspace name before the type: `<path>.<workspace>.resource.yaml`.
 */

export type TsRuntime = 'bun' | 'deno';
export type ScriptLanguage = 'bun' | 'deno' | 'nativets' | 'python3' | 'bash' | 'go';

export interface Layout {
  nonDottedPaths: boolean;
  defaultTs: TsRuntime;
  /** The selected workspace entry's name; specific items of other workspaces are never synced. */
  workspaceName: string | null;
  /** Every workspace name of svc.yaml, to recognise other workspaces' specific files. */
  workspaceNames: string[];
  specific: SpecificItems;
}

/** The folder suffix of a flow (or app) item: `.flow` or `__flow`. */
export function folderSuffix(layout: Pick<Layout, 'nonDottedPaths'>, kind: 'flow' | 'app' | 'raw_app'): string {
  return layout.nonDottedPaths ? `__${kind}` : `.${kind}`;
}

/** Both spellings are recognised when reading, so switching nonDottedPaths does not lose items. */
export const FOLDER_ITEM = /^(.*?)(?:\.|__)(flow|app|raw_app)\/(.+)$/;

export function scriptExtension(language: ScriptLanguage, defaultTs: TsRuntime): string {
  switch (language) {
    case 'bun':
      return defaultTs === 'bun' ? '.ts' : '.bun.ts';
    case 'deno':
      return defaultTs === 'deno' ? '.ts' : '.deno.ts';
    case 'nativets':
      return '.native.ts';
    case 'python3':
      return '.py';
    case 'bash':
      return '.sh';
    case 'go':
      return '.go';
  }
}

/** The language of a script file, or null when the name is not a script's. Longest suffix first. */
export function languageOfFile(file: string, defaultTs: TsRuntime): { language: ScriptLanguage; base: string } | null {
  const suffixes: [string, ScriptLanguage][] = [
    ['.native.ts', 'nativets'],
    ['.bun.ts', 'bun'],
    ['.deno.ts', 'deno'],
    ['.ts', defaultTs],
    ['.py', 'python3'],
    ['.sh', 'bash'],
    ['.go', 'go'],
  ];
  for (const [suffix, language] of suffixes) {
    if (file.endsWith(suffix)) return { language, base: file.slice(0, -suffix.length) };
  }
  return null;
}

/** `u/<user>/<name>` or `f/<folder>/<name>`, as the server requires (core/common/paths.ts). */
export function isItemPath(path: string): boolean {
  const parts = path.split('/');
  return parts.length >= 3 && (parts[0] === 'u' || parts[0] === 'f') && parts.slice(1).every((s) => /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/.test(s));
}

export type SpecificType = 'variables' | 'resources' | 'triggers' | 'folders';

/** Whether the item belongs to the selected workspace's specific items. */
export function isSpecific(layout: Layout, type: SpecificType, key: string): boolean {
  const patterns = layout.specific[type] ?? [];
  return layout.workspaceName !== null && patterns.length > 0 && picomatch.isMatch(key, patterns, { dot: true });
}

/**
 * `<base>.<type>.yaml`, or `<base>.<workspace>.<type>.yaml` for a workspace-specific item.
 * `type` may be empty (`settings.yaml` -> `settings.<workspace>.yaml`).
 */
export function typedFile(layout: Layout, base: string, type: string, specific: boolean): string {
  const middle = specific ? `.${layout.workspaceName}` : '';
  return `${base}${middle}${type ? `.${type}` : ''}.yaml`;
}

/**
 * Reads `<base>[.<workspace>].<type>.yaml`: the base path and which workspace's file it is (null:
 * the common one). A middle segment counts as a workspace only when svc.yaml names that workspace.
 */
export function parseTypedFile(layout: Layout, file: string, type: string): { base: string; workspace: string | null } | null {
  const suffix = `.${type}.yaml`;
  if (!file.endsWith(suffix)) return null;
  const stem = file.slice(0, -suffix.length);
  const dot = stem.lastIndexOf('.');
  const slash = stem.lastIndexOf('/');
  if (dot > slash) {
    const ws = stem.slice(dot + 1);
    if (layout.workspaceNames.includes(ws)) return { base: stem.slice(0, dot), workspace: ws };
  }
  return { base: stem, workspace: null };
}

/**
 * YAML with the top-level keys in `order` (the rest after, sorted) and nested values as the server
 * stores them: the same item always gives the same bytes, so diffs stay small.
 */
export function toYaml(value: Record<string, unknown>, order: string[]): string {
  const keys = [...order.filter((k) => k in value), ...Object.keys(value).filter((k) => !order.includes(k)).sort()];
  const ordered = Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));
  return stringify(ordered, { lineWidth: 0 });
}
