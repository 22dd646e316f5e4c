import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONFIG_FILE, effectiveOptions, loadConfig, specificItemsOf, workspaceEntries, WINDMILL_CONFIG_FILE } from './config.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { Remote } from './remote.js';
import { readLocalSide } from './sync.js';
import { INVALID } from './plan.js';
import { scriptsWithoutLock } from './kinds/scripts.js';
import type { Item, SyncContext } from './items.js';
import type { Io } from './io.js';

/**
 * `svc migrate <folder>`: what a push of a folder (a Windmill workspace folder, or svc's own)
 * would move, read from the files alone, without a server: per kind the items that move, the
 * scripts that need a dependency lock, and what is skipped and why (docs/windmill.md).
 */

export interface MigrationKind {
  kind: string;
  moves: string[];
  needsLock: string[];
  skipped: { path: string; reason: string }[];
}

export interface MigrationReport {
  folder: string;
  /** The file the options came from: svc.yaml, wmill.yaml, or none (the defaults). */
  config: string | null;
  kinds: MigrationKind[];
  /** Files that describe no valid item: they would stop nothing but would not move either. */
  errors: string[];
  warnings: string[];
}

export async function migrationReport(folder: string): Promise<MigrationReport> {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new CliError(EXIT.usage, `${folder}: not a folder`);
  const loaded = loadConfig(folder);
  const config = existsSync(resolve(folder, CONFIG_FILE)) ? CONFIG_FILE : existsSync(resolve(folder, WINDMILL_CONFIG_FILE)) ? WINDMILL_CONFIG_FILE : null;
  const options = effectiveOptions(loaded.config, undefined);
  const warnings = [...loaded.warnings];
  const skipped: { path: string; reason: string }[] = [];
  const ctx: SyncContext = {
    // Only the files are read: the report never reaches a server.
    remote: new Remote({ baseUrl: 'http://migrate.invalid', workspaceId: 'migrate', token: '' }),
    options,
    root: folder,
    codebases: loaded.config.codebases ?? [],
    layout: {
      nonDottedPaths: options.nonDottedPaths ?? false,
      defaultTs: options.defaultTs ?? 'bun',
      workspaceName: null,
      workspaceNames: workspaceEntries(loaded.config).map((e) => e.name),
      specific: specificItemsOf(loaded.config, undefined),
    },
    warn: (m) => warnings.push(m),
    skip: (path, reason) => skipped.push({ path, reason }),
  };
  const local = await readLocalSide(ctx);
  const items = [...local.local.values()].filter((i): i is Item => i !== INVALID);
  const needsLock = new Set(scriptsWithoutLock(items));
  const kinds = new Map<string, MigrationKind>();
  const kindOf = (kind: string) => kinds.get(kind) ?? kinds.set(kind, { kind, moves: [], needsLock: [], skipped: [] }).get(kind)!;
  for (const item of items) {
    const k = kindOf(item.kind);
    k.moves.push(item.id);
    if (item.kind === 'script' && needsLock.has(item.id)) k.needsLock.push(item.id);
  }
  for (const s of skipped) kindOf(kindOfFile(s.path)).skipped.push(s);
  const sorted = [...kinds.values()].sort((a, b) => a.kind.localeCompare(b.kind));
  for (const k of sorted) k.moves.sort();
  return { folder, config, kinds: sorted, errors: local.fileErrors.map((e) => e.message), warnings: [...warnings, ...local.warnings] };
}

/** The kind a skipped file belongs to, by Windmill's file names. */
function kindOfFile(file: string): string {
  const rules: [RegExp, string][] = [
    [/(\.|__)flow\//, 'flow'],
    [/(\.|__)app\//, 'app'],
    [/(\.|__)raw_app\//, 'raw_app'],
    [/\.script\.(yaml|lock)$/, 'script'],
    [/\.schedule\.yaml$/, 'schedule'],
    [/\.http_trigger\.yaml$/, 'http_trigger'],
    [/_trigger\.yaml$/, 'trigger'],
    [/\.resource\.yaml$/, 'resource'],
    [/\.variable\.yaml$/, 'variable'],
    [/\.resource-type\.yaml$/, 'resource_type'],
    [/folder\.meta\.yaml$/, 'folder'],
  ];
  return rules.find(([re]) => re.test(file))?.[1] ?? 'other';
}

export async function migrateCommand(folder: string, opts: { jsonOutput: boolean }, io: Io): Promise<ExitCode> {
  const report = await migrationReport(resolve(io.cwd, folder));
  const code = report.errors.length ? EXIT.failed : EXIT.ok;
  if (opts.jsonOutput) {
    io.out(JSON.stringify({ ...report, exitCode: code }, null, 2));
    return code;
  }
  for (const w of report.warnings) io.err(`warning: ${w}`);
  io.out(`${report.folder} (options from ${report.config ?? 'the defaults: no svc.yaml or wmill.yaml'})`);
  io.out(table(['kind', 'moves', 'needs a lock', 'skipped'], report.kinds.map((k) => [k.kind, String(k.moves.length), String(k.needsLock.length), String(k.skipped.length)])));
  const locks = report.kinds.flatMap((k) => k.needsLock);
  if (locks.length) io.out(`\nneeds a dependency lock (<path>.script.lock, or lock: in .script.yaml):\n${locks.map((p) => `  ${p}`).join('\n')}`);
  const skipped = report.kinds.flatMap((k) => k.skipped);
  if (skipped.length) io.out(`\nskipped (svc cannot represent these; they are left out):\n${skipped.map((s) => `  ${s.path}: ${s.reason}`).join('\n')}`);
  if (report.errors.length) io.out(`\nerrors (these files would not move):\n${report.errors.map((e) => `  ${e}`).join('\n')}`);
  return code;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
