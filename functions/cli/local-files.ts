import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { FOLDER_ITEM } from './layout.js';
import type { EffectiveOptions } from './config.js';

/** The project directory as the sync sees it: relative POSIX paths, minus what is never synced. */

/** Never part of a workspace: VCS, dependencies, the sync state, the config itself. */
const NEVER = new Set(['.git', 'node_modules', '.svc-sync']);
const ROOT_FILES_NEVER = new Set(['svc.yaml', 'wmill.yaml', 'wmill-lock.yaml', 'package.json', 'package-lock.json', 'tsconfig.json']);

export function listLocalFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (NEVER.has(entry.name)) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(relative(root, full).split(sep).join('/'));
    }
  };
  walk(root);
  return out.filter((f) => !ROOT_FILES_NEVER.has(f)).sort();
}

export function readLocal(root: string, file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

/**
 * `includes` (default: everything) plus `extraIncludes`, minus `excludes`. They apply to the
 * workspace paths (`u/...`, `f/...`); workspace-wide kinds (resource types, groups, users, settings,
 * the key) follow their own flags only.
 */
export function scopeFilter(options: EffectiveOptions): (files: string[]) => boolean {
  const includes = [...(options.includes ?? ['**']), ...(options.extraIncludes ?? [])];
  const isIncluded = picomatch(includes, { dot: true });
  const isExcluded = options.excludes?.length ? picomatch(options.excludes, { dot: true }) : () => false;
  return (files) => {
    const pathFiles = files.filter((f) => f.startsWith('u/') || f.startsWith('f/'));
    if (pathFiles.length === 0) return true;
    return pathFiles.some((f) => isIncluded(f)) && !pathFiles.some((f) => isExcluded(f));
  };
}

/**
 * Kinds of the spec this server does not have. Their files are recognised so that they are never
 * mistaken for other items, never deleted, and, unless svc.yaml skips (or does not include) them,
 * reported as left alone.
 */
const UNSUPPORTED: { label: string; flag: keyof EffectiveOptions; wanted: (o: EffectiveOptions) => boolean; match: (f: string) => boolean }[] = [
  { label: 'raw apps', flag: 'skipApps', wanted: (o) => !o.skipApps, match: (f) => FOLDER_ITEM.exec(f)?.[2] === 'raw_app' },
  // HTTP routes (`*.http_trigger.yaml`) and schedules sync (kinds/triggers.ts); the other trigger kinds do not exist here.
  { label: 'triggers other than HTTP routes', flag: 'includeTriggers', wanted: (o) => o.includeTriggers === true, match: (f) => /_trigger\.yaml$/.test(f) && !f.endsWith('.http_trigger.yaml') },
  { label: 'workspace dependencies', flag: 'skipWorkspaceDependencies', wanted: (o) => !o.skipWorkspaceDependencies, match: (f) => f.startsWith('dependencies/') },
  { label: 'DMN decision tables', flag: 'skipDmn', wanted: (o) => !o.skipDmn, match: (f) => f.endsWith('.dmn') || f.endsWith('.dmn.yaml') },
  { label: 'data migrations', flag: 'skipDataMigrations', wanted: (o) => !o.skipDataMigrations, match: (f) => f.startsWith('data_migrations/') },
];

/**
 * Splits off the files of unsupported kinds, with a warning for each kind svc.yaml wants synced,
 * and each file by path and reason.
 */
export function setAsideUnsupported(files: string[], options: EffectiveOptions): { rest: string[]; warnings: string[]; skipped: { path: string; reason: string }[] } {
  const warnings: string[] = [];
  const skipped: { path: string; reason: string }[] = [];
  let rest = files;
  for (const kind of UNSUPPORTED) {
    const matched = rest.filter(kind.match);
    if (matched.length === 0) continue;
    rest = rest.filter((f) => !kind.match(f));
    const reason = kind.wanted(options) ? `this server has no ${kind.label}` : `${kind.label}: not synced (${kind.flag}: ${kind.flag.startsWith('skip')})`;
    for (const path of matched) skipped.push({ path, reason });
    if (kind.wanted(options)) {
      const sample = matched.slice(0, 3).join(', ') + (matched.length > 3 ? ', ...' : '');
      warnings.push(`this server has no ${kind.label}: ${matched.length} file(s) left alone (${sample}); set ${kind.flag}: ${kind.flag.startsWith('skip')} to stop this warning`);
    }
  }
  return { rest, warnings, skipped };
}
