import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { svcYaml, type SpecificItems, type SvcYaml, type SyncOptions, type WorkspaceEntry, type WorkspaceMap } from './config-schema.js';
import { CliError, EXIT } from './errors.js';

export const CONFIG_FILE = 'svc.yaml';
/** Windmill's own name for the same file (docs/windmill.md): read when there is no svc.yaml. */
export const WINDMILL_CONFIG_FILE = 'wmill.yaml';

/** The options a sync runs with, after defaults, the workspace entry's overrides and promotion. */
export type EffectiveOptions = Omit<SyncOptions, 'skipSecrets'> & { skipSecrets: boolean };

/** A workspace entry with its defaults filled in (spec 2.9: gitBranch and workspaceId default to the name). */
export interface ResolvedWorkspace {
  name: string;
  gitBranch: string;
  workspaceId: string;
  baseUrl?: string;
  entry: WorkspaceEntry;
}

export interface LoadedConfig {
  config: SvcYaml;
  /** Whether an svc.yaml was found (without one, the defaults apply). */
  found: boolean;
  warnings: string[];
}

/**
 * Reads and strictly validates `svc.yaml` in `dir`, or else a Windmill folder's `wmill.yaml` with
 * the same schema and meaning; when both are there svc.yaml wins and the CLI says so. No file
 * means all defaults.
 */
export function loadConfig(dir: string): LoadedConfig {
  const svc = join(dir, CONFIG_FILE);
  const wmill = join(dir, WINDMILL_CONFIG_FILE);
  if (existsSync(svc)) {
    const loaded = parseConfig(readFileSync(svc, 'utf8'));
    if (existsSync(wmill)) loaded.warnings.push(`both ${CONFIG_FILE} and ${WINDMILL_CONFIG_FILE} are here: ${CONFIG_FILE} wins, ${WINDMILL_CONFIG_FILE} is not read`);
    return loaded;
  }
  if (existsSync(wmill)) {
    const loaded = parseConfig(readFileSync(wmill, 'utf8'), WINDMILL_CONFIG_FILE);
    loaded.warnings.unshift(`no ${CONFIG_FILE} here: reading ${WINDMILL_CONFIG_FILE} as one`);
    return loaded;
  }
  return { config: {}, found: false, warnings: [] };
}

export function parseConfig(text: string, name: string = CONFIG_FILE): LoadedConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (e) {
    throw new CliError(EXIT.usage, `${name}: not valid YAML: ${(e as Error).message}`);
  }
  const parsed = svcYaml.safeParse(raw);
  if (!parsed.success) throw new CliError(EXIT.usage, `${name} is invalid:\n${parsed.error.issues.map(describeIssue).join('\n')}`);
  const warnings: string[] = [];
  for (const old of ['gitBranches', 'environments'] as const) {
    if (parsed.data[old]) warnings.push(`${name}: ${old} is deprecated; rename it to workspaces (it means the same)`);
  }
  return { config: parsed.data, found: true, warnings };
}

/** One line per problem, naming where it is: `workspaces.staging.foo: unknown property`. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const at = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => `  ${at ? `${at}.${k}` : k}: unknown property`).join('\n');
  }
  return `  ${at || '(top level)'}: ${issue.message}`;
}

/** `workspaces`, or the deprecated `gitBranches` / `environments` it replaces (same meaning). */
export function workspaceMapOf(config: SvcYaml): WorkspaceMap {
  return { ...config.environments, ...config.gitBranches, ...config.workspaces };
}

export function workspaceEntries(config: SvcYaml): ResolvedWorkspace[] {
  const { commonSpecificItems: _common, ...entries } = workspaceMapOf(config);
  return Object.entries(entries).map(([name, entry]) => ({
    name,
    gitBranch: entry?.gitBranch ?? name,
    workspaceId: entry?.workspaceId ?? name,
    baseUrl: entry?.baseUrl,
    entry: entry ?? {},
  }));
}

/**
 * The entry a sync uses: the one named by `--workspace`, else the one whose gitBranch is the
 * current git branch.
 */
export function selectWorkspace(config: SvcYaml, opts: { name?: string; gitBranch?: string | null }): ResolvedWorkspace | undefined {
  const entries = workspaceEntries(config);
  if (opts.name) return entries.find((e) => e.name === opts.name);
  if (opts.gitBranch) return entries.find((e) => e.gitBranch === opts.gitBranch);
  return undefined;
}

/**
 * Unless `skipBranchValidation`, a project that configures workspaces may only be synced from a git
 * branch one of them names (outside a git repository there is no branch to check).
 */
export function validateBranch(config: SvcYaml, options: EffectiveOptions, gitBranch: string | null): void {
  const entries = workspaceEntries(config);
  if (options.skipBranchValidation || gitBranch === null || entries.length === 0) return;
  if (!entries.some((e) => e.gitBranch === gitBranch)) {
    throw new CliError(
      EXIT.usage,
      `the current git branch ${gitBranch} is not configured in ${CONFIG_FILE} (workspaces: ${entries.map((e) => `${e.name} -> branch ${e.gitBranch}`).join(', ')}); ` +
        'add it, switch branch, or set skipBranchValidation: true',
    );
  }
}

/**
 * Top-level options, then the selected entry's `overrides`, then, with a promotion branch (the
 * `--promotion` flag or the `promotion` option), that branch's entry's `promotionOverrides`.
 */
export function effectiveOptions(config: SvcYaml, selected: ResolvedWorkspace | undefined, promotionFlag?: string): EffectiveOptions {
  const { codebases: _c, workspaces: _w, gitBranches: _g, environments: _e, ...top } = config;
  let options: SyncOptions = { ...top, ...selected?.entry.overrides };
  const promotion = promotionFlag ?? options.promotion;
  if (promotion) {
    const target = workspaceEntries(config).find((e) => e.gitBranch === promotion || e.name === promotion);
    if (!target) throw new CliError(EXIT.usage, `promotion: no workspace in ${CONFIG_FILE} has git branch ${promotion}`);
    options = { ...options, ...target.entry.promotionOverrides };
  }
  return { ...options, skipSecrets: options.skipSecrets ?? true };
}

/** The selected entry's specificItems merged with commonSpecificItems. */
export function specificItemsOf(config: SvcYaml, selected: ResolvedWorkspace | undefined): SpecificItems {
  const common = workspaceMapOf(config).commonSpecificItems ?? {};
  const own = selected?.entry.specificItems ?? {};
  const merge = (k: 'variables' | 'resources' | 'triggers' | 'folders') => [...(common[k] ?? []), ...(own[k] ?? [])];
  return {
    variables: merge('variables'),
    resources: merge('resources'),
    triggers: merge('triggers'),
    folders: merge('folders'),
    settings: own.settings ?? common.settings ?? false,
  };
}
